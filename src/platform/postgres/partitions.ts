import { DataSource } from 'typeorm';
import { pgError } from './pg-error';
import { Sql } from './sql';

/** How far from now an event's `occurredAt` may be (OCCURRED_AT_MAX_PAST_DAYS / _FUTURE_DAYS). */
export interface OccurredAtWindow {
  readonly maxPastDays: number;
  readonly maxFutureDays: number;
}

const DAY_MS = 86_400_000;

const firstOfMonth = (t: number): Date => {
  const d = new Date(t);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
};
const isoDate = (d: Date): string => d.toISOString().slice(0, 10);

/**
 * The months to have a partition for before anyone ingests into them: last month, this month and
 * every month up to the one after the window's far edge (so next month exists before it begins).
 * Older months inside the window are made on first use by `bronze.ensure_event_partition` (a
 * backfill, not the steady flow of events).
 */
export function monthsAhead(now: Date, window: OccurredAtWindow): string[] {
  const earliest = firstOfMonth(now.getTime() - window.maxPastDays * DAY_MS).getTime();
  const edge = firstOfMonth(now.getTime() + window.maxFutureDays * DAY_MS);
  const last = new Date(Date.UTC(edge.getUTCFullYear(), edge.getUTCMonth() + 1, 1));
  const months: string[] = [];
  const start = firstOfMonth(now.getTime());
  for (
    let d = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() - 1, 1));
    d <= last;
    d = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1))
  ) {
    if (d.getTime() >= earliest) months.push(isoDate(d));
  }
  return months;
}

/** Stores the window that `bronze.ensure_event_partition` enforces. Owner connection only. */
export async function setPartitionWindow(owner: DataSource, window: OccurredAtWindow): Promise<void> {
  await owner.query(
    `INSERT INTO bronze.partition_window (singleton, max_past_days, max_future_days, updated_at) VALUES (true, $1, $2, now())
     ON CONFLICT (singleton) DO UPDATE SET max_past_days = EXCLUDED.max_past_days, max_future_days = EXCLUDED.max_future_days, updated_at = now()
     WHERE (bronze.partition_window.max_past_days, bronze.partition_window.max_future_days) IS DISTINCT FROM (EXCLUDED.max_past_days, EXCLUDED.max_future_days)`,
    [window.maxPastDays, window.maxFutureDays],
  );
}

/** Creates the partitions of `monthsAhead` that are missing (an existing month costs a catalog lookup). */
export async function precreatePartitions(ds: DataSource, now: Date, window: OccurredAtWindow): Promise<string[]> {
  const months = monthsAhead(now, window);
  const rows: Array<{ part: string }> = await ds.query(`SELECT bronze.ensure_event_partition(m) AS part FROM unnest($1::date[]) AS m`, [months]);
  return rows.map((r) => r.part);
}

/**
 * Keeps next month's partition made ahead of time, so the ingest path never creates one for the
 * current flow of events: at start and then every `everyMs` (hourly by default), through the
 * runtime role's EXECUTE on the SECURITY DEFINER partition maker.
 */
export class PartitionUpkeep {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ds: DataSource,
    private readonly window: OccurredAtWindow,
    private readonly warn: (msg: string) => void,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async runOnce(): Promise<string[]> {
    return precreatePartitions(this.ds, this.now(), this.window);
  }

  start(everyMs = 3_600_000): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.runOnce().catch((err: unknown) =>
        this.warn(`creating Bronze partitions ahead failed (retried in ${everyMs} ms): ${err instanceof Error ? err.message : String(err)}`),
      );
    }, everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** How long one attempt at a new partition waits for its lock on bronze.events (`lock_timeout`). */
export const PARTITION_LOCK_WAIT_MS = 50;
/** Attempts that give up after `PARTITION_LOCK_WAIT_MS`; the one after them waits as long as it takes. */
export const PARTITION_ATTEMPTS = 40;

/**
 * `bronze.ensure_event_partition(month)`, never stalling the readers of bronze.events. The month's
 * table is made apart and attached (migration 1764400001480), which takes SHARE UPDATE EXCLUSIVE
 * on bronze.events: readers, writers and a derivation batch's open transaction do not conflict
 * with it, so the month is made at once. (Made in place, `CREATE TABLE … PARTITION OF` took ACCESS
 * EXCLUSIVE: it waited behind a derivation batch open for seconds and every later reader queued
 * behind it, a search 1.9 s and an ingest call 10.8 s.) What still conflicts is maintenance of
 * bronze.events (ANALYZE, VACUUM) or another month being attached: each attempt waits at most
 * `PARTITION_LOCK_WAIT_MS`, then tries again after a short pause that grows (25 ms doubling, at
 * most 250 ms, jittered); after `PARTITION_ATTEMPTS` it waits as long as it takes, so an ingest
 * never fails because the table is busy. A month that exists costs one catalog lookup and takes no
 * lock.
 */
export async function ensureEventPartition(sql: Sql, month: string, opts: { attempts?: number; sleep?: (ms: number) => Promise<void> } = {}): Promise<void> {
  const attempts = opts.attempts ?? PARTITION_ATTEMPTS;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let attempt = 1; ; attempt++) {
    const patient = attempt > attempts;
    try {
      await sql.transaction(async (tx) => {
        if (!patient) await tx.execute(`SET LOCAL lock_timeout = '${PARTITION_LOCK_WAIT_MS}ms'`);
        await tx.execute(`SELECT bronze.ensure_event_partition($1::date)`, [month]);
      });
      return;
    } catch (err) {
      // 55P03 lock_not_available: the lock (the table's, or the creators' advisory lock) was not free in time.
      if (patient || pgError(err)?.code !== '55P03') throw err;
      await sleep(Math.min(250, 25 * 2 ** Math.min(attempt, 4)) * (0.5 + Math.random() / 2));
    }
  }
}
