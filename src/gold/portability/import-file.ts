import fs from 'node:fs';
import { parseJsonExact } from '../../common/exact-json';
import { isValidNamespace, NAMESPACE_RULE } from '../../common/namespace';
import { EventRepository, keyString } from '../../bronze/event.repository';
import { IngestLimits, validateSubmission } from '../../bronze/event-validation';
import { EventSubmission, NormalizedEvent } from '../../bronze/event.types';
import { col, Sql } from '../../platform/postgres/sql';
import { ApprovalLogItem, describeVerify, EventItem, eventChecksumMatches, OverlayItem } from './chain';
import { ExportLine, noProgress, PortabilityError, Progress, readExport } from './export-format';
import { FileOverlay, Importer, placeOverlays } from './import-overlays';
import { FileChainWalk, verifyExportFile } from './verify-chain';

export { derivedUuid } from './import-overlays';

export interface ImportOptions {
  /** The namespace the records are loaded into (every namespace field is rewritten to it). */
  namespace: string;
  batchSize: number;
  limits: IngestLimits;
  /** Who imports (the token the command was given): the import, its imported data and its overlays are theirs. */
  importer: Importer;
  /**
   * Import a file whose hash chain does not verify (broken, truncated, reordered, or a format 1
   * file, which cannot show truncation), every event it creates marked unverified. Without it such
   * a file is refused before anything is written.
   */
  unverified?: boolean;
  /**
   * Resolves when the target namespace's derivation is done (overlays are placed on the facts
   * derived from the imported events, so they wait for them). Unset: overlays are not imported.
   */
  derived?: () => Promise<void>;
  now?: () => Date;
}

export interface ImportSummary {
  lines: number;
  /** Whether the file's chain verified; `problem` says where and why it did not. */
  verified: boolean;
  problem: string | null;
  /** `retained`: links of events Bronze retention dropped at the source (no content in the file). */
  events: { created: number; existing: number; erased: number; retained: number };
  /** Counted per overlay (all its versions); `erased`: an erasure at the source scrubbed it, so it is not loaded. */
  overlays: { created: number; existing: number; unplaced: number; erased: number };
  /** Approval log lines of the file, kept as imported data (never lines of this instance's log); `existing`: this namespace's own. */
  approvalLog: { recorded: number; existing: number };
  /** Judge decisions are not loaded: the target's own derivation decides again (they are in the export for verify). */
  judgeDecisions: number;
  rejected: Array<{ line: number; reason: string }>;
}

/**
 * `medallion import FILE --namespace NS2`: loads an export into NS2 (this or another database).
 *
 * First the file's hash chain is verified as `verify --file` does; a broken, truncated or
 * reordered file is refused with the position, line and reason before anything is written, unless
 * `unverified` is set, and then every event it creates is marked unverified (ops.imported_events).
 * Then events go through Bronze's one-statement insert with their original checksum (refused when
 * the content does not give it), so Silver and the graph are derived from them by the normal
 * pipeline; erased and retained events are skipped (nothing is resurrected). The file's approval
 * log lines and overlay versions are recorded as data of the import, attributed to the importer
 * (ops.imported_records); overlays are placed, once NS2 is derived, as the importer's. A namespace
 * imported into itself changes nothing. Idempotent and resumable; a bad line is rejected alone.
 */
