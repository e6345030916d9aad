import { ConcurrencyLimiter } from '../../common/concurrency';
import { enqueueOutbox, outboxRows } from '../../platform/outbox';
import { col, Sql, SqlRow } from '../../platform/postgres/sql';
import { CandidatePair, SilverCandidate } from './promotion.types';

/** A Gold entity as stored. */
export interface GoldEntityRow {
  id: string;
  namespace: string;
  type: string;
  name: string;
  nameKey: string;
  aliases: string[];
  confidence: number;
  sourceCount: number;
  version: number;
  promotedAt: Date;
  updatedAt: Date;
  retiredAt: Date | null;
  /** Why it was retired ('pruned' by the lifecycle, docs/lifecycle.md, stays until restorePruned or a new member). */
  retiredReason?: string | null;
  /** Live Silver members (not removed, not retired in Silver), sorted: mergedFrom. */
  memberIds: string[];
}

export interface GoldRelationshipRow {
  id: string;
  namespace: string;
  type: string;
  sourceGoldId: string;
  targetGoldId: string;
  confidence: number;
  validFrom: Date;
  validTo: Date | null;
  sourceCount: number;
  silverIds: string[];
  version: number;
  promotedAt: Date;
  retiredAt: Date | null;
}

export interface SilverRelationshipRow {
  id: string;
  type: string;
  sourceEntityId: string;
  targetEntityId: string;
  confidence: number;
  validFrom: Date;
  validTo: Date | null;
  eventIds: string[];
}

export interface PromotionLogEntry {
  action: string;
  step: string;
  goldEntityId: string | null;
  goldRelationshipId: string | null;
  silverIds: string[];
  scores: Record<string, unknown>;
  reason: string;
  judgeModel: string | null;
  promptVersion: string | null;
}

/** What a promotion writes for a Gold entity: the stored row's content, without what the database keeps (namespace, version, times). */
export type GoldEntityWrite = Pick<GoldEntityRow, 'id' | 'type' | 'name' | 'nameKey' | 'aliases' | 'confidence' | 'sourceCount'> & {
  retired: boolean;
  retiredReason: string | null;
};

/** What a promotion writes for a Gold relationship (see GoldEntityWrite). */
export type GoldRelationshipWrite = Pick<
  GoldRelationshipRow,
  'id' | 'type' | 'sourceGoldId' | 'targetGoldId' | 'confidence' | 'validFrom' | 'validTo' | 'sourceCount' | 'silverIds'
> & { retired: boolean };

export const GOLD_ENTITY_COLUMNS = `g.id::text AS id, g.namespace, g.type, g.name, g.name_key, g.aliases, g.confidence::float8 AS confidence, g.source_count,
  g.version, g.promoted_at, g.updated_at, g.retired_at, g.retired_reason,
  ARRAY(SELECT m.silver_entity_id::text FROM gold.entity_members m JOIN silver.entities s ON s.id = m.silver_entity_id
         WHERE m.gold_entity_id = g.id AND m.removed_at IS NULL AND s.retired_at IS NULL ORDER BY 1) AS member_ids`;

export const toGoldEntity = (r: SqlRow): GoldEntityRow => ({
  id: col.string(r, 'id'),
  namespace: col.string(r, 'namespace'),
  type: col.string(r, 'type'),
  name: col.string(r, 'name'),
  nameKey: col.string(r, 'name_key'),
  aliases: col.strings(r, 'aliases'),
  confidence: col.number(r, 'confidence'),
  sourceCount: col.number(r, 'source_count'),
  version: col.number(r, 'version'),
  promotedAt: col.date(r, 'promoted_at'),
  updatedAt: col.date(r, 'updated_at'),
  retiredAt: col.dateOrNull(r, 'retired_at'),
  retiredReason: col.stringOrNull(r, 'retired_reason'),
  memberIds: col.strings(r, 'member_ids'),
});

