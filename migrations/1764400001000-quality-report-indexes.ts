import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The quality report (docs/quality.md) reads each check from one namespace's rows. Two checks had
 * no index to start from (bench/quality.ts EXPLAINs each with and without these):
 * - `timeliness_derivation` reads the derivation queue rows of a namespace done in the last
 *   QUALITY_LAG_WINDOW_HOURS: the queue's only namespace index is partial on pending rows, so it
 *   scanned every namespace's queue.
 * - `temporal_consistency` looks for live facts that have a successor yet are still valid: a
 *   partial index that holds only such defects (normally empty), instead of reading every live
 *   fact of the namespace.
 */
export class QualityReportIndexes1764400001000 implements MigrationInterface {
  name = 'QualityReportIndexes1764400001000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX derivation_queue_done_idx ON ops.derivation_queue (namespace, processed_at) WHERE status = 'done'`);
    await q.query(
      `CREATE INDEX facts_superseded_still_valid_idx ON silver.facts (namespace) WHERE retired_at IS NULL AND valid_to IS NULL AND superseded_by IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX silver.facts_superseded_still_valid_idx`);
    await q.query(`DROP INDEX ops.derivation_queue_done_idx`);
  }
}
