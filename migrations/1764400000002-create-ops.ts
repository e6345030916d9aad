import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Operational tables written in the same transaction as Bronze/Silver changes:
 * the Neo4j outbox, the derivation queue (hand-off to Silver) and ingestion watermarks.
 */
export class CreateOps1764400000002 implements MigrationInterface {
  name = 'CreateOps1764400000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ops.outbox (
        id              bigserial PRIMARY KEY,
        namespace       text NOT NULL,
        aggregate_type  text NOT NULL,
        aggregate_id    text NOT NULL,
        op              text NOT NULL,
        payload         jsonb NOT NULL,
        created_at      timestamptz NOT NULL DEFAULT now(),
        attempts        integer NOT NULL DEFAULT 0,
        available_at    timestamptz NOT NULL DEFAULT now(),
        processed_at    timestamptz,
        last_error      text
      )`);
    await q.query(`CREATE INDEX outbox_pending_idx ON ops.outbox (id) WHERE processed_at IS NULL`);

    await q.query(`
      CREATE TABLE ops.derivation_queue (
        event_id         uuid PRIMARY KEY,
        namespace        text NOT NULL,
        occurred_at      timestamptz NOT NULL,
        conversation_id  text,
        sequence_num     integer,
        status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
        attempts         integer NOT NULL DEFAULT 0,
        available_at     timestamptz NOT NULL DEFAULT now(),
        locked_by        text,
        locked_until     timestamptz,
        enqueued_at      timestamptz NOT NULL DEFAULT now(),
        processed_at     timestamptz,
        last_error       text
      )`);
    await q.query(`CREATE INDEX derivation_queue_pending_idx ON ops.derivation_queue (namespace, occurred_at) WHERE status = 'pending'`);

    await q.query(`
      CREATE TABLE ops.watermarks (
        namespace             text NOT NULL,
        source                text NOT NULL,
        last_source_event_id  text NOT NULL,
        last_occurred_at      timestamptz NOT NULL,
        last_ingested_at      timestamptz NOT NULL,
        event_count           bigint NOT NULL,
        PRIMARY KEY (namespace, source)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE ops.watermarks`);
    await q.query(`DROP TABLE ops.derivation_queue`);
    await q.query(`DROP TABLE ops.outbox`);
  }
}
