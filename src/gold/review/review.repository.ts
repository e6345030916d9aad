import { col, Sql, SqlRow } from '../../platform/postgres/sql';
import { ClaimFact, ClaimRule, ConflictKind, GoldSupersession } from './conflict-rules';

export type ReviewStatus = 'PENDING' | 'RESOLVED' | 'DISMISSED';
export const REVIEW_STATUSES: readonly ReviewStatus[] = ['PENDING', 'RESOLVED', 'DISMISSED'];

/** An item of the review queue as stored. */
export interface ReviewItemRow {
  id: string;
  namespace: string;
  kind: ConflictKind;
  conflictKey: string;
  goldEntityId: string;
  silverEntityIds: string[];
  factIds: string[];
  rule: ClaimRule;
  reason: string;
  status: ReviewStatus;
  decision: string | null;
  note: string | null;
  decidedBy: string | null;
  decidedAt: Date | null;
  runId: string;
  createdAt: Date;
}

/** One row of gold.claim_decisions (append-only). */
export interface ClaimDecisionWrite {
  id: string;
  conflictKey: string;
  source: 'promotion' | 'review';
  goldEntityId: string;
  kind: ConflictKind;
  rule: ClaimRule | 'review';
  outcome: 'supersede' | 'queue' | 'keep_all' | 'dismiss';
  factIds: string[];
  winnerIds: string[];
  loserIds: string[];
  supersededFrom: Date | null;
  scores: Record<string, number>;
  reason: string;
  reviewItemId: string | null;
  runId: string;
  decidedBy: string | null;
}

export type ReviewItemWrite = Pick<ReviewItemRow, 'id' | 'kind' | 'conflictKey' | 'goldEntityId' | 'silverEntityIds' | 'factIds' | 'rule' | 'reason' | 'runId'>;

const ITEM_COLUMNS = `r.id::text AS id, r.namespace, r.kind, r.conflict_key, r.gold_entity_id::text AS gold_entity_id,
  r.silver_entity_ids::text[] AS silver_entity_ids, r.fact_ids::text[] AS fact_ids, r.rule, r.reason, r.status, r.decision, r.note,
  r.decided_by, r.decided_at, r.run_id::text AS run_id, r.created_at,
  (extract(epoch FROM r.created_at) * 1000000)::bigint::text AS micros`;

const toItem = (r: SqlRow): ReviewItemRow & { micros: string } => ({
  id: col.string(r, 'id'),
  namespace: col.string(r, 'namespace'),
  kind: col.string(r, 'kind') as ConflictKind,
  conflictKey: col.string(r, 'conflict_key'),
  goldEntityId: col.string(r, 'gold_entity_id'),
  silverEntityIds: col.strings(r, 'silver_entity_ids'),
  factIds: col.strings(r, 'fact_ids'),
  rule: col.string(r, 'rule') as ClaimRule,
  reason: col.string(r, 'reason'),
  status: col.string(r, 'status') as ReviewStatus,
  decision: col.stringOrNull(r, 'decision'),
  note: col.stringOrNull(r, 'note'),
  decidedBy: col.stringOrNull(r, 'decided_by'),
  decidedAt: col.dateOrNull(r, 'decided_at'),
  runId: col.string(r, 'run_id'),
  createdAt: col.date(r, 'created_at'),
  micros: col.string(r, 'micros'),
});

// The oldest ancestor of a fact through Silver rebuilds (smallest id when several), or itself.
const ROOT_OF = (fact: string) => `coalesce((
  WITH RECURSIVE anc(id) AS (SELECT ${fact} UNION SELECT l.old_fact_id FROM silver.fact_lineage l JOIN anc ON l.new_fact_id = anc.id)
  SELECT min(a.id::text) FROM anc a WHERE NOT EXISTS (SELECT 1 FROM silver.fact_lineage l2 WHERE l2.new_fact_id = a.id)), ${fact}::text)`;

