import { MigrationInterface, QueryRunner } from 'typeorm';
import { FunctionEdit, rewriteFunction } from './function-edit';

const SIGNATURE = 'bronze.ensure_event_partition(date)';

/** Before: the partition made in place, under an ACCESS EXCLUSIVE lock on bronze.events. */
const IN_PLACE = `'CREATE TABLE bronze.%I PARTITION OF bronze.events FOR VALUES FROM (%L) TO (%L)'`;
/**
 * After: the month's table made on its own, with the same arguments (name, bounds): the columns,
 * defaults and checks of bronze.events, its bounds as a check so attaching does not scan it.
 */
const APART = `'CREATE TABLE bronze.%I (LIKE bronze.events INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE, CHECK (occurred_at >= %L AND occurred_at < %L))'`;

/** The last statement of the creation (the TRUNCATE trigger), which the attach follows. */
const TRIGGER_END = `part || '_no_truncate', part);`;
/** The attach, which clones the indexes and the row triggers of bronze.events onto the month. */
const ATTACH = `${TRIGGER_END}
          EXECUTE format('ALTER TABLE bronze.events ATTACH PARTITION bronze.%I FOR VALUES FROM (%L) TO (%L)',
                         part,
                         (first_day::timestamp AT TIME ZONE 'UTC'),
                         ((first_day + interval '1 month')::timestamp AT TIME ZONE 'UTC'));`;

const UP: FunctionEdit[] = [
  { signature: SIGNATURE, from: IN_PLACE, to: APART },
  { signature: SIGNATURE, from: TRIGGER_END, to: ATTACH },
];
const DOWN: FunctionEdit[] = UP.map((e) => ({ signature: e.signature, from: e.to, to: e.from })).reverse();

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
 * nobody waits. The rest of `bronze.ensure_event_partition` (migration 1764400000005) is unchanged.
 */
export class PartitionsAttach1764400001480 implements MigrationInterface {
  name = 'PartitionsAttach1764400001480';

  async up(q: QueryRunner): Promise<void> {
    for (const edit of UP) await rewriteFunction(q, edit);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const edit of DOWN) await rewriteFunction(q, edit);
  }
}