export async function importExport(sql: Sql, events: EventRepository, file: string, o: ImportOptions, progress: Progress = noProgress): Promise<ImportSummary> {
  if (!isValidNamespace(o.namespace)) throw new PortabilityError(`--namespace ${JSON.stringify(o.namespace)}: ${NAMESPACE_RULE}`);
  if (!fs.existsSync(file)) throw new PortabilityError(`no such file: ${file}`);
  const check = await verifyExportFile(file);
  const problem = check.ok
    ? check.version < 2
      ? 'a format 1 export has no end line: a file cut after a complete line cannot be told from a whole one'
      : null
    : describeVerify(check, file).replace(`${file}: chain `, '');
  if (problem && !o.unverified)
    throw new PortabilityError(
      `${file}: ${problem}. Nothing was imported. Check the file with medallion verify --file; to import it anyway, every event marked unverified, pass --unverified`,
    );
  const run = new ImportRun(sql, o, { sha256: check.sha256, head: check.links > 0 ? check.head : null, links: check.links, source: check.namespace, problem });
  const summary: ImportSummary = {
    lines: 0,
    verified: problem === null,
    problem,
    events: { created: 0, existing: 0, erased: 0, retained: 0 },
    overlays: { created: 0, existing: 0, unplaced: 0, erased: 0 },
    approvalLog: { recorded: 0, existing: 0 },
    judgeDecisions: 0,
    rejected: [],
  };
  const now = o.now ?? (() => new Date());
  let pending: Array<{ lineNo: number; event: NormalizedEvent }> = [];
  const overlays: FileOverlay[] = [];
  const erasedOverlays = new Set<string>();
  const reject = (line: number, reason: string) => summary.rejected.push({ line, reason });
  // The file is read twice: a verified file is verified again as it is loaded, so nothing that changed since is written.
  const walk = problem === null ? new FileChainWalk() : null;

  const flush = async () => {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    const created = await events.insertNew(batch.map((p) => p.event));
    await run.markEvents([...created.values()].map((e) => e.id));
    const others = batch.filter((p) => !created.has(keyString(p.event)));
    const stored = await events.findByKeys(others.map((p) => p.event));
    summary.events.created += created.size;
    for (const p of others) {
      const s = stored.get(keyString(p.event));
      if (s && s.checksum === p.event.checksum) summary.events.existing += 1;
      else
        reject(
          p.lineNo,
          `an event with source "${p.event.source}" and sourceEventId "${p.event.sourceEventId}" already exists in ${o.namespace} with other content; Bronze never overwrites`,
        );
    }
  };

  const total = fs.statSync(file).size;
  progress.start(total);
  let bytes = 0;
  try {
    for await (const entry of readExport(file)) {
      if ('header' in entry) {
        walk?.header(entry.header.namespace, entry.header.version);
        bytes += JSON.stringify(entry.header).length + 1;
        continue;
      }
      if ('checkpoint' in entry) walk?.checkpoint(entry.lineNo, entry.checkpoint);
      else if ('end' in entry) walk?.endLine(entry.lineNo, entry.end);
      else if ('error' in entry) {
        summary.lines += 1;
        reject(entry.lineNo, entry.error);
      } else {
        summary.lines += 1;
        if (walk?.link(entry.lineNo, entry.line)) throw changed(file, entry.lineNo);
        bytes += JSON.stringify(entry.line).length + 1;
        await loadLine(entry.lineNo, entry.line);
        if (pending.length >= o.batchSize) await flush();
      }
      progress.update(Math.min(bytes, total));
    }
    if (walk && !walk.result().ok) throw changed(file, summary.lines + 1);
    await flush();
    const placeable = overlays.filter((v) => !erasedOverlays.has(v.item.id));
    if (placeable.length > 0 && o.derived) {
      await o.derived();
      const counts = await placeOverlays(sql, placeable, o.namespace, o.importer, reject, (tx, versions) => run.recordOverlays(tx, versions));
      Object.assign(summary.overlays, counts);
    } else summary.overlays.unplaced += new Set(placeable.map((v) => v.item.id)).size;
    summary.overlays.erased = erasedOverlays.size;
  } finally {
    progress.stop();
  }
  return summary;

  async function loadLine(lineNo: number, line: ExportLine): Promise<void> {
    switch (line.type) {
      case 'event': {
        const e = line.item as EventItem | null;
        if (e === null) summary.events.retained += 1;
        else if (e.destroyedAt) summary.events.erased += 1;
        else {
          const normalized = eventOf(e, o, now(), lineNo, reject);
          if (normalized) pending.push({ lineNo, event: normalized });
        }
        return;
      }
      case 'overlay': {
        const item = line.item as OverlayItem;
        // Scrubbed by an erasure at the source (its fact or event is gone): nothing to place, never resurrected.
        if (line.ctx?.erased) erasedOverlays.add(item.id);
        else overlays.push({ lineNo, seq: line.seq, linkHash: line.hash, item, map: line.map ?? {} });
        return;
      }
      case 'approval_log':
        if (await run.recordLogLine(line.item as ApprovalLogItem, line.seq, line.hash)) summary.approvalLog.recorded += 1;
        else summary.approvalLog.existing += 1;
        return;
      case 'judge_decision':
        summary.judgeDecisions += 1;
        return;
    }
  }
}

const changed = (file: string, lineNo: number) =>
  new PortabilityError(
    `${file} changed while it was imported (line ${lineNo} no longer verifies): what was read before it is stored; verify the file and import again`,
  );

/**
 * What one import writes besides events and overlays: the import's own row (written once, when
 * the first thing is), the marks of the events it created, and the file's approval log lines and
 * overlay versions as imported data. All in `ops`, append-only (migration 1764400001430).
 */
