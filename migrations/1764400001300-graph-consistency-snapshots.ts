import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The quality report's `consistency_graph` answer, kept per namespace (docs/quality.md,
 * "consistency_graph: the stored answer"): comparing Postgres with Neo4j reads and hashes every key
 * of a namespace in both stores (5 s at 100k facts), too slow for an interactive report. The
 * report reads the latest answer here with its age and computes a new one when it is older than
 * QUALITY_CONSISTENCY_MAX_AGE_SECONDS; a background stage in the worker recomputes the answers of
 * namespaces that changed (outbox rows after `outbox_watermark`) or that failed.
 *
 * - `outbox_watermark`: the highest `ops.outbox` id when the comparison started; a row of the
 *   namespace above it means the graph may have changed since.
 * - `read_at`: the last report that read it; the stage keeps only recently read answers fresh.
 * - `claimed_until`: a worker recomputing it (several workers never compute the same namespace at once).
 */
export class GraphConsistencySnapshots1764400001300 implements MigrationInterface {
  name = 'GraphConsistencySnapshots1764400001300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ops.graph_consistency (
        namespace         text PRIMARY KEY,
        checked_at        timestamptz NOT NULL,
        ms                integer NOT NULL CHECK (ms >= 0),
        ok                boolean NOT NULL,
        result            jsonb NOT NULL,
        outbox_watermark  bigint NOT NULL,
        read_at           timestamptz NOT NULL DEFAULT now(),
        claimed_until     timestamptz
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE ops.graph_consistency`);
  }
}
