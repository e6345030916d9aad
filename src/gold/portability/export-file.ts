import fs from 'node:fs';
import readline from 'node:readline';
import { ChainRepository } from './chain.repository';
import { CheckpointIndex, RetentionCheckpoint } from './checkpoints';
import {
  CheckpointLine,
  checkHeader,
  EndLine,
  EXPORT_FORMAT,
  EXPORT_VERSION,
  ExportHeader,
  ExportLine,
  FileCheckpoint,
  noProgress,
  parseJsonLine,
  PortabilityError,
  Progress,
} from './export-format';

export * from './export-format';
export { verifyExportFile, verifyNamespace } from './verify-chain';

export interface ExportSummary {
  file: string;
  /** Lines in the file now, header and end line included. */
  lines: number;
  /** Links written by this run. */
  written: number;
  /** The seq the run resumed after (0: a new file). */
  resumedAfter: number;
  head: string | null;
}

/** The last complete line of a file (ending in \n), where it starts and the byte length up to and including it. */
function lastCompleteLine(file: string): { line: string | null; start: number; end: number } {
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
        if (j >= 0 || pos === 0) return { line: tail.subarray(j + 1, rel).toString('utf8'), start: pos + j + 1, end };
      }
    }
    return { line: null, start: 0, end: 0 };
  } finally {
    fs.closeSync(fd);
  }
}

const headerLine = (namespace: string) =>
  JSON.stringify({ type: 'header', format: EXPORT_FORMAT, version: EXPORT_VERSION, namespace } satisfies ExportHeader) + '\n';
const checkpointLine = ({ signatureValid: _v, ...checkpoint }: RetentionCheckpoint) =>
  JSON.stringify({ type: 'checkpoint', checkpoint } satisfies CheckpointLine) + '\n';

/**
 * Writes the namespace's chain, in order, to `file` (or stdout when null): the header, the
 * retention checkpoints, one line per link, the end line. Seals first, so every record committed
 * so far is in it. Resumable: when `file` exists it must be an export of the same namespace; a
 * trailing partial line and the end line are cut and the export goes on after its last link (whose
 * hash must be the chain's at that seq). Re-running on a complete file adds only the links sealed
 * since: the result is what one uninterrupted run would have written. A retention that signed a
 * checkpoint since the file was begun makes it refuse (the file's checkpoint lines come first).
 */
export async function exportNamespace(repo: ChainRepository, namespace: string, file: string | null, progress: Progress = noProgress): Promise<ExportSummary> {
  await repo.sealAll(namespace);
  const checkpoints = await repo.checkpoints.list(namespace);
  const index = new CheckpointIndex(checkpoints);
  let after = 0;
  let lines: number;
  let head: string | null = null;
  let out: NodeJS.WritableStream;
  if (file && fs.existsSync(file) && fs.statSync(file).size > 0) {
    ({ after, head, lines } = await resumePoint(repo, namespace, file, checkpoints));
    out = fs.createWriteStream(file, { flags: 'a' });
  } else {
    out = file ? fs.createWriteStream(file, { flags: 'w' }) : process.stdout;
    await write(out, headerLine(namespace) + checkpoints.map(checkpointLine).join(''));
    lines = 1 + checkpoints.length;
  }
  const total = await repo.linkCount(namespace);
  progress.start(total);
  progress.update(after);
  const resumedAfter = after;
  let written = 0;
  try {
    for (;;) {
      const links = await repo.links(namespace, after, 500);
      if (links.length === 0) break;
      const records = await repo.recordsFor(namespace, links);
      let text = '';
      for (const link of links) {
        const r = records.get(`${link.kind}:${link.itemId}`);
        const retained = !r && link.kind === 'event' ? index.covering(link.seq) : undefined;
        if (!r && !retained)
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
          item: r ? r.record.item : null,
          ctx: r ? r.ctx : { retained: retained?.id, itemId: link.itemId },
          ...(r?.map ? { map: r.map } : {}),
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
    await write(out, JSON.stringify({ type: 'end', links: after, head, checkpoints: checkpoints.length } satisfies EndLine) + '\n');
    lines += 1;
  } finally {
    progress.stop();
    if (out !== process.stdout) await new Promise<void>((resolve) => (out as fs.WriteStream).end(resolve));
  }
  return { file: file ?? '-', lines, written, resumedAfter, head };
}

/** Where an existing export of `namespace` goes on: after its last link, its end line and any partial line cut. */
async function resumePoint(
  repo: ChainRepository,
  namespace: string,
  file: string,
  checkpoints: readonly RetentionCheckpoint[],
): Promise<{ after: number; head: string | null; lines: number }> {
  const complete = lastCompleteLine(file);
  let line = complete.line;
  if (line === null) throw new PortabilityError(`${file} holds no complete line: remove it and export again`);
  fs.truncateSync(file, complete.end);
  if ((JSON.parse(line) as { type?: unknown }).type === 'end') {
    fs.truncateSync(file, complete.start);
    ({ line } = lastCompleteLine(file));
  }
  const header = checkHeader(parseJsonLine((await firstLinesOf(file, 1))[0] ?? '', 1), file);
  if (header.namespace !== namespace)
    throw new PortabilityError(`${file} is an export of namespace "${header.namespace}", not "${namespace}": choose another --out`);
  if (header.version !== EXPORT_VERSION) throw new PortabilityError(`${file} is a format ${header.version} export: export again into a new file`);
  const inFile = await checkpointsOf(file);
  if (inFile.length !== checkpoints.length || inFile.some((c, i) => c.id !== checkpoints[i]?.id))
    throw new PortabilityError(`Bronze retention signed a chain checkpoint of "${namespace}" since ${file} was begun: export again into a new file`);
  let after = 0;
  let head: string | null = null;
  const last = parseJsonLine(line ?? '', 0) as Partial<ExportLine>;
  if (last.type !== ('header' as unknown) && last.type !== ('checkpoint' as unknown)) {
    after = Number(last.seq);
    const [link] = await repo.links(namespace, after - 1, 1);
    if (!link || link.seq !== after || link.hash !== last.hash)
      throw new PortabilityError(`${file}: its last line (seq ${after}) is not this namespace's chain link ${after}: choose another --out`);
    head = link.hash;
  }
  return { after, head, lines: await countLines(file) };
}

function write(out: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const ok = out.write(text, (err) => (err ? reject(err) : undefined));
    if (ok) resolve();
    else out.once('drain', () => resolve());
  });
}

/** The checkpoint lines right after the header. */
async function checkpointsOf(file: string): Promise<FileCheckpoint[]> {
  const out: FileCheckpoint[] = [];
  const rl = readline.createInterface({ input: fs.createReadStream(file, 'utf8'), crlfDelay: Infinity });
  let n = 0;
  for await (const text of rl) {
    n += 1;
    if (n === 1) continue;
    const v = parseJsonLine(text, n) as Partial<CheckpointLine>;
    if (v.type !== 'checkpoint' || !v.checkpoint) break;
    out.push(v.checkpoint);
  }
  rl.close();
  return out;
}

async function firstLinesOf(file: string, count: number): Promise<string[]> {
  const out: string[] = [];
  const rl = readline.createInterface({ input: fs.createReadStream(file, 'utf8'), crlfDelay: Infinity });
  for await (const line of rl) {
    out.push(line);
    if (out.length >= count) break;
  }
  rl.close();
  return out;
}

async function countLines(file: string): Promise<number> {
  let n = 0;
  for await (const chunk of fs.createReadStream(file)) for (const b of chunk as Buffer) if (b === 0x0a) n += 1;
  return n;
}
