import fs from 'node:fs';
import { parseJsonExact } from '../../common/exact-json';
import { isValidNamespace, NAMESPACE_RULE } from '../../common/namespace';
import { EventRepository, keyString } from '../../bronze/event.repository';
import { IngestLimits, validateSubmission } from '../../bronze/event-validation';
import { EventSubmission, NormalizedEvent } from '../../bronze/event.types';
import { enqueueOutbox, outboxRows } from '../../platform/outbox';
import { col, Sql } from '../../platform/postgres/sql';
import { ApprovalLogItem, EventItem, eventChecksumMatches, OverlayItem, sha256 } from './chain';
import { OverlayTargetKeys } from './chain.repository';
import { ExportLine, noProgress, PortabilityError, Progress, readExport } from './export-file';

export interface ImportOptions {
  /** The namespace the records are loaded into (every namespace field is rewritten to it). */
  namespace: string;
  batchSize: number;
  limits: IngestLimits;
  /**
   * Resolves when the target namespace's derivation is done (overlays are placed on the facts
   * derived from the imported events, so they wait for them). Unset: overlays are not imported.
   */
  derived?: () => Promise<void>;
  now?: () => Date;
}

export interface ImportSummary {
  lines: number;
  events: { created: number; existing: number; erased: number };
  /** Counted per overlay (all its versions); `erased`: an erasure at the source scrubbed it, so it is not loaded. */
  overlays: { created: number; existing: number; unplaced: number; erased: number };
  approvalLog: { created: number; existing: number };
  /** Judge decisions are not loaded: the target's own derivation decides again (they are in the export for verify). */
  judgeDecisions: number;
  rejected: Array<{ line: number; reason: string }>;
}

