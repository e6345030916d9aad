import { MigrationInterface, QueryRunner } from 'typeorm';

/** The body of `bronze.ensure_event_partition` around the statement that makes the table. */
const definition = (make: string, attach = ''): string => `
      CREATE OR REPLACE FUNCTION bronze.ensure_event_partition(p_month date) RETURNS text
      LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
      DECLARE
        first_day date;
        part text;
        past integer;
        future integer;
        utc_now timestamp := now() AT TIME ZONE 'UTC';
      BEGIN
        IF p_month IS NULL THEN
          RAISE EXCEPTION 'ensure_event_partition: the month must not be null' USING ERRCODE = 'null_value_not_allowed';
        END IF;
        first_day := date_trunc('month', p_month)::date;
        SELECT w.max_past_days, w.max_future_days INTO past, future FROM bronze.partition_window w;
        IF past IS NULL THEN
          RAISE EXCEPTION 'ensure_event_partition: bronze.partition_window is empty' USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
        IF first_day < date_trunc('month', utc_now - make_interval(days => past + 1))::date
           OR first_day > (date_trunc('month', utc_now + make_interval(days => future + 1)) + interval '1 month')::date THEN
          RAISE EXCEPTION 'no Bronze partition for %: outside the accepted occurredAt window (% days back, % day(s) ahead)',
                          to_char(first_day, 'YYYY-MM'), past, future
            USING ERRCODE = 'invalid_parameter_value';
        END IF;
        part := format('events_%s', to_char(first_day, 'YYYY_MM'));
        IF to_regclass(format('bronze.%I', part)) IS NOT NULL THEN
          RETURN part;
        END IF;
        PERFORM pg_advisory_xact_lock(hashtext('bronze.events partitions'));
        BEGIN
${make}
          EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON bronze.%I FOR EACH STATEMENT EXECUTE FUNCTION bronze.reject_mutation()',
                         part || '_no_truncate', part);
${attach}
        EXCEPTION WHEN duplicate_table OR unique_violation OR duplicate_object THEN
          NULL; -- another session created this month (with its trigger) first
        END;
        RETURN part;
      END $$`;

const BOUNDS = `(first_day::timestamp AT TIME ZONE 'UTC'),
                         ((first_day + interval '1 month')::timestamp AT TIME ZONE 'UTC')`;

/** Before: the partition made in place, under an ACCESS EXCLUSIVE lock on bronze.events. */
const CREATE_IN_PLACE = `          EXECUTE format('CREATE TABLE bronze.%I PARTITION OF bronze.events FOR VALUES FROM (%L) TO (%L)',
                         part,
                         ${BOUNDS});`;

/**
 * After: the month's table made on its own (the same columns, defaults and checks; its bounds as a
 * check, so attaching does not scan it), then attached. The row triggers and the indexes of
 * bronze.events are cloned onto it by the attach.
 */
const CREATE_APART = `          EXECUTE format('CREATE TABLE bronze.%I (LIKE bronze.events INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE, CHECK (occurred_at >= %L AND occurred_at < %L))',
                         part,
                         ${BOUNDS});`;
const ATTACH = `          EXECUTE format('ALTER TABLE bronze.events ATTACH PARTITION bronze.%I FOR VALUES FROM (%L) TO (%L)',
                         part,
                         ${BOUNDS});`;

/**
 * A new month of Bronze no longer stops the readers of bronze.events (issue 45).
 *
 * `CREATE TABLE … PARTITION OF bronze.events` takes an ACCESS EXCLUSIVE lock on bronze.events: it
 * waits behind any transaction that has read events (a derivation batch stays open while it
 * extracts, for seconds) and every reader that comes after it queues behind it. The service's
 * retries (`ensureEventPartition`) kept the readers' wait short, but the ingest call that brought
 * the month waited for a gap: 10.8 s for a 500-event call while the previous batch was derived.
 * Attaching a table made apart takes only SHARE UPDATE EXCLUSIVE on bronze.events (PostgreSQL 12
 * and later), which readers and writers do not conflict with: the month is made at once, and
 * nobody waits.
 */
export class PartitionsAttach1764400001480 implements MigrationInterface {
  name = 'PartitionsAttach1764400001480';

  async up(q: QueryRunner): Promise<void> {
    await q.query(definition(CREATE_APART, ATTACH));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(definition(CREATE_IN_PLACE));
  }
}
