import fs from 'node:fs';
import readline from 'node:readline';
import { ChainKind, ChainLink, ChainRecord, CHAIN_KINDS, ChainVerifier, ErasureContext, Parts, VerifyResult } from './chain';
import { ChainRepository, OverlayTargetKeys } from './chain.repository';

/**
 * The export format (docs/operations.md "Export and import"): JSON Lines, UTF-8.
 * Line 1: `{"type":"header","format":"medallion-export","version":1,"namespace":NS}`.
 * Then one line per chain link, in chain order: `{"type": kind, "seq", "prev", "hash", "itemHash",
 * "parts", "item", "ctx", "map"?}`; `item` is the record as stored (an event verbatim with its
 * checksum and times, an overlay version, an approval log entry, a judge decision), `ctx` what
 * erasures reached it, `map` (overlays) the idempotency keys of its event or of its fact's sources.
 */
export const EXPORT_FORMAT = 'medallion-export';
export const EXPORT_VERSION = 1;

export interface ExportHeader {
  type: 'header';
  format: typeof EXPORT_FORMAT;
  version: number;
  namespace: string;
}

export interface ExportLine {
  type: ChainKind;
  seq: number;
  prev: string;
  hash: string;
  itemHash: string;
  parts: Parts;
  item: ChainRecord['item'];
  ctx: ErasureContext;
  map?: OverlayTargetKeys;
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

export interface ExportSummary {
  file: string;
  /** Lines in the file now, header included. */
  lines: number;
  /** Links written by this run. */
  written: number;
  /** The seq the run resumed after (0: a new file). */
  resumedAfter: number;
  head: string | null;
}

/** The last complete line of a file (ending in \n) and the byte length up to and including it. */
function lastCompleteLine(file: string): { line: string | null; end: number } {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const chunk = 64 * 1024;
    let pos = size;
    let tail = Buffer.alloc(0);
    let end = -1;
    // Find the last newline (the end of the last complete line), then the one before it.
    while (pos > 0) {
      const start = Math.max(0, pos - chunk);
      const buf = Buffer.alloc(pos - start);
      fs.readSync(fd, buf, 0, buf.length, start);
      tail = Buffer.concat([buf, tail]);
      pos = start;
      if (end < 0) {
        const i = tail.lastIndexOf(0x0a);
        if (i >= 0) end = pos + i + 1;
      }
      if (end >= 0) {
        const rel = end - 1 - pos;
        const j = tail.lastIndexOf(0x0a, rel - 1);
        if (j >= 0 || pos === 0) return { line: tail.subarray(j + 1, rel).toString('utf8'), end };
      }
    }
    return { line: null, end: 0 };
  } finally {
    fs.closeSync(fd);
  }
}

function parseJsonLine(text: string, lineNo: number): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new PortabilityError(`line ${lineNo}: not JSON (${(err as Error).message})`);
  }
}

function checkHeader(value: unknown, file: string): ExportHeader {
  const h = value as Partial<ExportHeader> | null;
  if (!h || h.type !== 'header' || h.format !== EXPORT_FORMAT || typeof h.namespace !== 'string')
    throw new PortabilityError(`${file}: line 1 is not a ${EXPORT_FORMAT} header`);
  if (h.version !== EXPORT_VERSION) throw new PortabilityError(`${file}: format version ${String(h.version)}; this build reads version ${EXPORT_VERSION}`);
  return h as ExportHeader;
}

/**
 * Writes the namespace's chain, in order, to `file` (or stdout when null). Seals first, so every
 * record committed so far is in it. Resumable: when `file` exists it must be an export of the same
 * namespace; a trailing partial line is cut and the export goes on after its last complete line
 * (whose hash must be the chain's at that seq). Re-running on a complete file adds only the links
 * sealed since: the result is what one uninterrupted run would have written.
 */
