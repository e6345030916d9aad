import { col, Sql, SqlRow } from '../../platform/postgres/sql';

/** A count and the first keys behind it. */
export interface Defects {
  count: number;
  sample: string[];
}

export interface CompletenessMeasure {
  factsWithoutSource: Defects;
  entitiesWithoutSource: Defects;
}

export interface ProvenanceMeasure {
  /** Live Silver rows (facts, relationships, entities) with a source or mention whose event is not a Bronze event of the namespace. */
  silver: Defects;
  /** Live Gold entities without a live member, live Gold relationships whose Silver ids are missing. */
  gold: Defects;
}

export interface EndpointMeasure {
  /** Live Silver relationships and facts pointing at a retired Silver entity; live Gold relationships at a retired Gold entity. */
  silver: Defects;
  gold: Defects;
}

export interface DuplicatePair {
  a: string;
  b: string;
  nameA: string;
  nameB: string;
  type: string;
  similarity: number;
}

export interface ConfidenceByType {
  type: string;
  total: number;
  low: number;
}

export interface LowConfidenceEntities {
  type: string;
  count: number;
}

export interface LagMeasure {
  /** Events in the window (derived in it, or still pending). */
  events: number;
  p50Seconds: number;
  p95Seconds: number;
}

export interface OutboxMeasure {
  pending: number;
  oldestSeconds: number;
}

export interface TemporalMeasure {
  /** Live Silver relationships with valid_to < valid_from (facts and Gold relationships have a CHECK constraint). */
  backwardRelationships: Defects;
  /** Live facts with a successor (superseded_by) that are still valid (valid_to unset). */
  supersededStillValid: Defects;
}

export interface OverlayMeasure {
  /** Overlays whose latest version is ORPHANED. */
  orphaned: Defects;
  /** Overlays whose latest version is in force (ANCHORED, REANCHORED) on a retired fact. */
  onRetiredFacts: Defects;
}

const defects = (r: SqlRow, count: string, sample: string): Defects => ({ count: col.number(r, count), sample: col.strings(r, sample) });

/**
 * The SQL of the quality report (docs/quality.md): one method per check, each one statement over
 * one namespace's rows, reading counts and at most `limit` keys of offending rows.
 */
export class QualityRepository {
  constructor(private readonly sql: Sql) {}

  async completeness(namespace: string, limit: number): Promise<CompletenessMeasure> {
    return this.sql.one(
      `WITH bad_facts AS (
         SELECT f.id FROM silver.facts f
          WHERE f.namespace = $1 AND f.retired_at IS NULL
            AND NOT EXISTS (SELECT 1 FROM silver.fact_sources s WHERE s.fact_id = f.id)
       ), bad_entities AS (
         SELECT e.id FROM silver.entities e
          WHERE e.namespace = $1 AND e.retired_at IS NULL
            AND NOT EXISTS (SELECT 1 FROM silver.entity_mentions m WHERE m.entity_id = e.id)
            AND NOT EXISTS (SELECT 1 FROM silver.facts f WHERE f.subject_entity_id = e.id AND f.retired_at IS NULL)
            AND NOT EXISTS (SELECT 1 FROM silver.facts f WHERE f.object_entity_id = e.id AND f.retired_at IS NULL)
            AND NOT EXISTS (SELECT 1 FROM silver.relationships r WHERE r.source_entity_id = e.id AND r.retired_at IS NULL)
            AND NOT EXISTS (SELECT 1 FROM silver.relationships r WHERE r.target_entity_id = e.id AND r.retired_at IS NULL)
       )
       SELECT (SELECT count(*) FROM bad_facts)::int AS facts,
              ARRAY(SELECT id::text FROM bad_facts ORDER BY id LIMIT $2) AS fact_sample,
              (SELECT count(*) FROM bad_entities)::int AS entities,
              ARRAY(SELECT id::text FROM bad_entities ORDER BY id LIMIT $2) AS entity_sample`,
      [namespace, limit],
      (r) => ({ factsWithoutSource: defects(r, 'facts', 'fact_sample'), entitiesWithoutSource: defects(r, 'entities', 'entity_sample') }),
    );
  }

