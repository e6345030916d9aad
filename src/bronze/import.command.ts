import { stringifyExact } from '../common/exact-json';
import fs from 'node:fs';
import path from 'node:path';
import { SingleBar, Presets } from 'cli-progress';
import { AppConfig } from '../common/config';
import { CliError } from '../common/cli-error';
import { IngestEventsDocument, IngestEventsMutationVariables, MemoryClient, MemoryClientError } from '../../packages/client/src';
import { EventSubmission, IngestStatus } from './event.types';
import { BatchInputError, ImportItemResult, importJsonl, ImportSummary } from './jsonl-import';

export interface ImportCommandOptions {
  url: string;
  /** Works, but npm and shells echo command lines: prefer MEDALLION_TOKEN or --token-file. */
  token?: string;
  tokenFile?: string;
  batchSize: string;
}

export { CliError };

const readTokenFile = (file: string): string => {
  if (!fs.existsSync(file)) throw new CliError(`--token-file ${file}: no such file`);
  const token = fs.readFileSync(file, 'utf8').trim();
  if (!token) throw new CliError(`--token-file ${file} is empty`);
  return token;
};

/** --token-file, then --token, then MEDALLION_TOKEN, then the admin token the service wrote to DATA_DIR. */
export function resolveToken(config: AppConfig, o: Pick<ImportCommandOptions, 'token' | 'tokenFile'>): string {
  if (o.tokenFile) return readTokenFile(o.tokenFile);
  const token = o.token ?? config.cliToken;
  if (token) return token;
  const file = path.join(config.dataDir, 'admin.token');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  throw new CliError(`no API token: set MEDALLION_TOKEN, pass --token-file FILE, or run the service once so ${file} exists`);
}

/** Why the client could not reach the service (e.g. ECONNREFUSED), or undefined for other errors. */
export function networkCause(err: unknown): string | undefined {
  if (!(err instanceof MemoryClientError) || err.code !== 'NETWORK_ERROR') return undefined;
  // The client keeps fetch's error as the cause; its own cause names the socket error.
  const e = err.cause as { message?: unknown; cause?: { code?: unknown; message?: unknown } } | undefined;
  return [e?.cause?.code, e?.cause?.message, e?.message, err.message].find((v): v is string => typeof v === 'string');
}

/** Sends batches to a running service's `ingestEvents` through the typed client. */
function httpSender(url: string, token: string) {
  // Lines are parsed losslessly (jsonl-import.ts), so the body is written the same way.
  const client = new MemoryClient({ url, token, stringify: (body) => stringifyExact(body) ?? '{}' });
  return async (events: EventSubmission[]): Promise<ImportItemResult[]> => {
    try {
      const data = await client.request(IngestEventsDocument, { input: events as IngestEventsMutationVariables['input'] });
      return data.ingestEvents.map((r) => ({ status: r.status as IngestStatus, code: r.code, reason: r.reason }));
    } catch (err) {
      const unreachable = networkCause(err);
      if (unreachable) throw new CliError(`cannot reach the service at ${url} (${unreachable}): start it (npm start) or pass --url`);
      if (err instanceof MemoryClientError && (err.code === 'BAD_USER_INPUT' || err.code === 'GRAPHQL_VALIDATION_FAILED'))
        throw new BatchInputError(err.message, err.code);
      const code = err instanceof MemoryClientError ? `${err.code}: ` : '';
      throw new CliError(`the service at ${url} refused a batch (${code}${(err as Error).message}); lines before it are stored, and re-running is safe`);
    }
  };
}

/** `medallion ingest FILE.jsonl`: imports with a progress bar and prints a summary. Exit 3 when lines were rejected. */
export async function runImportCommand(config: AppConfig, file: string, o: ImportCommandOptions): Promise<number> {
  const batchSize = Number(o.batchSize);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > config.limits.maxBatchSize) {
    throw new CliError(`--batch-size must be an integer between 1 and ${config.limits.maxBatchSize}`);
  }
  if (!fs.existsSync(file)) throw new CliError(`no such file: ${file}`);
  const token = resolveToken(config, o);
  const total = fs.statSync(file).size;
  const bar = new SingleBar(
    {
      format: 'ingest |{bar}| {percentage}% | {value}/{total} bytes | created {created} duplicate {duplicate} rejected {rejected}',
      stream: process.stderr,
      hideCursor: true,
    },
    Presets.shades_classic,
  );
  bar.start(total, 0, { created: 0, duplicate: 0, rejected: 0 });
  let summary: ImportSummary;
  try {
    summary = await importJsonl(file, httpSender(o.url, token), {
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
