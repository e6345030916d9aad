import { Sql } from './postgres/sql';
import { retryDelaySql } from './backoff';

/** What one drain of an outbox batch did. */
export type DrainResult =
  | { kind: 'success'; projected: number }
  /** Nothing due, or another process is draining this consumer (it goes on while it has work). */
  | { kind: 'skipped' }
  | { kind: 'failed'; error: string; rows: number };

/**
 * One consumer of `ops.outbox` (the Silver projector, the Gold projector): how it claims a batch,
 * reads what the batch needs and writes it to its target. The drain owns the rest: the one
 * transaction, marking rows done, and the backoff of rows that failed.
 */
export interface OutboxConsumer<R extends { id: string }, B> {
  /**
   * Names the consumer's one drain: at most one drain per name runs at a time, across every
   * process (a transaction-scoped advisory lock). Two drains side by side could otherwise write
   * out of order: one that read an aggregate before a change commits its older state after the
   * drain of the change's own row wrote the newer one, and the target keeps the stale state with
   * every row marked done (the chaos run's lost supersessions). One at a time, writes land in the
   * order of their reads, and a change committed after a drain's read has a row that drain did not
   * claim, so a later drain writes it.
   */
  readonly name: string;
  /**
   * Claims the next batch inside the drain's transaction (`FOR UPDATE SKIP LOCKED`, so drains
   * side by side never take the same rows); the claimed `ops.outbox` rows (`id` is the row's), or
   * none when nothing is due.
   */
  claim(tx: Sql): Promise<R[]>;
  /**
   * Re-reads, in the same transaction, what the claimed rows stand for. It runs before the
   * write's try: an SQL error aborts the transaction, so no retry could be recorded anyway (the
   * rows stay claimable and the next drain tries again).
   */
  read(tx: Sql, rows: readonly R[]): Promise<B>;
  /** Writes the batch to the target; a throw leaves the rows pending. */
  write(batch: B): Promise<void>;
  /**
   * Whether a failed write says the target is down rather than that the rows are bad: such rows
   * stay as they are (the stage polls again), so the backlog drains the moment the target is back
   * instead of after a long backoff.
   */
  unavailable(err: unknown): boolean;
}

/** The consumers' names (`OutboxConsumer.name`): the graph rebuild takes their turns too. */
export const OUTBOX_DRAINS = { silverProjector: 'silver projector', goldProjector: 'gold projector' } as const;

const DRAIN_LOCK = `hashtextextended('ops.outbox drain:' || $1::text, 0)`;

/**
 * Runs `work` in the turn of the drain named `name`, waiting for a drain under way to end; no
 * drain of that consumer starts until `work` is done. For a writer of the same target beside the
 * drains (the graph rebuild): what it read and wrote inside its turn is not overwritten by a drain
 * that read before it, and what changed after its read has outbox rows a later drain writes.
 */
export async function inDrainTurn<T>(sql: Sql, name: string, work: () => Promise<T>): Promise<T> {
  return sql.transaction(async (tx) => {
    await tx.execute(`SELECT pg_advisory_xact_lock(${DRAIN_LOCK})`, [name]);
    return work();
  });
}

/** Retry delay of a failed write: 2 × 2^attempts seconds (backoff.ts), capped at this. */
export const OUTBOX_MAX_BACKOFF_SECONDS = 300;

/**
 * Drains one batch for `consumer`: claim, read, write, then mark the rows processed in the same
 * Postgres transaction, so a row is done only once its write went through. When the write fails
 * the rows stay pending, with exponential backoff unless the target was simply unavailable:
 * nothing is lost while it is down. One drain per consumer runs at a time (`OutboxConsumer.name`).
 */
export async function drainOutbox<R extends { id: string }, B>(sql: Sql, consumer: OutboxConsumer<R, B>): Promise<DrainResult> {
  return sql.transaction(async (tx) => {
    const mine = await tx.one(`SELECT pg_try_advisory_xact_lock(${DRAIN_LOCK}) AS ok`, [consumer.name], (r) => r.ok === true);
    if (!mine) return { kind: 'skipped' } as const;
    const rows = await consumer.claim(tx);
    if (rows.length === 0) return { kind: 'skipped' } as const;
    const ids = rows.map((r) => r.id);
    const batch = await consumer.read(tx, rows);
    try {
      await consumer.write(batch);
      await tx.execute(`UPDATE ops.outbox SET processed_at = now(), last_error = NULL WHERE id = ANY($1::bigint[])`, [ids]);
      return { kind: 'success', projected: ids.length } as const;
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      if (consumer.unavailable(err)) return { kind: 'failed', error, rows: ids.length } as const;
      await tx.execute(
        `UPDATE ops.outbox SET attempts = attempts + 1, last_error = $2,
                available_at = now() + ${retryDelaySql('attempts', '2', '$3')}
          WHERE id = ANY($1::bigint[])`,
        [ids, error.slice(0, 2000), OUTBOX_MAX_BACKOFF_SECONDS],
      );
      return { kind: 'failed', error, rows: ids.length } as const;
    }
  });
}

/**
 * A stage step over drains (`StageRunner`): true when one projected something. A failed drain is
 * logged at its first failure and every 20th after, then waits for the poll or a wake.
 */
export function drainStep(drain: () => Promise<DrainResult>, label: string, log: (msg: string) => void): () => Promise<boolean> {
  let failures = 0;
  return async () => {
    const result = await drain();
    if (result.kind === 'failed') {
      failures += 1;
      if (failures === 1 || failures % 20 === 0) log(`${label}: Neo4j write failed (${result.error}); will retry`);
      return false;
    }
    failures = 0;
    return result.kind === 'success';
  };
}