  async provenance(namespace: string, limit: number): Promise<ProvenanceMeasure> {
    return this.sql.one(
      `WITH sources AS (
         SELECT 'fact:' || s.fact_id AS k, s.event_id
           FROM silver.fact_sources s JOIN silver.facts f ON f.id = s.fact_id
          WHERE f.namespace = $1 AND f.retired_at IS NULL
         UNION ALL
         SELECT 'relationship:' || s.relationship_id, s.event_id
           FROM silver.relationship_sources s JOIN silver.relationships r ON r.id = s.relationship_id
          WHERE r.namespace = $1 AND r.retired_at IS NULL
         UNION ALL
         SELECT 'entity:' || m.entity_id, m.event_id
           FROM silver.entity_mentions m JOIN silver.entities e ON e.id = m.entity_id
          WHERE m.namespace = $1 AND e.retired_at IS NULL
       ), silver_bad AS (
         SELECT DISTINCT x.k FROM sources x
          WHERE NOT EXISTS (SELECT 1 FROM bronze.event_keys b WHERE b.event_id = x.event_id AND b.namespace = $1)
       ), gold_bad AS (
         SELECT 'gold_entity:' || g.id AS k FROM gold.entities g
          WHERE g.namespace = $1 AND g.retired_at IS NULL
            AND NOT EXISTS (SELECT 1 FROM gold.entity_members m WHERE m.gold_entity_id = g.id AND m.removed_at IS NULL)
         UNION ALL
         SELECT 'gold_relationship:' || r.id FROM gold.relationships r
          WHERE r.namespace = $1 AND r.retired_at IS NULL
            AND (cardinality(r.silver_ids) = 0
                 OR EXISTS (SELECT 1 FROM unnest(r.silver_ids) AS sid
                             WHERE NOT EXISTS (SELECT 1 FROM silver.relationships s WHERE s.id = sid AND s.namespace = $1)))
       )
       SELECT (SELECT count(*) FROM silver_bad)::int AS silver, ARRAY(SELECT k FROM silver_bad ORDER BY k LIMIT $2) AS silver_sample,
              (SELECT count(*) FROM gold_bad)::int AS gold, ARRAY(SELECT k FROM gold_bad ORDER BY k LIMIT $2) AS gold_sample`,
      [namespace, limit],
      (r) => ({ silver: defects(r, 'silver', 'silver_sample'), gold: defects(r, 'gold', 'gold_sample') }),
    );
  }

  async endpoints(namespace: string, limit: number): Promise<EndpointMeasure> {
    return this.sql.one(
      `WITH silver_bad AS (
         SELECT 'relationship:' || r.id AS k FROM silver.relationships r
           JOIN silver.entities a ON a.id = r.source_entity_id JOIN silver.entities b ON b.id = r.target_entity_id
          WHERE r.namespace = $1 AND r.retired_at IS NULL
            AND (a.retired_at IS NOT NULL OR b.retired_at IS NOT NULL OR a.namespace <> $1 OR b.namespace <> $1)
         UNION ALL
         SELECT 'fact:' || f.id FROM silver.facts f
           LEFT JOIN silver.entities s ON s.id = f.subject_entity_id LEFT JOIN silver.entities o ON o.id = f.object_entity_id
          WHERE f.namespace = $1 AND f.retired_at IS NULL
            AND (s.retired_at IS NOT NULL OR o.retired_at IS NOT NULL OR s.namespace <> $1 OR o.namespace <> $1)
       ), gold_bad AS (
         SELECT 'gold_relationship:' || r.id AS k FROM gold.relationships r
           JOIN gold.entities a ON a.id = r.source_gold_id JOIN gold.entities b ON b.id = r.target_gold_id
          WHERE r.namespace = $1 AND r.retired_at IS NULL
            AND (a.retired_at IS NOT NULL OR b.retired_at IS NOT NULL OR a.namespace <> $1 OR b.namespace <> $1)
       )
       SELECT (SELECT count(*) FROM silver_bad)::int AS silver, ARRAY(SELECT k FROM silver_bad ORDER BY k LIMIT $2) AS silver_sample,
              (SELECT count(*) FROM gold_bad)::int AS gold, ARRAY(SELECT k FROM gold_bad ORDER BY k LIMIT $2) AS gold_sample`,
      [namespace, limit],
      (r) => ({ silver: defects(r, 'silver', 'silver_sample'), gold: defects(r, 'gold', 'gold_sample') }),
    );
  }