/** SQL of Gold's conflict rules and review queue: claims in, decisions and items out, supersessions for reads. */
export class ReviewRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * The current Silver facts (not retired, not erased, no valid_to, not superseded) with a
   * predicate whose subject is a live member of a live Gold entity of the namespace, with their
   * distinct source events and lineage root. One statement.
   */
  claims(namespace: string): Promise<ClaimFact[]> {
    return this.sql.rows(
      `SELECT f.id::text AS id, m.gold_entity_id::text AS gold_id, f.subject_entity_id::text AS silver_id, f.fact_type, f.predicate,
              f.object_value, f.is_negation, f.confidence::float8 AS confidence, f.valid_from,
              ARRAY(SELECT DISTINCT s.event_id::text FROM silver.fact_sources s WHERE s.fact_id = f.id ORDER BY 1) AS event_ids,
              ${ROOT_OF('f.id')} AS root_id
         FROM gold.entity_members m
         JOIN gold.entities g ON g.id = m.gold_entity_id AND g.retired_at IS NULL
         JOIN silver.facts f ON f.subject_entity_id = m.silver_entity_id AND f.namespace = m.namespace
        WHERE m.namespace = $1 AND m.removed_at IS NULL AND f.predicate IS NOT NULL
          AND f.retired_at IS NULL AND f.erased_at IS NULL AND f.valid_to IS NULL AND f.superseded_by IS NULL
        ORDER BY f.id`,
      [namespace],
      (r) => ({
        id: col.string(r, 'id'),
        goldEntityId: col.string(r, 'gold_id'),
        silverEntityId: col.string(r, 'silver_id'),
        factType: col.string(r, 'fact_type'),
        predicate: col.stringOrNull(r, 'predicate'),
        objectValue: col.stringOrNull(r, 'object_value'),
        isNegation: col.boolean(r, 'is_negation'),
        confidence: col.number(r, 'confidence'),
        validFrom: col.date(r, 'valid_from'),
        eventIds: col.strings(r, 'event_ids'),
        rootId: col.string(r, 'root_id'),
      }),
    );
  }

  /** Conflict keys promotion has decided or queued in the namespace already. */
  async decidedKeys(namespace: string): Promise<Set<string>> {
    const rows = await this.sql.rows(
      `SELECT conflict_key FROM gold.claim_decisions WHERE namespace = $1 AND source = 'promotion'
       UNION SELECT conflict_key FROM gold.review_items WHERE namespace = $1`,
      [namespace],
      (r) => col.string(r, 'conflict_key'),
    );
    return new Set(rows);
  }

  /** New review items (an existing key is left as it is). */
  async insertItems(tx: Sql, namespace: string, items: readonly ReviewItemWrite[]): Promise<void> {
    if (items.length === 0) return;
    await tx.execute(
      `INSERT INTO gold.review_items (id, namespace, kind, conflict_key, gold_entity_id, silver_entity_ids, fact_ids, rule, reason, run_id)
       SELECT x.id, $1, x.kind, x.conflict_key, x.gold_entity_id, x.silver_entity_ids, x.fact_ids, x.rule, x.reason, x.run_id
         FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, kind text, conflict_key text, gold_entity_id uuid, silver_entity_ids uuid[],
                                                 fact_ids uuid[], rule text, reason text, run_id uuid)
       ON CONFLICT (namespace, conflict_key) DO NOTHING`,
      [
        namespace,
        JSON.stringify(
          items.map((i) => ({
            id: i.id,
            kind: i.kind,
            conflict_key: i.conflictKey,
            gold_entity_id: i.goldEntityId,
            silver_entity_ids: i.silverEntityIds,
            fact_ids: i.factIds,
            rule: i.rule,
            reason: i.reason,
            run_id: i.runId,
          })),
        ),
      ],
    );
  }

  /** Appends decisions (one per key and source: a repeated one is dropped). */
  async insertDecisions(tx: Sql, namespace: string, rows: readonly ClaimDecisionWrite[]): Promise<void> {
    if (rows.length === 0) return;
    await tx.execute(
      `INSERT INTO gold.claim_decisions (id, namespace, conflict_key, source, gold_entity_id, kind, rule, outcome, fact_ids, winner_ids, loser_ids,
                                         superseded_from, scores, reason, review_item_id, run_id, decided_by)
       SELECT x.id, $1, x.conflict_key, x.source, x.gold_entity_id, x.kind, x.rule, x.outcome, x.fact_ids, x.winner_ids, x.loser_ids,
              x.superseded_from, x.scores, x.reason, x.review_item_id, x.run_id, x.decided_by
         FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, conflict_key text, source text, gold_entity_id uuid, kind text, rule text, outcome text,
                                                 fact_ids uuid[], winner_ids uuid[], loser_ids uuid[], superseded_from timestamptz, scores jsonb,
                                                 reason text, review_item_id uuid, run_id uuid, decided_by text)
       ON CONFLICT (namespace, conflict_key, source) DO NOTHING`,
      [
        namespace,
        JSON.stringify(
          rows.map((d) => ({
            id: d.id,
            conflict_key: d.conflictKey,
            source: d.source,
            gold_entity_id: d.goldEntityId,
            kind: d.kind,
            rule: d.rule,
            outcome: d.outcome,
            fact_ids: d.factIds,
            winner_ids: d.winnerIds,
            loser_ids: d.loserIds,
            superseded_from: d.supersededFrom?.toISOString() ?? null,
            scores: d.scores,
            reason: d.reason,
            review_item_id: d.reviewItemId,
            run_id: d.runId,
            decided_by: d.decidedBy,
          })),
        ),
      ],
    );
  }

  /** A page of the namespace's queue, oldest first, after (created_at, id). */
  page(
    namespace: string,
    status: ReviewStatus | null,
    limit: number,
    after: { micros: string; id: string } | null,
  ): Promise<Array<ReviewItemRow & { micros: string }>> {
    return this.sql.rows(
      `SELECT ${ITEM_COLUMNS} FROM gold.review_items r
        WHERE r.namespace = $1 AND ($2::text IS NULL OR r.status = $2)
          AND ($3::bigint IS NULL OR (r.created_at, r.id) > (timestamptz 'epoch' + $3::bigint * interval '1 microsecond', $4::uuid))
        ORDER BY r.created_at, r.id
        LIMIT $5`,
      [namespace, status, after?.micros ?? null, after?.id ?? null, limit],
      toItem,
    );
  }

  /** valid_from of a Silver fact (the kept fact of a review: the others are superseded from then on). */
  validFromOf(factId: string): Promise<Date> {
    return this.sql.one(`SELECT valid_from FROM silver.facts WHERE id = $1`, [factId], (r) => col.date(r, 'valid_from'));
  }

  byId(id: string): Promise<ReviewItemRow | null> {
    return this.sql.maybeOne(`SELECT ${ITEM_COLUMNS} FROM gold.review_items r WHERE r.id = $1`, [id], toItem);
  }

  /** Closes a PENDING item; null when it was not PENDING any more (decided meanwhile). */
  close(
    tx: Sql,
    id: string,
    status: Exclude<ReviewStatus, 'PENDING'>,
    decision: string,
    note: string | null,
    decidedBy: string,
  ): Promise<ReviewItemRow | null> {
    return tx.maybeOne(
      `UPDATE gold.review_items r SET status = $2, decision = $3, note = $4, decided_by = $5, decided_at = now()
        WHERE r.id = $1 AND r.status = 'PENDING' RETURNING ${ITEM_COLUMNS}`,
      [id, status, decision, note, decidedBy],
      toItem,
    );
  }

  /**
   * The Gold supersessions of the given Silver facts, through their lineage: a decision about an
   * ancestor (before a Silver rebuild) applies to its descendants. The earliest `superseded_from`
   * when several decisions hit one fact. One statement.
   */
  supersededAmong(factIds: readonly string[]): Promise<GoldSupersession[]> {
    if (factIds.length === 0) return Promise.resolve([]);
    return this.sql.rows(
      `WITH RECURSIVE anc(fact_id, id) AS (
         SELECT x, x FROM unnest($1::uuid[]) AS x
         UNION SELECT anc.fact_id, l.old_fact_id FROM silver.fact_lineage l JOIN anc ON l.new_fact_id = anc.id)
       SELECT DISTINCT ON (anc.fact_id) anc.fact_id::text AS fact_id, d.superseded_from, d.id::text AS decision_id
         FROM anc JOIN gold.claim_decisions d ON d.loser_ids @> ARRAY[anc.id] AND d.outcome = 'supersede'
        ORDER BY anc.fact_id, d.superseded_from, d.id`,
      [[...new Set(factIds)]],
      (r) => ({ factId: col.string(r, 'fact_id'), supersededFrom: col.date(r, 'superseded_from'), decisionId: col.string(r, 'decision_id') }),
    );
  }
}
