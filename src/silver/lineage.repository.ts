import { DataSource } from 'typeorm';
import { col, Sql, SqlRow } from '../platform/postgres/sql';

/** One link of a fact's lineage: `oldFactId` was retired by a rebuild and re-derived as `newFactId`. */
export interface LineageLink {
  oldFactId: string;
  newFactId: string;
  /** The rebuild job that made the link. */
  jobId: string | null;
  /** Source events the two facts share. */
  sharedEvents: number;
  /** Trigram similarity of their statements, 0..1 (1: the same statement). */
  similarity: number;
  linkedAt: Date;
}

const toLink = (r: SqlRow): LineageLink => ({
  oldFactId: col.string(r, 'old_fact_id'),
  newFactId: col.string(r, 'new_fact_id'),
  jobId: col.stringOrNull(r, 'job_id'),
  sharedEvents: col.number(r, 'shared_events'),
  similarity: col.number(r, 'similarity'),
  linkedAt: col.date(r, 'linked_at'),
});

const COLUMNS = 'old_fact_id, new_fact_id, job_id, shared_events, similarity, linked_at';

/**
 * Fact lineage across rebuilds (`silver.fact_lineage`, written by the derivation of a rebuild):
 * how overlays, reviews and gold links follow a fact to the ids it lives on under.
 */
export class LineageRepository {
  private readonly sql: Sql;

  constructor(ds: DataSource) {
    this.sql = Sql.of(ds);
  }

  /** The facts each of these was re-derived as (direct links, best match first). One round trip. */
  async successorsOf(factIds: readonly string[]): Promise<LineageLink[]> {
    if (factIds.length === 0) return [];
    return this.sql.rows(
      `SELECT ${COLUMNS} FROM silver.fact_lineage WHERE old_fact_id = ANY($1::uuid[]) ORDER BY old_fact_id, similarity DESC, new_fact_id`,
      [factIds],
      toLink,
    );
  }

  /** The retired facts each of these was re-derived from. One round trip. */
  async predecessorsOf(factIds: readonly string[]): Promise<LineageLink[]> {
    if (factIds.length === 0) return [];
    return this.sql.rows(
      `SELECT ${COLUMNS} FROM silver.fact_lineage WHERE new_fact_id = ANY($1::uuid[]) ORDER BY new_fact_id, similarity DESC, old_fact_id`,
      [factIds],
      toLink,
    );
  }

  /**
   * Every fact `factId` lives on as after any number of rebuilds: the ends of its lineage chains
   * (facts with no successor of their own), nearest first. Empty when no rebuild re-derived it.
   */
  async latestOf(factId: string): Promise<string[]> {
    return this.sql.rows(
      `WITH RECURSIVE chain(id, depth) AS (
         SELECT new_fact_id, 1 FROM silver.fact_lineage WHERE old_fact_id = $1::uuid
         UNION
         SELECT l.new_fact_id, c.depth + 1 FROM chain c JOIN silver.fact_lineage l ON l.old_fact_id = c.id WHERE c.depth < 100
       )
       SELECT id, min(depth) AS depth FROM chain c
        WHERE NOT EXISTS (SELECT 1 FROM silver.fact_lineage l WHERE l.old_fact_id = c.id)
        GROUP BY id ORDER BY min(depth), id`,
      [factId],
      (r) => col.string(r, 'id'),
    );
  }
}
