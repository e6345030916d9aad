import { enqueueOutbox, outboxFrom } from '../../platform/outbox';
import { col, Sql, SqlRow } from '../../platform/postgres/sql';
import { ComposeSpan } from '../../common/compose-text';
import { OverlayKindName, OverlayRecord, OverlayStatus } from './overlay.types';

const COLUMNS = `id, version, namespace, fact_id, event_id, kind, exact, prefix, suffix, span_start, span_end, text_hash, body, reason,
  author, author_id, changed_by, status, anchor_confidence, needs_review, created_at, version_at`;

const toRecord = (r: SqlRow): OverlayRecord => ({
  id: col.string(r, 'id'),
  version: col.number(r, 'version'),
  namespace: col.string(r, 'namespace'),
  factId: col.stringOrNull(r, 'fact_id'),
  eventId: col.stringOrNull(r, 'event_id'),
  kind: col.string(r, 'kind') as OverlayKindName,
  selector: {
    exact: col.string(r, 'exact'),
    prefix: col.string(r, 'prefix'),
    suffix: col.string(r, 'suffix'),
    start: col.number(r, 'span_start'),
    end: col.number(r, 'span_end'),
  },
  textHash: col.string(r, 'text_hash'),
  body: col.stringOrNull(r, 'body'),
  reason: col.stringOrNull(r, 'reason'),
  author: col.string(r, 'author'),
  authorId: col.string(r, 'author_id'),
  changedBy: col.string(r, 'changed_by'),
  status: col.string(r, 'status') as OverlayStatus,
  anchorConfidence: col.numberOrNull(r, 'anchor_confidence'),
  needsReview: col.boolean(r, 'needs_review'),
  createdAt: col.date(r, 'created_at'),
  versionAt: col.date(r, 'version_at'),
});

/** One new version of an overlay (version 1 creates it): the record without what the table numbers and stamps. */
export type OverlayVersion = Omit<OverlayRecord, 'version' | 'createdAt' | 'versionAt'> & { readonly jobId?: string | null };

/** An applicable overlay span on one text (a fact's statement or an event's content). */
export interface TextSpan extends ComposeSpan {
  readonly targetId: string;
}

/** The latest version of each overlay in `rows` (a subquery of gold.overlays rows). */
const LATEST = (where: string) => `SELECT DISTINCT ON (id) ${COLUMNS} FROM gold.overlays WHERE ${where} ORDER BY id, version DESC`;

/**
 * `gold.overlays`: every version of every overlay, append-only (the table's triggers refuse
 * UPDATE and DELETE). The latest version of an overlay is its state.
 */
