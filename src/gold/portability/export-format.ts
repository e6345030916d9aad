import fs from 'node:fs';
import readline from 'node:readline';
import { ChainKind, ChainLink, ChainRecord, CHAIN_KINDS, ErasureContext, Parts } from './chain';
import { OverlayTargetKeys } from './chain.repository';
import { RetentionCheckpoint } from './checkpoints';

/**
 * The export format (docs/operations.md "Export and import"): JSON Lines, UTF-8.
 * Line 1: `{"type":"header","format":"medallion-export","version":2,"namespace":NS}`.
 * Then the namespace's retention checkpoints, one `{"type":"checkpoint","checkpoint":{…}}` each.
 * Then one line per chain link, in chain order: `{"type": kind, "seq", "prev", "hash", "itemHash",
 * "parts", "item", "ctx", "map"?}`; `item` is the record as stored (an event verbatim with its
 * checksum and times, an overlay version, an approval log entry, a judge decision), or null for an
 * event Bronze retention dropped (`ctx.retained` names the checkpoint listing it), `ctx` what
 * erasures reached it, `map` (overlays) the idempotency keys of its event or of its fact's sources.
 * Last: `{"type":"end","links":N,"head":H,"checkpoints":K}`, so a file cut after a complete line is
 * told from a whole one. Version 1 files (before retention checkpoints) have neither.
 */
export const EXPORT_FORMAT = 'medallion-export';
export const EXPORT_VERSION = 2;

export interface ExportHeader {
  type: 'header';
  format: typeof EXPORT_FORMAT;
  version: number;
  namespace: string;
}

/** A checkpoint as a file carries it: what the database signed, without the verdict (a file cannot check the key). */
export type FileCheckpoint = Omit<RetentionCheckpoint, 'signatureValid'>;

export interface CheckpointLine {
  type: 'checkpoint';
  checkpoint: FileCheckpoint;
}

export interface ExportLine {
  type: ChainKind;
  seq: number;
  prev: string;
  hash: string;
  itemHash: string;
  parts: Parts;
  /** Null only for an event Bronze retention dropped (ctx.retained). */
  item: ChainRecord['item'] | null;
  /** For a dropped event: `retained`, the checkpoint listing it, and `itemId`, the event's id (the link's). */
  ctx: ErasureContext & { retained?: string; itemId?: string };
  map?: OverlayTargetKeys;
}

export interface EndLine {
  type: 'end';
  links: number;
  head: string | null;
  checkpoints: number;
}

/** A problem the person running the command can fix (bad file, wrong namespace): printed without a stack. */
export class PortabilityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PortabilityError';
  }
}

export interface Progress {
  start(total: number): void;
  update(done: number): void;
  stop(): void;
}

export const noProgress: Progress = { start: () => undefined, update: () => undefined, stop: () => undefined };

export function parseJsonLine(text: string, lineNo: number): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new PortabilityError(`line ${lineNo}: not JSON (${(err as Error).message})`);
  }
}

export function checkHeader(value: unknown, file: string): ExportHeader {
  const h = value as Partial<ExportHeader> | null;
  if (!h || h.type !== 'header' || h.format !== EXPORT_FORMAT || typeof h.namespace !== 'string')
    throw new PortabilityError(`${file}: line 1 is not a ${EXPORT_FORMAT} header`);
  if (h.version !== 1 && h.version !== EXPORT_VERSION)
    throw new PortabilityError(`${file}: format version ${String(h.version)}; this build reads versions 1 and ${EXPORT_VERSION}`);
  return h as ExportHeader;
}

export type ExportEntry =
  | { header: ExportHeader }
  | { lineNo: number; checkpoint: FileCheckpoint }
  | { lineNo: number; line: ExportLine }
  | { lineNo: number; end: EndLine }
  | { lineNo: number; error: string };

/** Every line of an export after the header, parsed and checked for shape; a malformed one is reported by number. */
export async function* readExport(file: string): AsyncGenerator<ExportEntry, void, undefined> {
  if (!fs.existsSync(file)) throw new PortabilityError(`no such file: ${file}`);
  const rl = readline.createInterface({ input: fs.createReadStream(file, 'utf8'), crlfDelay: Infinity });
  let lineNo = 0;
  for await (const text of rl) {
    lineNo += 1;
    if (lineNo === 1) {
      yield { header: checkHeader(parseJsonLine(text, 1), file) };
      continue;
    }
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text) as unknown;
    } catch (err) {
      yield { lineNo, error: `not JSON (${(err as Error).message})` };
      continue;
    }
    const v = value as { type?: unknown } | null;
    if (v?.type === 'checkpoint') {
      const problem = checkpointShapeProblem(value);
      yield problem ? { lineNo, error: problem } : { lineNo, checkpoint: (value as CheckpointLine).checkpoint };
    } else if (v?.type === 'end') {
      const e = value as Partial<EndLine>;
      yield Number.isInteger(e.links) && Number.isInteger(e.checkpoints) && (e.head === null || typeof e.head === 'string')
        ? { lineNo, end: e as EndLine }
        : { lineNo, error: 'the end line needs integer links and checkpoints and a head' };
    } else {
      const shape = lineShapeProblem(value);
      yield shape ? { lineNo, error: shape } : { lineNo, line: value as ExportLine };
    }
  }
  if (lineNo === 0) throw new PortabilityError(`${file} is empty`);
}

function checkpointShapeProblem(v: unknown): string | null {
  const c = (v as Partial<CheckpointLine>).checkpoint as Partial<FileCheckpoint> | undefined;
  if (!c || typeof c !== 'object') return 'checkpoint is missing';
  for (const k of ['id', 'namespace', 'partition', 'droppedLinks', 'cutHash', 'signature'] as const)
    if (typeof c[k] !== 'string') return `checkpoint.${k} is not a string`;
  for (const k of ['cutSeq', 'droppedEvents', 'sealedEvents'] as const) if (!Number.isInteger(c[k])) return `checkpoint.${k} is not an integer`;
  return null;
}

function lineShapeProblem(v: unknown): string | null {
  if (v === null || typeof v !== 'object') return 'not an object';
  const l = v as Partial<ExportLine>;
  if (!CHAIN_KINDS.includes(l.type as ChainKind)) return `unknown type ${JSON.stringify(l.type)}`;
  if (!Number.isInteger(l.seq)) return 'seq is not an integer';
  for (const k of ['prev', 'hash', 'itemHash'] as const) if (typeof l[k] !== 'string') return `${k} is not a string`;
  const retained = l.type === 'event' && l.item === null && typeof l.ctx?.retained === 'string' && typeof l.ctx?.itemId === 'string';
  if (!retained && (!l.item || typeof l.item !== 'object')) return 'item is missing';
  if (!l.parts || typeof l.parts !== 'object') return 'parts is missing';
  return null;
}

export const linkOf = (namespace: string, l: ExportLine): ChainLink => ({
  namespace,
  seq: l.seq,
  kind: l.type,
  itemId:
    l.item === null
      ? (l.ctx.itemId ?? '')
      : l.type === 'overlay'
        ? `${(l.item as { id: string }).id}:${(l.item as { version: number }).version}`
        : (l.item as { id: string }).id,
  itemHash: l.itemHash,
  parts: l.parts,
  prevHash: l.prev,
  hash: l.hash,
});
