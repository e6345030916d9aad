import fs from 'node:fs';
import readline from 'node:readline';
import { EventKind, EventSubmission, IngestStatus, RejectCode, Role } from './event.types';
import { IngestLimits, validateSubmission } from './event-validation';

export interface ImportItemResult {
  status: IngestStatus;
  code?: string | null;
  reason?: string | null;
}

/** Sends one batch (e.g. `ingestEvents` over HTTP); results in input order. */
export type SendBatch = (events: EventSubmission[]) => Promise<ImportItemResult[]>;

export interface ImportSummary {
  lines: number;
  created: number;
  duplicate: number;
  rejected: Array<{ line: number; code: string; reason: string }>;
}

export interface ImportOptions {
  batchSize: number;
  limits: IngestLimits;
  /** Called after each batch with bytes read so far. */
  onProgress?: (bytesRead: number, summary: ImportSummary) => void;
}

const KIND_NAME = new Map(Object.entries(EventKind).map(([name, value]) => [value as string, name]));
const ROLE_NAME = new Map(Object.entries(Role).map(([name, value]) => [value as string, name]));

/** EventInput wants enum names (MESSAGE); files may hold either names or stored values (message). */
function toGraphQLNames(e: EventSubmission): EventSubmission {
  const kind = KIND_NAME.get(String(e.kind)) ?? e.kind;
  const role = e.role === undefined || e.role === null ? e.role : (ROLE_NAME.get(String(e.role)) ?? e.role);
  return { ...e, kind, role };
}

/**
 * Imports a JSONL file (one EventInput per line) in batches. Lines that are not JSON objects or
 * fail validation are reported with their line numbers and never sent; the rest go through
 * `send`. Safe to re-run: the server answers DUPLICATE for what it already has. Blank lines are
 * skipped.
 */
export async function importJsonl(file: string, send: SendBatch, opts: ImportOptions): Promise<ImportSummary> {
  const summary: ImportSummary = { lines: 0, created: 0, duplicate: 0, rejected: [] };
  const stream = fs.createReadStream(file, { encoding: 'utf8' });
  const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
  let batch: Array<{ line: number; event: EventSubmission }> = [];

  const flush = async () => {
    if (batch.length === 0) return;
    const results = await send(batch.map((b) => toGraphQLNames(b.event)));
    results.forEach((r, i) => {
      const line = (batch[i] as { line: number }).line;
      if (r.status === IngestStatus.CREATED) summary.created += 1;
      else if (r.status === IngestStatus.DUPLICATE) summary.duplicate += 1;
      else summary.rejected.push({ line, code: r.code ?? 'REJECTED', reason: r.reason ?? '' });
    });
    batch = [];
    opts.onProgress?.(stream.bytesRead, summary);
  };

  for await (const text of lines) {
    summary.lines += 1;
    const line = summary.lines;
    if (text.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      summary.rejected.push({ line, code: 'INVALID_JSON', reason: `not valid JSON: ${(err as Error).message}` });
      continue;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      summary.rejected.push({ line, code: RejectCode.INVALID_FIELD, reason: 'each line must be one JSON object (an EventInput)' });
      continue;
    }
    const event = parsed as EventSubmission;
    const v = validateSubmission(event, opts.limits, new Date());
    if (!v.ok) {
      summary.rejected.push({ line, code: v.code, reason: v.reason });
      continue;
    }
    batch.push({ line, event });
    if (batch.length >= opts.batchSize) await flush();
  }
  await flush();
  opts.onProgress?.(stream.bytesRead, summary);
  summary.rejected.sort((a, b) => a.line - b.line);
  return summary;
}
