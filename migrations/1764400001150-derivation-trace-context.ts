import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The W3C traceparent of the request that ingested an event (docs/operations.md "Tracing"), kept
 * with its derivation queue row so the worker's derivation batch continues that trace in another
 * process. Null when tracing is off or the row was queued by a rebuild. A nullable column without
 * default: no table rewrite. (The outbox row carries it in its jsonb payload.)
 */
export class DerivationTraceContext1764400001150 implements MigrationInterface {
  name = 'DerivationTraceContext1764400001150';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ops.derivation_queue ADD COLUMN traceparent text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ops.derivation_queue DROP COLUMN traceparent`);
  }
}