export async function exportNamespace(repo: ChainRepository, namespace: string, file: string | null, progress: Progress = noProgress): Promise<ExportSummary> {
  await repo.sealAll(namespace);
  let after = 0;
  let lines: number;
  let head: string | null = null;
  let out: NodeJS.WritableStream;
  if (file && fs.existsSync(file) && fs.statSync(file).size > 0) {
    const { line, end } = lastCompleteLine(file);
    if (line === null) throw new PortabilityError(`${file} holds no complete line: remove it and export again`);
    fs.truncateSync(file, end);
    const firstLine = (await firstLineOf(file)) ?? '';
    const header = checkHeader(parseJsonLine(firstLine, 1), file);
    if (header.namespace !== namespace)
      throw new PortabilityError(`${file} is an export of namespace "${header.namespace}", not "${namespace}": choose another --out`);
    const last = parseJsonLine(line, 0) as Partial<ExportLine>;
    if (last.type !== ('header' as unknown)) {
      after = Number(last.seq);
      const [link] = await repo.links(namespace, after - 1, 1);
      if (!link || link.seq !== after || link.hash !== last.hash)
        throw new PortabilityError(`${file}: its last line (seq ${after}) is not this namespace's chain link ${after}: choose another --out`);
      head = link.hash;
    }
    lines = await countLines(file);
    out = fs.createWriteStream(file, { flags: 'a' });
  } else if (file) {
    out = fs.createWriteStream(file, { flags: 'w' });
    await write(out, JSON.stringify({ type: 'header', format: EXPORT_FORMAT, version: EXPORT_VERSION, namespace } satisfies ExportHeader) + '\n');
    lines = 1;
  } else {
    out = process.stdout;
    await write(out, JSON.stringify({ type: 'header', format: EXPORT_FORMAT, version: EXPORT_VERSION, namespace } satisfies ExportHeader) + '\n');
    lines = 1;
  }
  const total = await repo.linkCount(namespace);
  progress.start(total);
  progress.update(after);
  let written = 0;
  try {
    for (;;) {
      const links = await repo.links(namespace, after, 500);
      if (links.length === 0) break;
      const records = await repo.recordsFor(namespace, links);
      let text = '';
      for (const link of links) {
        const r = records.get(`${link.kind}:${link.itemId}`);
        if (!r)
          throw new PortabilityError(
            `the ${link.kind} ${link.itemId} of chain link ${link.seq} is missing from the database: run medallion verify --namespace ${namespace}`,
          );
        const line: ExportLine = {
          type: link.kind,
          seq: link.seq,
          prev: link.prevHash,
          hash: link.hash,
          itemHash: link.itemHash,
          parts: link.parts,
          item: r.record.item,
          ctx: r.ctx,
          ...(r.map ? { map: r.map } : {}),
        };
        text += JSON.stringify(line) + '\n';
        head = link.hash;
      }
      await write(out, text);
      written += links.length;
      lines += links.length;
      after = links[links.length - 1]?.seq ?? after;
      progress.update(after);
    }
  } finally {
    progress.stop();
    if (out !== process.stdout) await new Promise<void>((resolve) => (out as fs.WriteStream).end(resolve));
  }
  return { file: file ?? '-', lines, written, resumedAfter: after - written, head };
}

function write(out: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const ok = out.write(text, (err) => (err ? reject(err) : undefined));
    if (ok) resolve();
    else out.once('drain', () => resolve());
  });
}

async function firstLineOf(file: string): Promise<string | null> {
  const rl = readline.createInterface({ input: fs.createReadStream(file, 'utf8'), crlfDelay: Infinity });
  for await (const line of rl) {
    rl.close();
    return line;
  }
  return null;
}

async function countLines(file: string): Promise<number> {
  let n = 0;
  for await (const chunk of fs.createReadStream(file)) for (const b of chunk as Buffer) if (b === 0x0a) n += 1;
  return n;
}