const GOLD_REL_COLUMNS = `r.id::text AS id, r.namespace, r.type, r.source_gold_id::text AS source_gold_id, r.target_gold_id::text AS target_gold_id,
  r.confidence::float8 AS confidence, r.valid_from, r.valid_to, r.source_count, r.silver_ids::text[] AS silver_ids, r.version, r.promoted_at, r.retired_at`;

export const toGoldRelationship = (r: SqlRow): GoldRelationshipRow => ({
  id: col.string(r, 'id'),
  namespace: col.string(r, 'namespace'),
  type: col.string(r, 'type'),
  sourceGoldId: col.string(r, 'source_gold_id'),
  targetGoldId: col.string(r, 'target_gold_id'),
  confidence: col.number(r, 'confidence'),
  validFrom: col.date(r, 'valid_from'),
  validTo: col.dateOrNull(r, 'valid_to'),
  sourceCount: col.number(r, 'source_count'),
  silverIds: col.strings(r, 'silver_ids'),
  version: col.number(r, 'version'),
  promotedAt: col.date(r, 'promoted_at'),
  retiredAt: col.dateOrNull(r, 'retired_at'),
});

const toCandidate = (r: SqlRow): SilverCandidate => ({
  id: col.string(r, 'id'),
  type: col.string(r, 'type'),
  name: col.string(r, 'name'),
  nameKey: col.string(r, 'name_key'),
  aliases: col.strings(r, 'aliases'),
  aliasKeys: col.strings(r, 'alias_keys'),
  confidence: col.number(r, 'confidence'),
  eventIds: col.strings(r, 'event_ids'),
  conversationIds: col.strings(r, 'context_ids'),
  recordedAt: col.date(r, 'recorded_at'),
  retired: col.boolean(r, 'retired'),
  goldId: col.stringOrNull(r, 'gold_id'),
});

/** The Silver entities promotion considers: the live ones, and members of Gold entities even when retired. */
const IN_PLAY = `
  SELECT e.id, e.type, e.name, e.name_key, e.aliases, e.alias_keys, e.recorded_at, e.retired_at IS NOT NULL AS retired, m.gold_entity_id
    FROM silver.entities e
    LEFT JOIN gold.entity_members m ON m.silver_entity_id = e.id AND m.removed_at IS NULL
   WHERE e.namespace = $1 AND (e.retired_at IS NULL OR m.gold_entity_id IS NOT NULL)`;

/**
 * The candidate pairs of some unassigned entities (`$2`, ids; see `PromotionRepository.pairs`);
 * `pg_trgm.similarity_threshold` is set by the caller. Two branches: the trigram index (one GIN
 * lookup per pending entity, its `$3` most similar in-play names kept, all of them when `$3` is
 * NULL), and shared keys as a hash join over every in-play entity's keys unnested (name key, or an
 * alias key), which pairs p with o when a key of one is an alias key of the other
 * (`o.alias_keys && (p.alias_keys || p.name_key) OR p.alias_keys && ARRAY[o.name_key]`, written as
 * a join: that condition as a join filter was a nested loop over every pair of the namespace, see
 * bench/results/promote-pairs.json). Two equal name keys are a pair through the trigram branch
 * (similarity 1 sorts them first). Every pair starts at a pending entity: `a` is the one the
 * resolver places, `b` its candidate. A third branch pairs a lone first name with the names of
 * two or more words that start with it, and the other way round, for persons (`$4`; the
 * first-name step, whose names are often less similar than the trigram threshold: "bob" and
 * "bob vanderberg" score 0.27), as a hash join on the first word.
 */