  /**
   * Pairs of live Silver entities of one type whose normalised names are more similar than
   * `threshold` (pg_trgm `similarity`), leaving out pairs Gold resolved (members of one live Gold
   * entity) and pairs a person separated on purpose. The trigram index serves `%` once the
   * transaction's `pg_trgm.similarity_threshold` is the check's threshold.
   */
  async fuzzyDuplicates(namespace: string, threshold: number, limit: number): Promise<{ count: number; pairs: DuplicatePair[] }> {
    return this.sql.transaction(async (tx) => {
      await tx.execute(`SELECT set_config('pg_trgm.similarity_threshold', $1, true)`, [String(threshold)]);
      return tx.one(
        `WITH live AS (
           SELECT e.id, e.type, e.name, e.name_key, m.gold_entity_id AS gold
             FROM silver.entities e LEFT JOIN gold.entity_members m ON m.silver_entity_id = e.id AND m.removed_at IS NULL
            WHERE e.namespace = $1 AND e.retired_at IS NULL
         ), pairs AS (
           SELECT a.id AS a, b.id AS b, a.name AS name_a, b.name AS name_b, a.type, similarity(a.name_key, b.name_key) AS sim
             FROM live a JOIN silver.entities b
               ON b.namespace = $1 AND b.retired_at IS NULL AND b.type = a.type AND b.id > a.id AND b.name_key % a.name_key
             LEFT JOIN gold.entity_members bm ON bm.silver_entity_id = b.id AND bm.removed_at IS NULL
            WHERE similarity(a.name_key, b.name_key) > $2
              AND (a.gold IS NULL OR bm.gold_entity_id IS NULL OR a.gold <> bm.gold_entity_id)
              AND NOT EXISTS (SELECT 1 FROM gold.entity_separations s WHERE s.silver_a = least(a.id, b.id) AND s.silver_b = greatest(a.id, b.id))
         )
         SELECT (SELECT count(*) FROM pairs)::int AS n,
                coalesce((SELECT jsonb_agg(p) FROM (SELECT * FROM pairs ORDER BY sim DESC, a, b LIMIT $3) p), '[]'::jsonb) AS sample`,
        [namespace, threshold, limit],
        (r) => ({
          count: col.number(r, 'n'),
          pairs: (r.sample as Array<{ a: string; b: string; name_a: string; name_b: string; type: string; sim: number }>).map((p) => ({
            a: p.a,
            b: p.b,
            nameA: p.name_a,
            nameB: p.name_b,
            type: p.type,
            similarity: p.sim,
          })),
        }),
      );
    });
  }

  /** Live current facts per fact type, and how many are below `minConfidence`. */
  async confidenceByType(namespace: string, minConfidence: number): Promise<ConfidenceByType[]> {
    return this.sql.rows(
      `SELECT fact_type, count(*)::int AS total, count(*) FILTER (WHERE confidence < $2)::int AS low
         FROM silver.facts WHERE namespace = $1 AND retired_at IS NULL AND valid_to IS NULL
        GROUP BY fact_type ORDER BY fact_type`,
      [namespace, minConfidence],
      (r) => ({ type: col.string(r, 'fact_type'), total: col.number(r, 'total'), low: col.number(r, 'low') }),
    );
  }

  /** Per entity type, the live entities whose best live fact (as subject or object) is below `floor`. */
  async lowConfidenceEntities(namespace: string, floor: number): Promise<LowConfidenceEntities[]> {
    return this.sql.rows(
      `WITH best AS (
         SELECT entity_id, max(confidence) AS c FROM (
           SELECT subject_entity_id AS entity_id, confidence FROM silver.facts
            WHERE namespace = $1 AND retired_at IS NULL AND subject_entity_id IS NOT NULL
           UNION ALL
           SELECT object_entity_id, confidence FROM silver.facts
            WHERE namespace = $1 AND retired_at IS NULL AND object_entity_id IS NOT NULL
         ) x GROUP BY entity_id
       )
       SELECT e.type, count(*)::int AS n
         FROM silver.entities e JOIN best ON best.entity_id = e.id
        WHERE e.namespace = $1 AND e.retired_at IS NULL AND best.c < $2
        GROUP BY e.type ORDER BY n DESC, e.type`,
      [namespace, floor],
      (r) => ({ type: col.string(r, 'type'), count: col.number(r, 'n') }),
    );
  }

  /** Ingest → derivation lag of the events derived in the last `windowHours` and of those still pending (their age so far). */
  async derivationLag(namespace: string, windowHours: number): Promise<LagMeasure> {
    return this.sql.one(
      `SELECT count(*)::int AS n,
              coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY lag), 0)::float AS p50,
              coalesce(percentile_cont(0.95) WITHIN GROUP (ORDER BY lag), 0)::float AS p95
         FROM (
           SELECT extract(epoch FROM processed_at - enqueued_at) AS lag FROM ops.derivation_queue
            WHERE namespace = $1 AND status = 'done' AND processed_at > now() - make_interval(hours => $2)
           UNION ALL
           SELECT extract(epoch FROM now() - enqueued_at) FROM ops.derivation_queue WHERE namespace = $1 AND status = 'pending'
         ) x`,
      [namespace, windowHours],
      (r) => ({ events: col.number(r, 'n'), p50Seconds: col.number(r, 'p50'), p95Seconds: col.number(r, 'p95') }),
    );
  }

