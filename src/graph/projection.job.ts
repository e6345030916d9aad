import { Driver } from 'neo4j-driver';
import { DataSource } from 'typeorm';
import { EventNodeRow, mergeEventNodes } from './cypher/event-nodes';

interface OutboxRow {
  id: string;
  aggregate_type: string;
  op: string;
  payload: EventNodeRow;
  attempts: number;
}

export type ProjectionResult = { kind: 'success'; projected: number } | { kind: 'skipped' } | { kind: 'failed'; error: string; rows: number };

/** Retry delay after a failed write: 2^attempts seconds, capped. */
const MAX_BACKOFF_SECONDS = 300;

/**
 * Drains `ops.outbox` into Neo4j: claims a batch (`FOR UPDATE SKIP LOCKED`, oldest first), MERGEs
 * it in one Neo4j transaction and marks it processed in the same Postgres transaction. When Neo4j
 * fails the rows stay pending with exponential backoff, so nothing is lost while it is down.
 */
export class ProjectionJob {
  constructor(
    private readonly ds: DataSource,
    private readonly neo4j: Driver,
    private readonly batchSize: number,
  ) {}

  async runOnce(): Promise<ProjectionResult> {
    return this.ds.transaction(async (em) => {
      const rows: OutboxRow[] = await em.query(
        `SELECT id, aggregate_type, op, payload, attempts FROM ops.outbox
          WHERE processed_at IS NULL AND available_at <= now()
          ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [this.batchSize],
      );
      if (rows.length === 0) return { kind: 'skipped' } as const;
      const ids = rows.map((r) => r.id);
      try {
        const events = rows.filter((r) => r.aggregate_type === 'event' && r.op === 'upsert').map((r) => r.payload);
        await this.neo4j.executeQuery('RETURN 1'); // fail fast before opening a write transaction
        const session = this.neo4j.session();
        try {
          await session.executeWrite((tx) => mergeEventNodes(tx, events));
        } finally {
          await session.close();
        }
        await em.query(`UPDATE ops.outbox SET processed_at = now(), last_error = NULL WHERE id = ANY($1::bigint[])`, [ids]);
        return { kind: 'success', projected: rows.length } as const;
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        await em.query(
          `UPDATE ops.outbox SET attempts = attempts + 1, last_error = $2,
                  available_at = now() + make_interval(secs => least(power(2, attempts + 1), $3))
            WHERE id = ANY($1::bigint[])`,
          [ids, error.slice(0, 2000), MAX_BACKOFF_SECONDS],
        );
        return { kind: 'failed', error, rows: rows.length } as const;
      }
    });
  }
}

/** Runs the projection job in a loop until stopped; `wake()` skips the wait (new outbox rows). */
export class ProjectorLoop {
  private running = false;
  private wakeUp: (() => void) | undefined;
  private done: Promise<void> | undefined;

  constructor(
    private readonly job: ProjectionJob,
    private readonly pollMs: number,
    private readonly log: (msg: string) => void,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.done = this.loop();
  }

  wake(): void {
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.done;
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (this.running) {
      let result: ProjectionResult;
      try {
        result = await this.job.runOnce();
      } catch (err) {
        result = { kind: 'failed', error: String(err), rows: 0 };
      }
      if (result.kind === 'success') {
        failures = 0;
        continue; // more may be waiting
      }
      if (result.kind === 'failed') {
        failures += 1;
        if (failures === 1 || failures % 20 === 0) this.log(`projector: Neo4j write failed (${result.error}); will retry`);
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.pollMs);
        this.wakeUp = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }
}
