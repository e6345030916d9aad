import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `changes(namespace, since)` reads Gold decisions from gold.promotion_log by namespace and time
 * (docs/gold-reads.md): an index on (namespace, created_at) so a window does not scan the
 * namespace's whole log.
 */
export class GoldChangeLogIndex1764400000550 implements MigrationInterface {
  name = 'GoldChangeLogIndex1764400000550';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX gold_promotion_log_ns_time_idx ON gold.promotion_log (namespace, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX gold.gold_promotion_log_ns_time_idx`);
  }
}
