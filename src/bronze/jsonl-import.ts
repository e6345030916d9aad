import { parseJsonExact } from '../common/exact-json';
import fs from 'node:fs';
import readline from 'node:readline';
import { EVENT_INPUT_FIELDS, EventKind, EventSubmission, IngestStatus, RejectCode, Role } from './event.types';
import { IngestLimits, validateSubmission } from './event-validation';

export interface ImportItemResult {
  status: IngestStatus;
  code?: string | null;
  reason?: string | null;
}

/**
 * Thrown by a sender when the service refused a request as a whole because of what it holds
 * (BAD_USER_INPUT, e.g. a value GraphQL cannot coerce): the importer then sends it again in
 * halves until each bad line stands alone, so it is reported by its number and the others stored.
 */
export class BatchInputError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'BatchInputError';
  }
}

const KNOWN_FIELDS = new Set(EVENT_INPUT_FIELDS);

/** Why a parsed line is not an EventInput the service would take, or undefined. */
function lineProblem(parsed: unknown, limits: IngestLimits): { code: string; reason: string } | undefined {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { code: RejectCode.INVALID_FIELD, reason: 'each line must be one JSON object (an EventInput)' };
  }
  const unknown = Object.keys(parsed).filter((k) => !KNOWN_FIELDS.has(k));
  if (unknown.length > 0) {
    return {
      code: 'UNKNOWN_FIELD',
      reason: `unknown field${unknown.length > 1 ? 's' : ''} ${unknown
        .slice(0, 5)
        .map((k) => JSON.stringify(k))
        .join(', ')}: an EventInput has ${EVENT_INPUT_FIELDS.join(', ')}`,
    };
  }
  const v = validateSubmission(parsed as EventSubmission, limits, new Date());
  return v.ok ? undefined : { code: v.code, reason: v.reason };
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
 * Imports a JSONL file (one EventInput per line) in batches. Lines that are not JSON objects,
 * name a field EventInput does not have, or fail validation are reported with their line numbers
 * and never sent; the rest go through `send`, and a line the service refuses is reported by its
 * file line number too. Every other line is still imported. Safe to re-run: the server answers DUPLICATE for what it already has. Blank lines are
 * skipped.
 */
export async function importJsonl(file: string, send: SendBatch, opts: ImportOptions): Promise<ImportSummary> {
  const summary: ImportSummary = { lines: 0, created: 0, duplicate: 0, rejected: [] };
  const stream = fs.createReadStream(file, { encoding: 'utf8' });
  const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
  let batch: Array<{ line: number; event: EventSubmission }> = [];

  const record = (line: number, r: ImportItemResult) => {
    if (r.status === IngestStatus.CREATED) summary.created += 1;
    else if (r.status === IngestStatus.DUPLICATE) summary.duplicate += 1;
    else summary.rejected.push({ line, code: r.code ?? 'REJECTED', reason: r.reason ?? '' });
  };
  const sendLines = async (items: Array<{ line: number; event: EventSubmission }>): Promise<void> => {
    try {
      const results = await send(items.map((b) => toGraphQLNames(b.event)));
      results.forEach((r, i) => record((items[i] as { line: number }).line, r));
    } catch (err) {
      if (!(err instanceof BatchInputError)) throw err;
      const [only] = items;
      if (items.length === 1 && only) summary.rejected.push({ line: only.line, code: err.code, reason: err.message });
      else {
        // Halve until the refused lines stand alone: a few requests per bad line, not one per line.
        const half = Math.ceil(items.length / 2);
        await sendLines(items.slice(0, half));
        await sendLines(items.slice(half));
      }
    }
  };
  const flush = async () => {
    if (batch.length === 0) return;
    await sendLines(batch);
    batch = [];
    opts.onProgress?.(stream.bytesRead, summary);
  };

  for await (const text of lines) {
    summary.lines += 1;
    const line = summary.lines;
    if (text.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = parseJsonExact(text);
    } catch (err) {
      summary.rejected.push({ line, code: 'INVALID_JSON', reason: `not valid JSON: ${(err as Error).message}` });
      continue;
    }
    const problem = lineProblem(parsed, opts.limits);
    if (problem) {
      summary.rejected.push({ line, ...problem });
      continue;
    }
    batch.push({ line, event: parsed as EventSubmission });
    if (batch.length >= opts.batchSize) await flush();
  }
  await flush();
  opts.onProgress?.(stream.bytesRead, summary);
  summary.rejected.sort((a, b) => a.line - b.line);
  return summary;
}