export class OverlayRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * Appends the next version (1 for a new id) and returns it. Serialised per overlay by a
   * transaction-scoped advisory lock, so two concurrent revisions get versions n+1 and n+2.
   */
  async append(tx: Sql, v: OverlayVersion): Promise<OverlayRecord> {
    await tx.execute(`SELECT pg_advisory_xact_lock(hashtextextended('gold.overlays:' || $1::text, 0))`, [v.id]);
    return tx.one(
      `INSERT INTO gold.overlays (id, version, namespace, fact_id, event_id, kind, exact, prefix, suffix, span_start, span_end, text_hash,
                                  body, reason, author, author_id, changed_by, status, anchor_confidence, needs_review, job_id, created_at)
       SELECT $1::uuid, coalesce(max(version), 0) + 1, $2, $3::uuid, $4::uuid, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15::uuid, $16, $17, $18, $19, $20::uuid,
              coalesce(min(created_at), now())
         FROM gold.overlays WHERE id = $1::uuid
       RETURNING ${COLUMNS}`,
      [
        v.id,
        v.namespace,
        v.factId,
        v.eventId,
        v.kind,
        v.selector.exact,
        v.selector.prefix,
        v.selector.suffix,
        v.selector.start,
        v.selector.end,
        v.textHash,
        v.body,
        v.reason,
        v.author,
        v.authorId,
        v.changedBy,
        v.status,
        v.anchorConfidence,
        v.needsReview,
        v.jobId ?? null,
      ],
      toRecord,
    );
  }

  /** The latest version of each of these overlays. */
  async latest(ids: readonly string[], tx: Sql = this.sql): Promise<OverlayRecord[]> {
    if (ids.length === 0) return [];
    return tx.rows(LATEST(`id = ANY($1::uuid[])`), [ids], toRecord);
  }

  /**
   * Overlays that were ever on these facts, each at its latest version (which may have followed
   * a rebuild to a successor fact), with the fact id they were found under.
   */
  async onFacts(factIds: readonly string[]): Promise<Array<{ factId: string; overlay: OverlayRecord }>> {
    if (factIds.length === 0) return [];
    return this.sql.rows(
      `SELECT DISTINCT ON (o.fact_id, l.id) o.fact_id AS on_fact, l.*
         FROM gold.overlays o
         JOIN LATERAL (${LATEST('id = o.id')}) l ON true
        WHERE o.fact_id = ANY($1::uuid[])
        ORDER BY o.fact_id, l.id, l.created_at`,
      [factIds],
      (r) => ({ factId: col.string(r, 'on_fact'), overlay: toRecord(r) }),
    );
  }

  /**
   * The spans that apply to these facts' statements: per overlay and fact, its latest placed
   * (not ORPHANED) version on that fact, unless the overlay's latest version is RETRACTED. So a
   * redaction that followed a rebuild to a new fact still hides the words on the retired one.
   */
  async spansOnFacts(factIds: readonly string[]): Promise<TextSpan[]> {
    if (factIds.length === 0) return [];
    return this.sql.rows(
      `WITH placed AS (
         SELECT DISTINCT ON (id, fact_id) id, fact_id, span_start, span_end
           FROM gold.overlays WHERE fact_id = ANY($1::uuid[]) AND status IN ('ANCHORED', 'REANCHORED')
          ORDER BY id, fact_id, version DESC
       ), cur AS (${LATEST('id IN (SELECT id FROM placed)')})
       SELECT p.fact_id AS target_id, p.span_start, p.span_end, cur.kind, cur.body, extract(epoch FROM cur.created_at) AS created
         FROM placed p JOIN cur ON cur.id = p.id
        WHERE cur.status <> 'RETRACTED' AND cur.kind <> 'ANNOTATION'`,
      [factIds],
      toSpan,
    );
  }

  /** Active redactions of these events' content. */
  async spansOnEvents(eventIds: readonly string[]): Promise<TextSpan[]> {
    if (eventIds.length === 0) return [];
    return this.sql.rows(
      `SELECT event_id AS target_id, span_start, span_end, kind, body, extract(epoch FROM created_at) AS created
         FROM (${LATEST('event_id = ANY($1::uuid[])')}) l
        WHERE status <> 'RETRACTED'`,
      [eventIds],
      toSpan,
    );
  }

  /** Active redactions of event content in these namespaces: which entity names they hide (silver/hidden-names.ts). */
  async eventRedactionsIn(namespaces: readonly string[]): Promise<Array<TextSpan & { namespace: string }>> {
    if (namespaces.length === 0) return [];
    return this.sql.rows(
      `SELECT event_id AS target_id, namespace, span_start, span_end, kind, body, extract(epoch FROM created_at) AS created
         FROM (${LATEST('namespace = ANY($1::text[]) AND event_id IS NOT NULL')}) l
        WHERE status <> 'RETRACTED'`,
      [namespaces],
      (r) => ({ ...toSpan(r), namespace: col.string(r, 'namespace') }),
    );
  }

  /** Overlays of a namespace that wait for a person: re-anchored with low confidence, or orphaned (oldest first). */
  async needingReview(namespace: string, limit: number): Promise<OverlayRecord[]> {
    return this.sql.rows(
      `SELECT * FROM (${LATEST(`namespace = $1`)}) l WHERE needs_review AND status <> 'RETRACTED' ORDER BY version_at, id LIMIT $2`,
      [namespace, limit],
      toRecord,
    );
  }

  /**
   * Live overlays (latest version not RETRACTED nor ORPHANED) of a namespace whose fact a rebuild
   * retired: the ones re-anchoring must move.
   */
  async onRetiredFacts(namespace: string): Promise<OverlayRecord[]> {
    return this.sql.rows(
      `SELECT l.* FROM (${LATEST(`namespace = $1 AND fact_id IS NOT NULL`)}) l
         JOIN silver.facts f ON f.id = l.fact_id
        WHERE f.retired_at IS NOT NULL AND l.status IN ('ANCHORED', 'REANCHORED')
        ORDER BY l.id`,
      [namespace],
      toRecord,
    );
  }
}

function toSpan(r: SqlRow): TextSpan {
  return {
    targetId: col.string(r, 'target_id'),
    kind: col.string(r, 'kind') as OverlayKindName,
    start: col.number(r, 'span_start'),
    end: col.number(r, 'span_end'),
    body: col.stringOrNull(r, 'body'),
    order: Number(r.created),
  };
}

/** Outbox row re-projecting an overlay's fact or event to Neo4j with its composed text (graph/projection.job.ts). */
export async function reprojectTarget(tx: Sql, o: Pick<OverlayRecord, 'namespace' | 'factId' | 'eventId'>): Promise<void> {
  const type = o.factId ? 'fact' : 'event';
  const id = (o.factId ?? o.eventId) as string;
  await enqueueOutbox(tx, [{ namespace: o.namespace, type, id, payload: { id, overlay: true } }]);
  // An event redaction also changes the quotes on its DERIVED_FROM edges, which the facts' projection writes,
  // and may hide the names of the entities found in it (silver/hidden-names.ts), which the entities' projection writes.
  if (o.eventId) {
    await tx.execute(
      outboxFrom(`SELECT $1::text AS namespace, d.t AS type, d.f AS id, jsonb_build_object('id', d.f, 'overlay', true) AS payload, d.t || d.f AS ord
         FROM (SELECT DISTINCT 'fact' AS t, s.fact_id::text AS f FROM silver.fact_sources s WHERE s.event_id = $2::uuid
               UNION SELECT DISTINCT 'entity', m.entity_id::text FROM silver.entity_mentions m WHERE m.event_id = $2::uuid) d`),
      [o.namespace, o.eventId],
    );
  }
}
