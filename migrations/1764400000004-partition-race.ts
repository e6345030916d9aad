import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Makes bronze.ensure_event_partition safe when several sessions create the same month at once.
 * An advisory lock does not refresh a session's catalog view, so a waiter could miss the table
 * the holder just created and fail with "already exists"; that case is now caught and ignored.
 */
export class PartitionRace1764400000004 implements MigrationInterface {
  name = 'PartitionRace1764400000004';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION bronze.ensure_event_partition(p_month date) RETURNS text LANGUAGE plpgsql AS $$
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
          NULL; -- another session created this month (with its trigger) first
        END;
        RETURN part;
      END $$`);
  }

  async down(): Promise<void> {
    // The previous definition differs only in the race handling; keeping this one is harmless.
  }
}