/** A UUID derived from text (SHA-256, RFC 4122 variant bits, version 8): the same overlay gets the same id on every re-run. */
export function derivedUuid(text: string): string {
  const h = sha256(text).slice(0, 32).split('');
  h[12] = '8';
  h[16] = ((parseInt(h[16] as string, 16) & 0x3) | 0x8).toString(16);
  const s = h.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20, 32)}`;
}

/**
 * `medallion import FILE --namespace NS2`: loads an export into NS2 (this or another database).
 * Events go through Bronze's one-statement insert with their original checksum (refused when the
 * content does not give it), so Silver and the graph are derived from them by the normal pipeline;
 * erased events are skipped (their content is gone; nothing is resurrected). Approval log lines
 * are appended once. Overlays are placed, once the derivation of NS2 is done, on the fact derived
 * from the same events with the same text (or on the same event), under ids derived from NS2 and
 * the original id. Idempotent and resumable: every step skips what is stored already. A bad line is
 * rejected alone, with its number.
 */
export async function importExport(sql: Sql, events: EventRepository, file: string, o: ImportOptions, progress: Progress = noProgress): Promise<ImportSummary> {
  if (!isValidNamespace(o.namespace)) throw new PortabilityError(`--namespace ${JSON.stringify(o.namespace)}: ${NAMESPACE_RULE}`);
  if (!fs.existsSync(file)) throw new PortabilityError(`no such file: ${file}`);
  const summary: ImportSummary = {
    lines: 0,
    events: { created: 0, existing: 0, erased: 0 },
    overlays: { created: 0, existing: 0, unplaced: 0, erased: 0 },
    approvalLog: { created: 0, existing: 0 },
    judgeDecisions: 0,
    rejected: [],
  };
  const now = o.now ?? (() => new Date());
  let pending: Array<{ lineNo: number; event: NormalizedEvent }> = [];
  const overlays: Array<{ lineNo: number; item: OverlayItem; map: OverlayTargetKeys }> = [];
  const erasedOverlays = new Set<string>();
  const reject = (line: number, reason: string) => summary.rejected.push({ line, reason });

  const flush = async () => {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    const created = await events.insertNew(batch.map((p) => p.event));
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
        bytes += JSON.stringify(entry.header).length + 1;
        continue;
      }
      summary.lines += 1;
      if ('error' in entry) {
        reject(entry.lineNo, entry.error);
        continue;
      }
      const { line, lineNo } = entry;
      bytes += JSON.stringify(line).length + 1;
      switch (line.type) {
        case 'event': {
          const e = line.item as EventItem;
          if (e.destroyedAt) {
            summary.events.erased += 1;
            break;
          }
          const normalized = eventOf(e, o, now(), lineNo, reject);
          if (normalized) pending.push({ lineNo, event: normalized });
          if (pending.length >= o.batchSize) await flush();
          break;
        }
        case 'overlay': {
          const item = line.item as OverlayItem;
          // Scrubbed by an erasure at the source (its fact or event is gone): nothing to place, never resurrected.
          if (line.ctx?.erased) erasedOverlays.add(item.id);
          else overlays.push({ lineNo, item, map: line.map ?? {} });
          break;
        }
        case 'approval_log': {
          await flush();
          const added = await appendLogLine(sql, line.item as ApprovalLogItem, o.namespace);
          if (added) summary.approvalLog.created += 1;
          else summary.approvalLog.existing += 1;
          break;
        }
        case 'judge_decision':
          summary.judgeDecisions += 1;
          break;
      }
      progress.update(Math.min(bytes, total));
    }
    await flush();
    if (overlays.length > 0 && o.derived) {
      await o.derived();
      await placeOverlays(
        sql,
        overlays.filter((v) => !erasedOverlays.has(v.item.id)),
        o.namespace,
        summary,
        reject,
      );
    } else summary.overlays.unplaced += new Set(overlays.map((v) => v.item.id)).size;
    summary.overlays.erased = erasedOverlays.size;
  } finally {
    progress.stop();
  }
  return summary;
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

async function appendLogLine(sql: Sql, l: ApprovalLogItem, namespace: string): Promise<boolean> {
  const added = await sql.returning(
    `INSERT INTO access.approval_log (request_id, namespace, step, principal_id, principal_name, detail, at)
     SELECT $1::uuid, $2, $3, $4, $5, $6, $7::timestamptz
      WHERE NOT EXISTS (SELECT 1 FROM access.approval_log x
                         WHERE x.request_id = $1::uuid AND x.namespace = $2 AND x.step = $3 AND x.principal_id = $4 AND x.at = $7::timestamptz)
     RETURNING id`,
    [l.requestId, namespace, l.step, l.principalId, l.principalName, l.detail, l.at],
    () => true,
  );
  return added.length > 0;
}

/**
 * Each overlay's versions, on the target's fact with the same text derived from the same events
 * (the keys in `map`), or on the same event. An overlay any of whose versions finds no such
 * target is not placed (counted in `unplaced`, its lines reported): its history stays whole or absent.
 */
async function placeOverlays(
  sql: Sql,
  overlays: ReadonlyArray<{ lineNo: number; item: OverlayItem; map: OverlayTargetKeys }>,
  namespace: string,
  summary: ImportSummary,
  reject: (line: number, reason: string) => void,
): Promise<void> {
  const byId = new Map<string, Array<{ lineNo: number; item: OverlayItem; map: OverlayTargetKeys }>>();
  for (const v of overlays) byId.set(v.item.id, [...(byId.get(v.item.id) ?? []), v]);
  for (const [id, versions] of byId) {
    versions.sort((a, b) => a.item.version - b.item.version);
    const targets: Array<{ factId: string | null; eventId: string | null }> = [];
    for (const v of versions) {
      const t = await targetOf(sql, namespace, v.item, v.map);
      if (!t) {
        reject(
          v.lineNo,
          `overlay ${id} version ${v.item.version}: no ${v.item.eventId ? 'event' : 'fact with the same text derived from the same events'} in ${namespace}; the overlay is not placed`,
        );
        break;
      }
      targets.push(t);
    }
    if (targets.length < versions.length) {
      summary.overlays.unplaced += 1;
      continue;
    }
    const newId = derivedUuid(`${namespace}:${id}`);
    await sql.transaction(async (tx) => {
      let created = 0;
      for (const [i, v] of versions.entries()) {
        const t = targets[i] as { factId: string | null; eventId: string | null };
        const o = v.item;
        created += (
          await tx.returning(
            `INSERT INTO gold.overlays (id, version, namespace, fact_id, event_id, kind, exact, prefix, suffix, span_start, span_end, text_hash,
                                      body, reason, author, author_id, changed_by, status, anchor_confidence, needs_review, job_id, created_at, version_at)
           VALUES ($1::uuid, $2, $3, $4::uuid, $5::uuid, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16::uuid, $17, $18, $19::real, $20, NULL, $21::timestamptz, $22::timestamptz)
           ON CONFLICT (id, version) DO NOTHING
           RETURNING version`,
            [
              newId,
              o.version,
              namespace,
              t.factId,
              t.eventId,
              o.kind,
              o.exact,
              o.prefix,
              o.suffix,
              o.spanStart,
              o.spanEnd,
              o.textHash,
              o.body,
              o.reason,
              o.author,
              o.authorId,
              o.changedBy,
              o.status,
              o.anchorConfidence,
              o.needsReview,
              o.createdAt,
              o.versionAt,
            ],
            () => true,
          )
        ).length;
      }
      if (created > 0) {
        summary.overlays.created += 1;
        const facts = [...new Set(targets.map((t) => t.factId).filter((x): x is string => x !== null))];
        const evs = [...new Set(targets.map((t) => t.eventId).filter((x): x is string => x !== null))];
        await enqueueOutbox(tx, [...outboxRows(namespace, 'fact', facts, { overlay: true }), ...outboxRows(namespace, 'event', evs, { overlay: true })]);
      } else summary.overlays.existing += 1;
    });
  }
}

async function targetOf(
  sql: Sql,
  namespace: string,
  o: OverlayItem,
  map: OverlayTargetKeys,
): Promise<{ factId: string | null; eventId: string | null } | null> {
  if (o.eventId) {
    const key = map.eventKey;
    if (!key) return null;
    const id = await sql.maybeOne(
      `SELECT event_id::text AS id FROM bronze.event_keys WHERE namespace = $1 AND source = $2 AND source_event_id = $3`,
      [namespace, key[0], key[1]],
      (r) => col.string(r, 'id'),
    );
    return id ? { factId: null, eventId: id } : null;
  }
  const keys = map.factSourceKeys ?? [];
  if (keys.length === 0) return null;
  // A fact of the target derived from one of the same events whose Silver text hashes to the overlay's textHash.
  const id = await sql.maybeOne(
    `SELECT f.id::text AS id
       FROM unnest($2::text[], $3::text[]) AS k(source, source_event_id)
       JOIN bronze.event_keys ek ON ek.namespace = $1 AND ek.source = k.source AND ek.source_event_id = k.source_event_id
       JOIN silver.fact_sources s ON s.event_id = ek.event_id
       JOIN silver.facts f ON f.id = s.fact_id AND f.namespace = $1 AND f.erased_at IS NULL
      WHERE encode(sha256(convert_to(f.statement, 'UTF8')), 'hex') = $4
      ORDER BY (f.retired_at IS NULL) DESC, f.id
      LIMIT 1`,
    [namespace, keys.map((k) => k[0]), keys.map((k) => k[1]), o.textHash],
    (r) => col.string(r, 'id'),
  );
  return id ? { factId: id, eventId: null } : null;
}

/** Exported for the CLI: a summary people read. */
export function describeImport(file: string, s: ImportSummary): string {
  const lines = [
    `${file}: ${s.lines} lines; events ${s.events.created} created, ${s.events.existing} already there, ${s.events.erased} erased at the source (skipped); ` +
      `overlays ${s.overlays.created} placed, ${s.overlays.existing} already there, ${s.overlays.unplaced} not placed, ${s.overlays.erased} erased at the source (skipped); ` +
      `approval log ${s.approvalLog.created} added, ${s.approvalLog.existing} already there; ${s.judgeDecisions} judge decisions (decided again by derivation); ${s.rejected.length} rejected`,
    ...s.rejected.map((r) => `  line ${r.line}: ${r.reason}`),
  ];
  return lines.join('\n');
}

export type { ExportLine };