const PAIRS_SQL = `WITH inplay AS MATERIALIZED (${IN_PLAY}),
         pending AS MATERIALIZED (SELECT * FROM inplay WHERE gold_entity_id IS NULL AND NOT retired AND id = ANY($2::uuid[])),
         keys AS MATERIALIZED (
           SELECT id, name_key AS k, false AS alias FROM inplay
           UNION ALL
           SELECT i.id, k, true FROM inplay i CROSS JOIN LATERAL unnest(i.alias_keys) AS k)
         SELECT DISTINCT ON (a, b) a, b, t FROM (
           SELECT p.id::text AS a, o.id::text AS b, o.t
             FROM pending p CROSS JOIN LATERAL (
               SELECT o.id, similarity(p.name_key, o.name_key)::float8 AS t
                 FROM silver.entities o
                WHERE o.namespace = $1 AND o.id <> p.id AND o.name_key % p.name_key
                  AND (o.retired_at IS NULL OR EXISTS (SELECT 1 FROM gold.entity_members m WHERE m.silver_entity_id = o.id AND m.removed_at IS NULL))
                ORDER BY t DESC, o.id
                LIMIT $3::int) o
           UNION ALL
           SELECT p.id::text, o.id::text, similarity(p.name_key, o.name_key)::float8
             FROM pending p
             JOIN keys pk ON pk.id = p.id
             JOIN keys ok ON ok.k = pk.k AND ok.id <> p.id AND (ok.alias OR pk.alias)
             JOIN inplay o ON o.id = ok.id
           UNION ALL
           SELECT p.id::text, o.id::text, similarity(p.name_key, o.name_key)::float8
             FROM pending p
             JOIN inplay o ON o.type = p.type AND o.id <> p.id AND NOT o.retired
                          AND split_part(o.name_key, ' ', 1) = split_part(p.name_key, ' ', 1)
                          AND (strpos(o.name_key, ' ') = 0) <> (strpos(p.name_key, ' ') = 0)
            WHERE p.type = $4::text
         ) x ORDER BY a, b`;

/** How the candidate pairs of a run are computed (`PromotionRepository.pairs`). */
export interface PairOptions {
  /** pg_trgm similarity from which two names are candidates. */
  threshold: number;
  /** The most similar names kept per unassigned entity by the trigram branch; null: all of them. */
  perEntity: number | null;
  /** Unassigned entities per query (default 1000). */
  chunkSize?: number;
  /** Queries at once, each on its own connection (default 1). */
  concurrency?: number;
  /** After each query: entities compared so far, of how many. */
  onChunk?: (done: number, total: number) => Promise<void>;
  /** The type whose lone first names are paired with the full names they start (default "person"; null: none). */
  personType?: string | null;
}

const personTypeOf = (opts: PairOptions): string | null => (opts.personType === undefined ? 'person' : opts.personType);