  async outboxLag(namespace: string): Promise<OutboxMeasure> {
    return this.sql.one(
      `SELECT count(*)::int AS n, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float AS oldest
         FROM ops.outbox WHERE namespace = $1 AND processed_at IS NULL`,
      [namespace],
      (r) => ({ pending: col.number(r, 'n'), oldestSeconds: col.number(r, 'oldest') }),
    );
  }

  async deadLetters(namespace: string, limit: number): Promise<Defects> {
    return this.sql.one(
      `SELECT count(*)::int AS n,
              ARRAY(SELECT event_id || ' (' || error_code || ')' FROM silver.dead_letters
                     WHERE namespace = $1 AND resolved_at IS NULL ORDER BY created_at, id LIMIT $2) AS sample
         FROM silver.dead_letters WHERE namespace = $1 AND resolved_at IS NULL`,
      [namespace, limit],
      (r) => defects(r, 'n', 'sample'),
    );
  }

  /** Live Silver relationships that have a live twin (same type, source and target): the count of extra copies. */
  async duplicateRelationships(namespace: string, limit: number): Promise<Defects> {
    return this.sql.one(
      `WITH groups AS (
         SELECT type, source_entity_id, target_entity_id, count(*) AS c FROM silver.relationships
          WHERE namespace = $1 AND retired_at IS NULL AND valid_to IS NULL
          GROUP BY type, source_entity_id, target_entity_id HAVING count(*) > 1
       )
       SELECT coalesce(sum(c - 1), 0)::int AS n,
              ARRAY(SELECT type || ' ' || source_entity_id || '->' || target_entity_id FROM groups ORDER BY 1 LIMIT $2) AS sample
         FROM groups`,
      [namespace, limit],
      (r) => defects(r, 'n', 'sample'),
    );
  }

  async temporal(namespace: string, limit: number): Promise<TemporalMeasure> {
    return this.sql.one(
      `WITH backward AS (
         SELECT id FROM silver.relationships WHERE namespace = $1 AND retired_at IS NULL AND valid_to < valid_from
       ), still_valid AS (
         SELECT id FROM silver.facts WHERE namespace = $1 AND retired_at IS NULL AND valid_to IS NULL AND superseded_by IS NOT NULL
       )
       SELECT (SELECT count(*) FROM backward)::int AS backward, ARRAY(SELECT id::text FROM backward ORDER BY id LIMIT $2) AS backward_sample,
              (SELECT count(*) FROM still_valid)::int AS still_valid, ARRAY(SELECT id::text FROM still_valid ORDER BY id LIMIT $2) AS still_valid_sample`,
      [namespace, limit],
      (r) => ({ backwardRelationships: defects(r, 'backward', 'backward_sample'), supersededStillValid: defects(r, 'still_valid', 'still_valid_sample') }),
    );
  }

  async overlays(namespace: string, limit: number): Promise<OverlayMeasure> {
    return this.sql.one(
      `WITH latest AS (
         SELECT DISTINCT ON (o.id) o.id, o.status, o.fact_id FROM gold.overlays o
          WHERE o.namespace = $1 ORDER BY o.id, o.version DESC
       ), orphaned AS (
         SELECT id FROM latest WHERE status = 'ORPHANED'
       ), on_retired AS (
         SELECT l.id FROM latest l JOIN silver.facts f ON f.id = l.fact_id
          WHERE l.status IN ('ANCHORED', 'REANCHORED') AND f.retired_at IS NOT NULL
       )
       SELECT (SELECT count(*) FROM orphaned)::int AS orphaned, ARRAY(SELECT id::text FROM orphaned ORDER BY id LIMIT $2) AS orphaned_sample,
              (SELECT count(*) FROM on_retired)::int AS on_retired, ARRAY(SELECT id::text FROM on_retired ORDER BY id LIMIT $2) AS on_retired_sample`,
      [namespace, limit],
      (r) => ({ orphaned: defects(r, 'orphaned', 'orphaned_sample'), onRetiredFacts: defects(r, 'on_retired', 'on_retired_sample') }),
    );
  }
}
