import fs from 'node:fs';
import path from 'node:path';
import { SingleBar, Presets } from 'cli-progress';
import { AppConfig } from '../common/config';
import { IngestEventsDocument, IngestEventsMutationVariables } from '../client/generated/graphql';
import { MemoryClient, MemoryClientError } from '../client/memory-client';
import { EventSubmission, IngestStatus } from './event.types';
import { ImportItemResult, importJsonl, ImportSummary } from './jsonl-import';


export interface ImportCommandOptions {
  url: string;
  token?: string;
  batchSize: string;
}

function resolveToken(config: AppConfig, given: string | undefined): string {
  const token = given ?? process.env.MEDALLION_TOKEN;
  if (token) return token;
  const file = path.join(config.dataDir, 'admin.token');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  throw new Error(`no API token: pass --token, set MEDALLION_TOKEN, or run the service once so ${file} exists`);
}

/** Sends batches to a running service's `ingestEvents` through the typed client. */
function httpSender(url: string, token: string) {
  const client = new MemoryClient({ url, token });
  return async (events: EventSubmission[]): Promise<ImportItemResult[]> => {
    try {
      const data = await client.request(IngestEventsDocument, { input: events as IngestEventsMutationVariables['input'] });
      return data.ingestEvents.map((r) => ({ status: r.status as IngestStatus, code: r.code, reason: r.reason }));
    } catch (err) {
      const code = err instanceof MemoryClientError && err.code ? `${err.code}: ` : '';
      throw new Error(`the service refused a batch (${code}${(err as Error).message}); lines before it are stored, and re-running is safe`);
    }
  };
}

/** `medallion ingest FILE.jsonl`: imports with a progress bar and prints a summary. Exit 3 when lines were rejected. */
export async function runImportCommand(config: AppConfig, file: string, o: ImportCommandOptions): Promise<number> {
  const batchSize = Number(o.batchSize);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > config.limits.maxBatchSize) {
    throw new Error(`--batch-size must be an integer between 1 and ${config.limits.maxBatchSize}`);
  }
  if (!fs.existsSync(file)) throw new Error(`no such file: ${file}`);
  const total = fs.statSync(file).size;
  const bar = new SingleBar(
    { format: 'ingest |{bar}| {percentage}% | {value}/{total} bytes | created {created} duplicate {duplicate} rejected {rejected}', stream: process.stderr, hideCursor: true },
    Presets.shades_classic,
  );
  bar.start(total, 0, { created: 0, duplicate: 0, rejected: 0 });
  let summary: ImportSummary;
  try {
    summary = await importJsonl(file, httpSender(o.url, resolveToken(config, o.token)), {
      batchSize,
      limits: config.limits,
      onProgress: (bytes, s) => bar.update(Math.min(bytes, total), { created: s.created, duplicate: s.duplicate, rejected: s.rejected.length }),
    });
  } finally {
    bar.stop();
  }
  process.stdout.write(`${file}: ${summary.lines} lines, ${summary.created} created, ${summary.duplicate} duplicate, ${summary.rejected.length} rejected\n`);
  for (const r of summary.rejected) process.stdout.write(`  line ${r.line}: ${r.code}: ${r.reason}\n`);
  return summary.rejected.length > 0 ? 3 : 0;
}
