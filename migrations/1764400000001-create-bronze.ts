import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bronze: the append-only event archive.
 *
 * `bronze.events` is range-partitioned by month on `occurred_at`; partitions are created on demand
 * by `bronze.ensure_event_partition`. A unique key on a partitioned table must contain the
 * partition key, so the idempotency key `(namespace, source, source_event_id)` lives in the
 * non-partitioned `bronze.event_keys`. Triggers reject UPDATE, DELETE and TRUNCATE on both.
 */
export class CreateBronze1764400000001 implements MigrationInterface {
  name = 'CreateBronze1764400000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE bronze.event_keys (
        namespace        text NOT NULL,
        source           text NOT NULL,
        source_event_id  text NOT NULL,
        event_id         uuid NOT NULL UNIQUE,
        occurred_at      timestamptz NOT NULL,
        checksum         text NOT NULL,
        PRIMARY KEY (namespace, source, source_event_id)
      )`);
    // raw_payload is json (not jsonb) so the text is kept exactly as stored: key order, spacing.
    await q.query(`
      CREATE TABLE bronze.events (
        id               uuid NOT NULL,
        namespace        text NOT NULL,
        source           text NOT NULL,
        source_event_id  text NOT NULL,
        provenance_root  text,
        kind             text NOT NULL,
        conversation_id  text,
        session_id       text,
        sequence_num     integer,
        role             text,
        actor            text,
        content          text NOT NULL,
        raw_payload      json,
        tool_call_id     text,
        checksum         text NOT NULL,
        occurred_at      timestamptz NOT NULL,
        ingested_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (id, occurred_at)
      ) PARTITION BY RANGE (occurred_at)`);
    await q.query(`CREATE INDEX events_ns_time_idx ON bronze.events (namespace, occurred_at, id)`);
    await q.query(
      `CREATE INDEX events_ns_conversation_idx ON bronze.events (namespace, conversation_id, sequence_num, occurred_at) WHERE conversation_id IS NOT NULL`,
    );
    await q.query(`CREATE INDEX events_ns_tool_call_idx ON bronze.events (namespace, tool_call_id) WHERE tool_call_id IS NOT NULL`);

    await q.query(`
      CREATE FUNCTION bronze.reject_mutation() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'bronze is append-only: % on %.% is not allowed', TG_OP, TG_TABLE_SCHEMA, TG_TABLE_NAME
          USING ERRCODE = 'insufficient_privilege';
      END $$`);
    for (const table of ['bronze.events', 'bronze.event_keys']) {
      const name = table.split('.')[1];
      await q.query(`CREATE TRIGGER ${name}_no_update_delete BEFORE UPDATE OR DELETE ON ${table}
                     FOR EACH ROW EXECUTE FUNCTION bronze.reject_mutation()`);
      await q.query(`CREATE TRIGGER ${name}_no_truncate BEFORE TRUNCATE ON ${table}
                     FOR EACH STATEMENT EXECUTE FUNCTION bronze.reject_mutation()`);
    }

    // Row triggers are cloned onto new partitions; statement (TRUNCATE) triggers are not, so the
    // partition maker adds one. The advisory lock serialises concurrent creators of a month.
    await q.query(`
      CREATE FUNCTION bronze.ensure_event_partition(p_month date) RETURNS text LANGUAGE plpgsql AS $$
      DECLARE
        first_day date := date_trunc('month', p_month)::date;
        part text := format('events_%s', to_char(first_day, 'YYYY_MM'));
      BEGIN
        IF to_regclass(format('bronze.%I', part)) IS NOT NULL THEN
          RETURN part;
        END IF;
        PERFORM pg_advisory_xact_lock(hashtext('bronze.events partitions'));
        IF to_regclass(format('bronze.%I', part)) IS NULL THEN
          EXECUTE format('CREATE TABLE bronze.%I PARTITION OF bronze.events FOR VALUES FROM (%L) TO (%L)',
                         part,
                         (first_day::timestamp AT TIME ZONE 'UTC'),
                         ((first_day + interval '1 month')::timestamp AT TIME ZONE 'UTC'));
          EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON bronze.%I FOR EACH STATEMENT EXECUTE FUNCTION bronze.reject_mutation()',
                         part || '_no_truncate', part);
        END IF;
        RETURN part;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION bronze.ensure_event_partition(date)`);
    await q.query(`DROP TABLE bronze.events`);
    await q.query(`DROP TABLE bronze.event_keys`);
    await q.query(`DROP FUNCTION bronze.reject_mutation()`);
  }
}
