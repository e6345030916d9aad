import { col, Sql } from '../../platform/postgres/sql';
import { visibleSql } from '../../silver/visibility';
import { GOLD_ENTITY_COLUMNS, GoldEntityRow, toGoldEntity } from '../promotion/promotion.repository';

/** One "what do I know about X?" lookup: a namespace and the normalised name (`nameKey`). */
export interface AboutKey {
  namespace: string;
  key: string;
}

/** How a name matched its Gold entity, best first. */
export enum AboutMatch {
  /** The Gold entity's own name. */
  NAME = 1,
  /** One of its aliases (a Gold alias, or an alias of a live member). */
  ALIAS = 2,
  /** The name of a live Silver member merged into it. */
  MEMBER_NAME = 3,
  /** Only similar (pg_trgm similarity ≥ the fallback threshold) to its name or a member's name. */
  TRIGRAM = 4,
}

export interface AboutHit {
  entity: GoldEntityRow;
  match: AboutMatch;
  /** The best trigram similarity of the key to its name or a member's name (1 for an exact name). */
  similarity: number;
}

// The SQL form of `nameKey` (silver/candidate.repository.ts) for Gold aliases, which have no stored key.
const ALIAS_KEY = (x: string) => `trim(regexp_replace(lower(normalize(${x}, NFKC)), '[^[:alnum:]+#.]+', ' ', 'g'))`;

/**
 * Name resolution for `about`. The candidates come from indexed lookups only (the Gold name's
 * trigram index, the Silver name index, alias GIN and trigram indexes), so a lookup does not scan
 * the namespace; they are then ranked: exact name > alias > member name > trigram, then
 * similarity, confidence, corroboration, id. Live Gold entities and live members only.
 */
export class AboutRepository {
  constructor(private readonly sql: Sql) {}

  /** The best live Gold entity for each key (null when nothing matches), in key order; one round trip. */
  async resolve(keys: readonly AboutKey[], trigramThreshold: number): Promise<Array<AboutHit | null>> {
    if (keys.length === 0) return [];
    const rows = await this.sql.rows(
      `SELECT q.i::int AS q_index, best.rank, best.score::float8 AS score, ${GOLD_ENTITY_COLUMNS}
         FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS q(namespace, key, i)
         CROSS JOIN LATERAL (
           SELECT c.id, c.rank, c.score FROM (
             SELECT g.id, g.confidence, g.source_count,
                    CASE WHEN g.name_key = q.key THEN 1
                         WHEN EXISTS (SELECT 1 FROM unnest(g.aliases) a WHERE ${ALIAS_KEY('a')} = q.key)
                           OR EXISTS (SELECT 1 FROM gold.entity_members m JOIN silver.entities s ON s.id = m.silver_entity_id
                                       WHERE m.gold_entity_id = g.id AND m.removed_at IS NULL AND s.retired_at IS NULL AND s.alias_keys @> ARRAY[q.key]) THEN 2
                         WHEN EXISTS (SELECT 1 FROM gold.entity_members m JOIN silver.entities s ON s.id = m.silver_entity_id
                                       WHERE m.gold_entity_id = g.id AND m.removed_at IS NULL AND s.retired_at IS NULL AND s.name_key = q.key) THEN 3
                         ELSE 4 END AS rank,
                    greatest(similarity(g.name_key, q.key),
                             coalesce((SELECT max(similarity(s.name_key, q.key)) FROM gold.entity_members m JOIN silver.entities s ON s.id = m.silver_entity_id
                                        WHERE m.gold_entity_id = g.id AND m.removed_at IS NULL AND s.retired_at IS NULL), 0)) AS score
               FROM gold.entities g
              WHERE g.retired_at IS NULL AND g.namespace = q.namespace
                AND g.id IN (
                  SELECT g2.id FROM gold.entities g2 WHERE g2.namespace = q.namespace AND (g2.name_key = q.key OR g2.name_key % q.key)
                  UNION
                  SELECT m.gold_entity_id FROM silver.entities s JOIN gold.entity_members m ON m.silver_entity_id = s.id AND m.removed_at IS NULL
                   WHERE s.namespace = q.namespace AND s.retired_at IS NULL AND (s.name_key = q.key OR s.alias_keys @> ARRAY[q.key] OR s.name_key % q.key))
           ) c
           WHERE c.rank < 4 OR c.score >= $3
           ORDER BY c.rank, c.score DESC, c.confidence DESC, c.source_count DESC, c.id
           LIMIT 1
         ) best
         JOIN gold.entities g ON g.id = best.id`,
      [keys.map((k) => k.namespace), keys.map((k) => k.key), trigramThreshold],
      (r) => ({
        index: col.number(r, 'q_index'),
        hit: { entity: toGoldEntity(r), match: col.number(r, 'rank') as AboutMatch, similarity: col.number(r, 'score') },
      }),
    );
    const byIndex = new Map(rows.map((r) => [r.index, r.hit]));
    return keys.map((_, i) => byIndex.get(i + 1) ?? null);
  }

  /**
   * The facts stated where an event names a live member of each Gold entity (silver.entity_mentions:
   * a fact source of the same event whose span overlaps the name), visible at `asOf` (current when
   * null), at most `limit` per entity, best first. "I had lunch with Bob Smith" is a fact about the
   * user whose sentence names Bob Smith: `about("Bob Smith")` shows it. One statement for all.
   */
  async mentionFactIds(goldIds: readonly string[], asOf: Date | null, limit: number): Promise<Array<{ goldId: string; factIds: string[] }>> {
    if (goldIds.length === 0) return [];
    const params: unknown[] = [goldIds, limit];
    const visible = visibleSql('f', { asOf, includeRetired: false }, params);
    const rows = await this.sql.rows(
      `SELECT g.id::text AS gold_id, x.id::text AS fact_id
         FROM unnest($1::uuid[]) AS g(id)
         CROSS JOIN LATERAL (
           SELECT f.id, f.confidence, f.valid_from FROM silver.facts f
            WHERE f.id IN (
                    SELECT s.fact_id FROM gold.entity_members m
                      JOIN silver.entities e ON e.id = m.silver_entity_id AND e.retired_at IS NULL
                      JOIN silver.entity_mentions em ON em.entity_id = e.id
                      JOIN silver.fact_sources s ON s.event_id = em.event_id
                       AND coalesce(s.span_start, 0) < em.span_end AND coalesce(s.span_end, 2147483647) > em.span_start
                     WHERE m.gold_entity_id = g.id AND m.removed_at IS NULL)
              AND f.namespace = (SELECT namespace FROM gold.entities WHERE id = g.id)
              AND ${visible}
            ORDER BY f.confidence DESC, f.valid_from DESC, f.id
            LIMIT $2::int) x`,
      params,
      (r) => ({ goldId: col.string(r, 'gold_id'), factId: col.string(r, 'fact_id') }),
    );
    const out = new Map<string, string[]>();
    for (const r of rows) out.set(r.goldId, [...(out.get(r.goldId) ?? []), r.factId]);
    return [...out.entries()].map(([goldId, factIds]) => ({ goldId, factIds }));
  }
}