/** Every line of an export after the header, parsed and checked for shape; a malformed one is reported by number. */
export async function* readExport(
  file: string,
): AsyncGenerator<{ header: ExportHeader } | { lineNo: number; line: ExportLine } | { lineNo: number; error: string }, void, undefined> {
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
    const shape = lineShapeProblem(value);
    if (shape) yield { lineNo, error: shape };
    else yield { lineNo, line: value as ExportLine };
  }
  if (lineNo === 0) throw new PortabilityError(`${file} is empty`);
}

function lineShapeProblem(v: unknown): string | null {
  if (v === null || typeof v !== 'object') return 'not an object';
  const l = v as Partial<ExportLine>;
  if (!CHAIN_KINDS.includes(l.type as ChainKind)) return `unknown type ${JSON.stringify(l.type)}`;
  if (!Number.isInteger(l.seq)) return 'seq is not an integer';
  for (const k of ['prev', 'hash', 'itemHash'] as const) if (typeof l[k] !== 'string') return `${k} is not a string`;
  if (!l.item || typeof l.item !== 'object') return 'item is missing';
  if (!l.parts || typeof l.parts !== 'object') return 'parts is missing';
  return null;
}

export const linkOf = (namespace: string, l: ExportLine): ChainLink => ({
  namespace,
  seq: l.seq,
  kind: l.type,
  itemId: l.type === 'overlay' ? `${(l.item as { id: string }).id}:${(l.item as { version: number }).version}` : (l.item as { id: string }).id,
  itemHash: l.itemHash,
  parts: l.parts,
  prevHash: l.prev,
  hash: l.hash,
});

/** `verify --file`: recomputes the chain of an export, no database needed; names the first broken link and its line. */
export async function verifyExportFile(file: string): Promise<VerifyResult & { namespace: string }> {
  const verifier = new ChainVerifier();
  let namespace = '';
  for await (const entry of readExport(file)) {
    if ('header' in entry) {
      namespace = entry.header.namespace;
      continue;
    }
    if ('error' in entry) {
      verifier.fail({ position: -1, kind: 'unknown', id: '', reason: entry.error, line: entry.lineNo });
      break;
    }
    const { line, lineNo } = entry;
    const link = linkOf(namespace, line);
    let broken;
    try {
      broken = verifier.feed(link, { kind: line.type, item: line.item } as ChainRecord, line.ctx ?? {}, lineNo);
    } catch (err) {
      broken = { position: line.seq, kind: line.type, id: link.itemId, reason: `unreadable record (${(err as Error).message})`, line: lineNo };
      verifier.fail(broken);
    }
    if (broken) break;
  }
  return { ...verifier.result(), namespace };
}

/** `verify --namespace`: recomputes the live chain from the database's rows; names the first broken link. */
export async function verifyNamespace(repo: ChainRepository, namespace: string, progress: Progress = noProgress): Promise<VerifyResult & { unsealed: number }> {
  const verifier = new ChainVerifier();
  progress.start(await repo.linkCount(namespace));
  let after = 0;
  try {
    for (;;) {
      const links = await repo.links(namespace, after, 1000);
      if (links.length === 0) break;
      const records = await repo.recordsFor(namespace, links);
      for (const link of links) {
        const r = records.get(`${link.kind}:${link.itemId}`);
        let broken;
        try {
          broken = verifier.feed(link, r?.record ?? null, r?.ctx ?? {});
        } catch (err) {
          broken = { position: link.seq, kind: link.kind, id: link.itemId, reason: `unreadable record (${(err as Error).message})` };
          verifier.fail(broken);
        }
        if (broken) return { ...verifier.result(), unsealed: await repo.unsealedCount(namespace) };
      }
      after = links[links.length - 1]?.seq ?? after;
      progress.update(after);
    }
  } finally {
    progress.stop();
  }
  return { ...verifier.result(), unsealed: await repo.unsealedCount(namespace) };
}
