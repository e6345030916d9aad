import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The owner-side path into Bronze for a runtime role that owns nothing there.
 *
 * The service's runtime role holds only SELECT and INSERT on `bronze.events` and
 * `bronze.event_keys` (granted at start by `grantRuntimePrivileges`), so it cannot create a
 * partition itself. `bronze.ensure_event_partition` becomes SECURITY DEFINER (it runs as its
 * owner, the migration role) with a fixed search_path, and refuses any month outside the
 * accepted `occurredAt` window, which the owner writes to `bronze.partition_window` at start.
 * EXECUTE is revoked from PUBLIC; the runtime role gets it by name.
 */
export class BronzeOwnerPath1764400000005 implements MigrationInterface {
  name = 'BronzeOwnerPath1764400000005';

  async up(q: QueryRunner): Promise<void> {
    // One row: how far back and ahead of now() a partition may be created. The service overwrites
    // it at start from OCCURRED_AT_MAX_PAST_DAYS / OCCURRED_AT_MAX_FUTURE_DAYS.
    await q.query(`
      CREATE TABLE bronze.partition_window (
        singleton        boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        max_past_days    integer NOT NULL CHECK (max_past_days >= 1),
        max_future_days  integer NOT NULL CHECK (max_future_days >= 0),
        updated_at       timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`INSERT INTO bronze.partition_window (max_past_days, max_future_days) VALUES (7305, 1)`);
    await q.query(`REVOKE ALL ON TABLE bronze.partition_window FROM PUBLIC`);

    // Every name is schema-qualified and search_path is pinned, so a caller cannot substitute
    // its own functions or tables. The argument is a date: the partition name is derived from
    // it, never taken from the caller. One day of slack on each side absorbs clock differences
    // between the service and the database; one month beyond the far edge lets next month's
    // partition be made before that month begins.
    await q.query(`
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
          EXECUTE format('CREATE TABLE bronze.%I PARTITION OF bronze.events FOR VALUES FROM (%L) TO (%L)',
                         part,
                         (first_day::timestamp AT TIME ZONE 'UTC'),
                         ((first_day + interval '1 month')::timestamp AT TIME ZONE 'UTC'));
          EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON bronze.%I FOR EACH STATEMENT EXECUTE FUNCTION bronze.reject_mutation()',
                         part || '_no_truncate', part);
        EXCEPTION WHEN duplicate_table OR unique_violation OR duplicate_object THEN
          NULL; -- another session created this month (with its trigger) first
        END;
        RETURN part;
      END $$`);
    await q.query(`REVOKE ALL ON FUNCTION bronze.ensure_event_partition(date) FROM PUBLIC`);
  }

  async down(q: QueryRunner): Promise<void> {
    // Back to the definition of PartitionRace1764400000004: SECURITY INVOKER, no window.
    await q.query(`
      CREATE OR REPLACE FUNCTION bronze.ensure_event_partition(p_month date) RETURNS text
      LANGUAGE plpgsql SECURITY INVOKER AS $$
      DECLARE
        first_day date := date_trunc('month', p_month)::date;
        part text := format('events_%s', to_char(first_day, 'YYYY_MM'));
      BEGIN
        IF to_regclass(format('bronze.%I', part)) IS NOT NULL THEN
          RETURN part;
        END IF;
        PERFORM pg_advisory_xact_lock(hashtext('bronze.events partitions'));
        BEGIN
          EXECUTE format('CREATE TABLE bronze.%I PARTITION OF bronze.events FOR VALUES FROM (%L) TO (%L)',
                         part,
                         (first_day::timestamp AT TIME ZONE 'UTC'),
                         ((first_day + interval '1 month')::timestamp AT TIME ZONE 'UTC'));
          EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON bronze.%I FOR EACH STATEMENT EXECUTE FUNCTION bronze.reject_mutation()',
                         part || '_no_truncate', part);
        EXCEPTION WHEN duplicate_table OR unique_violation OR duplicate_object THEN
          NULL;
        END;
        RETURN part;
      END $$`);
    await q.query(`ALTER FUNCTION bronze.ensure_event_partition(date) RESET search_path`);
    await q.query(`GRANT EXECUTE ON FUNCTION bronze.ensure_event_partition(date) TO PUBLIC`);
    await q.query(`DROP TABLE bronze.partition_window`);
  }
}
