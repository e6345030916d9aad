import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { BrokenLink, ChainRecord, ChainVerifier, VerifyResult } from './chain';
import { ChainRepository } from './chain.repository';
import { CheckpointIndex } from './checkpoints';
import { EndLine, ExportLine, FileCheckpoint, linkOf, noProgress, Progress, readExport } from './export-format';

export interface FileVerifyResult extends VerifyResult {
  namespace: string;
  version: number;
  /** SHA-256 (hex) of the file's bytes as read. */
  sha256: string;
}

/**
 * Walks an export file's lines through one verifier: the checkpoints (they come first), each
 * link, the end line. `onLink` sees every link line with what the verifier found (null: fine).
 */
export class FileChainWalk {
  private namespace = '';
  private version = 0;
  private verifier: ChainVerifier | null = null;
  private readonly checkpoints: FileCheckpoint[] = [];
  private end: { lineNo: number; end: EndLine } | null = null;
  private lastLineNo = 1;

  header(namespace: string, version: number): void {
    this.namespace = namespace;
    this.version = version;
  }

  /** A problem was found (the walk may stop reading). */
  get stopped(): boolean {
    return (this.verifier?.broken ?? null) !== null;
  }

  checkpoint(lineNo: number, c: FileCheckpoint): void {
    this.lastLineNo = lineNo;
    if (this.verifier) this.fail(lineNo, 'a checkpoint line after the first link: checkpoints come right after the header');
    else this.checkpoints.push(c);
  }

  link(lineNo: number, line: ExportLine): BrokenLink | null {
    this.lastLineNo = lineNo;
    const verifier = this.verifierOrNew();
    if (this.end) return this.fail(lineNo, 'a link after the end line');
    const link = linkOf(this.namespace, line);
    try {
      return verifier.feed(link, line.item === null ? null : ({ kind: line.type, item: line.item } as ChainRecord), line.ctx ?? {}, lineNo);
    } catch (err) {
      const broken = { position: line.seq, kind: line.type, id: link.itemId, reason: `unreadable record (${(err as Error).message})`, line: lineNo };
      verifier.fail(broken);
      return broken;
    }
  }

  endLine(lineNo: number, end: EndLine): void {
    this.lastLineNo = lineNo;
    if (this.end) this.fail(lineNo, 'a second end line');
    else this.end = { lineNo, end };
  }

  fail(lineNo: number, reason: string): BrokenLink {
    const broken: BrokenLink = { position: -1, kind: 'unknown', id: '', reason, line: lineNo };
    this.verifierOrNew().fail(broken);
    return broken;
  }

  /** The verdict, once every line was read: a version 2 file must end with an end line that matches what was read. */
  result(): VerifyResult & { namespace: string; version: number } {
    const verifier = this.verifierOrNew();
    const r = verifier.result();
    if (r.ok && this.version >= 2) {
      const problem = !this.end
        ? `the file ends after line ${this.lastLineNo} without its end line: it was cut short`
        : this.end.end.links !== r.links ||
            (this.end.end.head ?? null) !== (r.links === 0 ? null : r.head) ||
            this.end.end.checkpoints !== this.checkpoints.length
          ? `the end line says ${this.end.end.links} link(s), head ${this.end.end.head}, ${this.end.end.checkpoints} checkpoint(s); the file holds ${r.links}, head ${r.head}, ${this.checkpoints.length}`
          : null;
      if (problem) {
        verifier.fail({ position: r.links + 1, kind: 'unknown', id: '', reason: problem, line: this.end?.lineNo ?? this.lastLineNo + 1 });
        return { ...verifier.result(), namespace: this.namespace, version: this.version };
      }
    }
    return { ...r, namespace: this.namespace, version: this.version };
  }

  private verifierOrNew(): ChainVerifier {
    this.verifier ??= new ChainVerifier(new CheckpointIndex(this.checkpoints.map((c) => ({ ...c, signatureValid: null }))));
    return this.verifier;
  }
}

/** `verify --file`: recomputes the chain of an export, no database needed; names the first broken link and its line. */
export async function verifyExportFile(file: string): Promise<FileVerifyResult> {
  const walk = new FileChainWalk();
  const hash = createHash('sha256');
  if (fs.existsSync(file)) for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  for await (const entry of readExport(file)) {
    if ('header' in entry) walk.header(entry.header.namespace, entry.header.version);
    else if ('error' in entry) walk.fail(entry.lineNo, entry.error);
    else if ('checkpoint' in entry) walk.checkpoint(entry.lineNo, entry.checkpoint);
    else if ('end' in entry) walk.endLine(entry.lineNo, entry.end);
    else walk.link(entry.lineNo, entry.line);
    if (walk.stopped) break;
  }
  return { ...walk.result(), sha256: hash.digest('hex') };
}

/** `verify --namespace`: recomputes the live chain from the database's rows (retention checkpoints included); names the first broken link. */
export async function verifyNamespace(repo: ChainRepository, namespace: string, progress: Progress = noProgress): Promise<VerifyResult & { unsealed: number }> {
  const verifier = new ChainVerifier(new CheckpointIndex(await repo.checkpoints.list(namespace)));
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