/** SQL of Gold promotion: what it reads of Silver and Gold, and the batch writes (with their outbox rows). */
export class PromotionRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * Every Silver entity in play with its evidence: the highest confidence of the live facts and
   * relationships that name it and of the events that name it (silver.entity_mentions, each at the
   * confidence of the best live fact stated around the name), their distinct events, and the
   * contexts of those events (the conversation, or the event itself when it has none).
   */
  async candidates(namespace: string): Promise<SilverCandidate[]> {
    return this.sql.rows(
      `WITH inplay AS (${IN_PLAY}),
       mention AS (
         SELECT f.subject_entity_id AS entity_id, s.event_id, f.confidence FROM silver.facts f JOIN silver.fact_sources s ON s.fact_id = f.id
          WHERE f.namespace = $1 AND f.retired_at IS NULL AND f.subject_entity_id IS NOT NULL
         UNION ALL
         SELECT f.object_entity_id, s.event_id, f.confidence FROM silver.facts f JOIN silver.fact_sources s ON s.fact_id = f.id
          WHERE f.namespace = $1 AND f.retired_at IS NULL AND f.object_entity_id IS NOT NULL
         UNION ALL
         SELECT r.source_entity_id, s.event_id, r.confidence FROM silver.relationships r JOIN silver.relationship_sources s ON s.relationship_id = r.id
          WHERE r.namespace = $1 AND r.retired_at IS NULL
         UNION ALL
         SELECT r.target_entity_id, s.event_id, r.confidence FROM silver.relationships r JOIN silver.relationship_sources s ON s.relationship_id = r.id
          WHERE r.namespace = $1 AND r.retired_at IS NULL
         UNION ALL
         -- Where an event names the entity, at the confidence of the best live fact stated in the span
         -- around that name (0 when none: a question, say); erased events do not count.
         SELECT em.entity_id, em.event_id,
                coalesce((SELECT max(f.confidence) FROM silver.fact_sources s JOIN silver.facts f ON f.id = s.fact_id
                           WHERE s.event_id = em.event_id AND f.namespace = $1 AND f.retired_at IS NULL
                             AND coalesce(s.span_start, 0) < em.span_end AND coalesce(s.span_end, 2147483647) > em.span_start), 0)
           FROM silver.entity_mentions em
          WHERE em.namespace = $1 AND NOT EXISTS (SELECT 1 FROM bronze.event_tombstones t WHERE t.event_id = em.event_id)),
       stats AS (
         SELECT m.entity_id, max(m.confidence)::float8 AS confidence, array_agg(DISTINCT m.event_id::text ORDER BY m.event_id::text) AS event_ids,
                array_agg(DISTINCT coalesce(ev.conversation_id, 'event:' || m.event_id::text) ORDER BY coalesce(ev.conversation_id, 'event:' || m.event_id::text)) AS context_ids
           FROM mention m LEFT JOIN bronze.events ev ON ev.id = m.event_id AND ev.namespace = $1
          GROUP BY m.entity_id)
       SELECT i.id::text AS id, i.type, i.name, i.name_key, i.aliases, i.alias_keys, i.recorded_at, i.retired, i.gold_entity_id::text AS gold_id,
              coalesce(s.confidence, 0) AS confidence, coalesce(s.event_ids, '{}') AS event_ids, coalesce(s.context_ids, '{}') AS context_ids
         FROM inplay i LEFT JOIN stats s ON s.entity_id = i.id
        ORDER BY i.recorded_at, i.id`,
      [namespace],
      toCandidate,
    );
  }

  /**
   * The candidate pairs of a run: each unassigned live entity (`a`) with the in-play entities
   * (`b`) whose normalised names are similar by pg_trgm (`%` at `threshold`, on the trigram index;
   * the `perEntity` most similar) or that share a name or alias key, each with its similarity.
   * Members of Gold entities are not re-resolved, so they are never `a`. The unassigned entities
   * are compared in chunks (`chunkSize`, `concurrency` queries at once), so a large namespace
   * reports progress between queries; the pairs are the same whatever the chunking.
   */
  async pairs(namespace: string, opts: PairOptions): Promise<CandidatePair[]> {
    const pending = await this.pendingIds(namespace, null);
    const size = Math.max(1, opts.chunkSize ?? 1000);
    const chunks: string[][] = [];
    for (let i = 0; i < pending.length; i += size) chunks.push(pending.slice(i, i + size));
    const limiter = new ConcurrencyLimiter(Math.max(1, opts.concurrency ?? 1));
    let done = 0;
    const results = await Promise.all(
      chunks.map((ids) =>
        limiter.run(async () => {
          const pairs = await this.chunkPairs(namespace, ids, opts);
          done += ids.length;
          await opts.onChunk?.(done, pending.length);
          return pairs;
        }),
      ),
    );
    return results.flat();
  }

  private chunkPairs(namespace: string, ids: readonly string[], opts: PairOptions): Promise<CandidatePair[]> {
    return this.atThreshold(opts.threshold, (tx) =>
      tx.rows(PAIRS_SQL, [namespace, ids, opts.perEntity, personTypeOf(opts)], (r) => ({
        a: col.string(r, 'a'),
        b: col.string(r, 'b'),
        trigram: col.number(r, 't'),
      })),
    );
  }

  /** EXPLAIN (ANALYZE, BUFFERS) of the candidate-pairs query over the first `chunkSize` unassigned entities, as text (bench/promote-pairs.ts). */
  async explainPairs(namespace: string, opts: PairOptions): Promise<string> {
    const ids = await this.pendingIds(namespace, Math.max(1, opts.chunkSize ?? 1000));
    const lines = await this.atThreshold(opts.threshold, (tx) =>
      tx.rows(`EXPLAIN (ANALYZE, BUFFERS) ${PAIRS_SQL}`, [namespace, ids, opts.perEntity, personTypeOf(opts)], (r) => col.string(r, 'QUERY PLAN')),
    );
    return lines.join('\n');
  }

  /** The unassigned live entities of a namespace, by id (at most `limit`; null: all). */
  private pendingIds(namespace: string, limit: number | null): Promise<string[]> {
    return this.sql.rows(
      `SELECT id::text AS id FROM (${IN_PLAY}) i WHERE gold_entity_id IS NULL AND NOT retired ORDER BY id LIMIT $2::int`,
      [namespace, limit],
      (r) => col.string(r, 'id'),
    );
  }

  /** `work` in one transaction with `pg_trgm.similarity_threshold` set to `threshold` for it alone. */
  private atThreshold<T>(threshold: number, work: (tx: Sql) => Promise<T>): Promise<T> {
    return this.sql.transaction(async (tx) => {
      await tx.execute(`SELECT set_config('pg_trgm.similarity_threshold', $1, true)`, [String(threshold)]);
      return work(tx);
    });
  }

  /**
   * The namespaces with a live Silver entity, in order. A worker asks once a minute, so this is a
   * skip scan (one index probe per namespace on the live-name index) rather than a DISTINCT over
   * every entity row.
   */
  async namespacesWithEntities(): Promise<string[]> {
    return this.sql.rows(
      `WITH RECURSIVE n(ns) AS (
         (SELECT min(namespace) FROM silver.entities WHERE retired_at IS NULL)
         UNION ALL
         SELECT (SELECT min(e.namespace) FROM silver.entities e WHERE e.retired_at IS NULL AND e.namespace > n.ns) FROM n WHERE n.ns IS NOT NULL)
       SELECT ns AS namespace FROM n WHERE ns IS NOT NULL`,
      [],
      (r) => col.string(r, 'namespace'),
    );
  }

  async separations(namespace: string): Promise<Set<string>> {
    const rows = await this.sql.rows(
      `SELECT silver_a::text || '|' || silver_b::text AS k FROM gold.entity_separations WHERE namespace = $1`,
      [namespace],
      (r) => col.string(r, 'k'),
    );
    return new Set(rows);
  }

  async goldEntities(namespace: string): Promise<GoldEntityRow[]> {
    return this.sql.rows(`SELECT ${GOLD_ENTITY_COLUMNS} FROM gold.entities g WHERE g.namespace = $1 ORDER BY g.id`, [namespace], toGoldEntity);
  }

  async goldEntitiesByIds(ids: readonly string[], sql: Sql = this.sql): Promise<GoldEntityRow[]> {
    if (ids.length === 0) return [];
    return sql.rows(`SELECT ${GOLD_ENTITY_COLUMNS} FROM gold.entities g WHERE g.id = ANY($1::uuid[])`, [ids], toGoldEntity);
  }

  async silverRelationships(namespace: string): Promise<SilverRelationshipRow[]> {
    return this.sql.rows(
      `SELECT r.id::text AS id, r.type, r.source_entity_id::text AS source_id, r.target_entity_id::text AS target_id, r.confidence::float8 AS confidence,
              r.valid_from, r.valid_to, ARRAY(SELECT DISTINCT s.event_id::text FROM silver.relationship_sources s WHERE s.relationship_id = r.id ORDER BY 1) AS event_ids
         FROM silver.relationships r WHERE r.namespace = $1 AND r.retired_at IS NULL ORDER BY r.id`,
      [namespace],
      (r) => ({
        id: col.string(r, 'id'),
        type: col.string(r, 'type'),
        sourceEntityId: col.string(r, 'source_id'),
        targetEntityId: col.string(r, 'target_id'),
        confidence: col.number(r, 'confidence'),
        validFrom: col.date(r, 'valid_from'),
        validTo: col.dateOrNull(r, 'valid_to'),
        eventIds: col.strings(r, 'event_ids'),
      }),
    );
  }

  async goldRelationships(namespace: string): Promise<GoldRelationshipRow[]> {
    return this.sql.rows(`SELECT ${GOLD_REL_COLUMNS} FROM gold.relationships r WHERE r.namespace = $1 ORDER BY r.id`, [namespace], toGoldRelationship);
  }

  async goldRelationshipsByIds(ids: readonly string[], sql: Sql = this.sql): Promise<GoldRelationshipRow[]> {
    if (ids.length === 0) return [];
    return sql.rows(`SELECT ${GOLD_REL_COLUMNS} FROM gold.relationships r WHERE r.id = ANY($1::uuid[])`, [ids], toGoldRelationship);
  }

  /** Live relationships touching these Gold entities that were valid at `asOf` (current ones when null). */
  async goldRelationshipsOf(goldIds: readonly string[], asOf: Date | null): Promise<GoldRelationshipRow[]> {
    if (goldIds.length === 0) return [];
    return this.sql.rows(
      `SELECT ${GOLD_REL_COLUMNS} FROM gold.relationships r
        WHERE (r.source_gold_id = ANY($1::uuid[]) OR r.target_gold_id = ANY($1::uuid[])) AND r.retired_at IS NULL
          AND (CASE WHEN $2::timestamptz IS NULL THEN r.valid_to IS NULL ELSE r.valid_from <= $2 AND (r.valid_to IS NULL OR r.valid_to > $2) END)
        ORDER BY r.confidence DESC, r.id`,
      [goldIds, asOf],
      toGoldRelationship,
    );
  }

  /** A page of a namespace's Gold entities, by id. */
  async listGoldEntities(
    namespace: string,
    filter: { type: string | null; nameContains: string | null; includeRetired: boolean },
    limit: number,
    afterId: string | null,
  ): Promise<GoldEntityRow[]> {
    return this.sql.rows(
      `SELECT ${GOLD_ENTITY_COLUMNS} FROM gold.entities g
        WHERE g.namespace = $1 AND ($2::text IS NULL OR g.type = $2) AND ($4::boolean OR g.retired_at IS NULL)
          AND ($3::text IS NULL OR strpos(lower(g.name), lower($3)) > 0 OR EXISTS (SELECT 1 FROM unnest(g.aliases) a WHERE strpos(lower(a), lower($3)) > 0))
          AND ($5::uuid IS NULL OR g.id > $5::uuid)
        ORDER BY g.id LIMIT $6`,
      [namespace, filter.type, filter.nameContains, filter.includeRetired, afterId, limit],
      toGoldEntity,
    );
  }

  /** Pages for the graph rebuild: by id, one namespace or all. */
  async goldEntitiesPage(namespace: string | null, afterId: string | null, limit: number): Promise<GoldEntityRow[]> {
    return this.sql.rows(
      `SELECT ${GOLD_ENTITY_COLUMNS} FROM gold.entities g WHERE ($1::text IS NULL OR g.namespace = $1) AND ($2::uuid IS NULL OR g.id > $2::uuid) ORDER BY g.id LIMIT $3`,
      [namespace, afterId, limit],
      toGoldEntity,
    );
  }

  async goldRelationshipsPage(namespace: string | null, afterId: string | null, limit: number): Promise<GoldRelationshipRow[]> {
    return this.sql.rows(
      `SELECT ${GOLD_REL_COLUMNS} FROM gold.relationships r WHERE ($1::text IS NULL OR r.namespace = $1) AND ($2::uuid IS NULL OR r.id > $2::uuid) ORDER BY r.id LIMIT $3`,
      [namespace, afterId, limit],
      toGoldRelationship,
    );
  }

  // ---- writes (inside the batch's transaction) ----

  async insertEntities(tx: Sql, namespace: string, rows: readonly GoldEntityWrite[]): Promise<void> {
    if (rows.length === 0) return;
    await tx.execute(
      `INSERT INTO gold.entities (id, namespace, type, name, name_key, aliases, confidence, source_count, retired_at, retired_reason)
       SELECT x.id, $1, x.type, x.name, x.name_key, ARRAY(SELECT jsonb_array_elements_text(x.aliases)), x.confidence, x.source_count,
              CASE WHEN x.retired THEN now() END, x.retired_reason
         FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, type text, name text, name_key text, aliases jsonb, confidence real, source_count int, retired boolean, retired_reason text)`,
      [namespace, JSON.stringify(rows.map(entityJson))],
    );
  }

  /** Writes new content and bumps the version of each row (callers pass only rows that changed). */
  async updateEntities(tx: Sql, rows: readonly GoldEntityWrite[]): Promise<void> {
    if (rows.length === 0) return;
    await tx.execute(
      `UPDATE gold.entities g SET type = x.type, name = x.name, name_key = x.name_key, aliases = ARRAY(SELECT jsonb_array_elements_text(x.aliases)),
              confidence = x.confidence, source_count = x.source_count, version = g.version + 1, updated_at = now(),
              retired_at = CASE WHEN x.retired THEN coalesce(g.retired_at, now()) END, retired_reason = CASE WHEN x.retired THEN x.retired_reason END
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, type text, name text, name_key text, aliases jsonb, confidence real, source_count int, retired boolean, retired_reason text)
        WHERE g.id = x.id`,
      [JSON.stringify(rows.map(entityJson))],
    );
  }

  async addMembers(tx: Sql, namespace: string, rows: ReadonlyArray<{ goldId: string; silverId: string; step: string }>): Promise<void> {
    if (rows.length === 0) return;
    await tx.execute(
      `INSERT INTO gold.entity_members (gold_entity_id, silver_entity_id, namespace, step)
       SELECT x.gold_id, x.silver_id, $1, x.step FROM jsonb_to_recordset($2::jsonb) AS x(gold_id uuid, silver_id uuid, step text)`,
      [namespace, JSON.stringify(rows.map((r) => ({ gold_id: r.goldId, silver_id: r.silverId, step: r.step })))],
    );
  }

  async removeMembers(tx: Sql, goldId: string, silverIds: readonly string[], reason: string): Promise<void> {
    await tx.execute(
      `UPDATE gold.entity_members SET removed_at = now(), removed_reason = $3 WHERE gold_entity_id = $1 AND silver_entity_id = ANY($2::uuid[]) AND removed_at IS NULL`,
      [goldId, silverIds, reason],
    );
  }

  async addSeparations(tx: Sql, namespace: string, pairs: ReadonlyArray<[string, string]>, by: string | null): Promise<void> {
    if (pairs.length === 0) return;
    await tx.execute(
      `INSERT INTO gold.entity_separations (namespace, silver_a, silver_b, created_by)
       SELECT $1, least(x.a, x.b), greatest(x.a, x.b), $3 FROM jsonb_to_recordset($2::jsonb) AS x(a uuid, b uuid) ON CONFLICT DO NOTHING`,
      [namespace, JSON.stringify(pairs.map(([a, b]) => ({ a, b }))), by],
    );
  }

  async insertRelationships(tx: Sql, namespace: string, rows: readonly GoldRelationshipWrite[]): Promise<void> {
    if (rows.length === 0) return;
    await tx.execute(
      `INSERT INTO gold.relationships (id, namespace, type, source_gold_id, target_gold_id, confidence, valid_from, valid_to, source_count, silver_ids)
       SELECT x.id, $1, x.type, x.source_gold_id, x.target_gold_id, x.confidence, x.valid_from, x.valid_to, x.source_count,
              ARRAY(SELECT jsonb_array_elements_text(x.silver_ids))::uuid[]
         FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, type text, source_gold_id uuid, target_gold_id uuid, confidence real, valid_from timestamptz,
              valid_to timestamptz, source_count int, silver_ids jsonb)`,
      [namespace, JSON.stringify(rows.map(relJson))],
    );
  }

  async updateRelationships(tx: Sql, rows: readonly GoldRelationshipWrite[]): Promise<void> {
    if (rows.length === 0) return;
    await tx.execute(
      `UPDATE gold.relationships r SET confidence = x.confidence, valid_from = x.valid_from, valid_to = x.valid_to, source_count = x.source_count,
              silver_ids = ARRAY(SELECT jsonb_array_elements_text(x.silver_ids))::uuid[], version = r.version + 1, updated_at = now(),
              retired_at = CASE WHEN x.retired THEN coalesce(r.retired_at, now()) END
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, confidence real, valid_from timestamptz, valid_to timestamptz, source_count int, silver_ids jsonb, retired boolean)
        WHERE r.id = x.id`,
      [JSON.stringify(rows.map(relJson))],
    );
  }

  async log(tx: Sql, namespace: string, runId: string, entries: readonly PromotionLogEntry[], createdBy: string | null): Promise<void> {
    if (entries.length === 0) return;
    await tx.execute(
      `INSERT INTO gold.promotion_log (namespace, run_id, action, step, gold_entity_id, gold_relationship_id, silver_ids, scores, reason, judge_model, prompt_version, created_by)
       SELECT $1, $2, x.action, x.step, x.gold_entity_id, x.gold_relationship_id, ARRAY(SELECT jsonb_array_elements_text(x.silver_ids))::uuid[],
              x.scores, x.reason, x.judge_model, x.prompt_version, $4
         FROM jsonb_to_recordset($3::jsonb) AS x(action text, step text, gold_entity_id uuid, gold_relationship_id uuid, silver_ids jsonb, scores jsonb,
              reason text, judge_model text, prompt_version text)`,
      [
        namespace,
        runId,
        JSON.stringify(
          entries.map((e) => ({
            action: e.action,
            step: e.step,
            gold_entity_id: e.goldEntityId,
            gold_relationship_id: e.goldRelationshipId,
            silver_ids: e.silverIds,
            scores: e.scores,
            reason: e.reason,
            judge_model: e.judgeModel,
            prompt_version: e.promptVersion,
          })),
        ),
        createdBy,
      ],
    );
  }

  /** One outbox row per changed Gold row, all tagged with the batch: the Gold projector claims them together. */
  async outbox(tx: Sql, namespace: string, batch: string, entityIds: readonly string[], relationshipIds: readonly string[]): Promise<void> {
    await enqueueOutbox(tx, [
      ...outboxRows(namespace, 'gold_entity', entityIds, { batch }),
      ...outboxRows(namespace, 'gold_relationship', relationshipIds, { batch }),
    ]);
  }
}

const entityJson = (r: GoldEntityWrite) => ({
  id: r.id,
  type: r.type,
  name: r.name,
  name_key: r.nameKey,
  aliases: r.aliases,
  confidence: r.confidence,
  source_count: r.sourceCount,
  retired: r.retired,
  retired_reason: r.retiredReason,
});

const relJson = (r: GoldRelationshipWrite) => ({
  id: r.id,
  type: r.type,
  source_gold_id: r.sourceGoldId,
  target_gold_id: r.targetGoldId,
  confidence: r.confidence,
  valid_from: r.validFrom.toISOString(),
  valid_to: r.validTo?.toISOString() ?? null,
  source_count: r.sourceCount,
  silver_ids: r.silverIds,
  retired: r.retired,
});