class ImportRun {
  private id: string | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly o: ImportOptions,
    private readonly file: { sha256: string; head: string | null; links: number; source: string; problem: string | null },
  ) {}

  /** On the pool, not in a caller's transaction: the row must outlive a rolled-back overlay placement. */
  private async importId(): Promise<string> {
    this.id ??= await this.sql.one(
      `INSERT INTO ops.imports (namespace, source_namespace, file_sha256, file_head, links, verified, problem, imported_by, imported_by_name)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::uuid, $9) RETURNING id::text AS id`,
      [
        this.o.namespace,
        this.file.source,
        this.file.sha256,
        this.file.head,
        this.file.links,
        this.file.problem === null,
        this.file.problem,
        this.o.importer.principalId,
        this.o.importer.name,
      ],
      (r) => col.string(r, 'id'),
    );
    return this.id;
  }

  /** The events this import created, marked with whether the file verified. */
  async markEvents(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.sql.execute(
      `INSERT INTO ops.imported_events (event_id, namespace, import_id, verified) SELECT e, $2, $3::uuid, $4 FROM unnest($1::uuid[]) AS e
       ON CONFLICT (event_id) DO NOTHING`,
      [ids, this.o.namespace, await this.importId(), this.file.problem === null],
    );
  }

  /** A line of the file's approval log, as data of the import; false when it is already there (or is this namespace's own line). */
  async recordLogLine(l: ApprovalLogItem, seq: number, linkHash: string): Promise<boolean> {
    const own = await this.sql.maybeOne(
      `SELECT 1 AS one FROM access.approval_log x WHERE x.id::text = $1 AND x.namespace = $2 AND x.request_id::text = $3 AND x.step = $4`,
      [l.id, this.o.namespace, l.requestId, l.step],
      () => true,
    );
    if (own || (await this.recorded(linkHash))) return false;
    await this.record('approval_log', seq, linkHash, l);
    return true;
  }

  /** The file's versions of an overlay just placed, as data of the import (in the placing transaction). */
  async recordOverlays(tx: Sql, versions: readonly FileOverlay[]): Promise<void> {
    for (const v of versions) await this.record('overlay', v.seq, v.linkHash, v.item, tx);
  }

  private async recorded(linkHash: string): Promise<boolean> {
    return (
      (await this.sql.maybeOne(
        `SELECT 1 AS one FROM ops.imported_records WHERE namespace = $1 AND link_hash = $2`,
        [this.o.namespace, linkHash],
        () => true,
      )) ?? false
    );
  }

  private async record(kind: 'approval_log' | 'overlay', seq: number, linkHash: string, item: unknown, tx: Sql = this.sql): Promise<void> {
    await tx.execute(
      `INSERT INTO ops.imported_records (namespace, link_hash, kind, seq, import_id, item) VALUES ($1, $2, $3, $4, $5::uuid, $6::jsonb)
       ON CONFLICT (namespace, link_hash) DO NOTHING`,
      [this.o.namespace, linkHash, kind, seq, await this.importId(), JSON.stringify(item)],
    );
  }
}

/** The event as Bronze stores it in the target namespace, its checksum the original's; null (and rejected) when it cannot be. */
function eventOf(e: EventItem, o: ImportOptions, now: Date, lineNo: number, reject: (line: number, reason: string) => void): NormalizedEvent | null {
  let rawPayload: unknown;
  try {
    rawPayload = e.rawPayloadText === null ? undefined : parseJsonExact(e.rawPayloadText);
  } catch (err) {
    reject(lineNo, `rawPayloadText is not JSON (${(err as Error).message})`);
    return null;
  }
  const submission: EventSubmission = {
    namespace: o.namespace,
    source: e.source,
    sourceEventId: e.sourceEventId,
    provenanceRoot: e.provenanceRoot,
    kind: e.kind,
    conversationId: e.conversationId,
    sessionId: e.sessionId,
    sequenceNum: e.sequenceNum,
    role: e.role,
    actor: e.actor,
    content: e.content,
    ...(rawPayload !== undefined ? { rawPayload } : {}),
    occurredAt: e.occurredAt,
  };
  const v = validateSubmission(submission, o.limits, now);
  if (!v.ok) {
    reject(lineNo, `${v.code}: ${v.reason}`);
    return null;
  }
  if (!eventChecksumMatches(e)) {
    reject(lineNo, `event ${e.id}: its content does not give its checksum ${e.checksum} (the file was altered?); not imported`);
    return null;
  }
  return { ...v.event, checksum: e.checksum };
}

/** Exported for the CLI: a summary people read. */
export function describeImport(file: string, s: ImportSummary): string {
  const lines = [
    `${file}: ${s.lines} lines; ${s.verified ? 'hash chain verified' : `hash chain NOT verified (${s.problem}): every event created is marked unverified`}; ` +
      `events ${s.events.created} created, ${s.events.existing} already there, ${s.events.erased} erased and ${s.events.retained} dropped by retention at the source (skipped); ` +
      `overlays ${s.overlays.created} placed as the importer's, ${s.overlays.existing} already there, ${s.overlays.unplaced} not placed, ${s.overlays.erased} erased at the source (skipped); ` +
      `approval log ${s.approvalLog.recorded} line(s) recorded as imported data, ${s.approvalLog.existing} already there; ${s.judgeDecisions} judge decisions (decided again by derivation); ${s.rejected.length} rejected`,
    ...s.rejected.map((r) => `  line ${r.line}: ${r.reason}`),
  ];
  return lines.join('\n');
}

export type { ExportLine };
