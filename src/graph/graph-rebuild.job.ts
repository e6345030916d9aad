import { DataSource } from 'typeorm';
import { toJob } from '../silver/pipeline.service';
import { GraphRebuildService } from './graph-rebuild.service';

/** How long a running graph rebuild may go without progress before another worker may take it. */
const LEASE_SECONDS = 600;

/**
 * `rebuild_graph` jobs: re-project a namespace (or everything) from Postgres into Neo4j. The job
 * is claimed in one statement (no transaction stays open while it runs) and reports progress
 * through ops.jobs and NOTIFY, like Silver rebuilds.
 */
export class GraphRebuildJob {
  constructor(
    private readonly ds: DataSource,
    private readonly graph: GraphRebuildService,
    private readonly workerId: string,
  ) {}

  /** Runs the oldest queued (or abandoned) graph rebuild, if any; true when one ran. */
  async runNext(): Promise<boolean> {
    const rows: Array<Record<string, unknown>> = await this.ds
      .query(
        `UPDATE ops.jobs SET status = 'running', started_at = coalesce(started_at, now()), locked_by = $1,
                locked_until = now() + make_interval(secs => $2), progress_done = 0
          WHERE id = (SELECT id FROM ops.jobs
                       WHERE kind = 'rebuild_graph' AND (status = 'queued' OR (status = 'running' AND locked_until < now()))
                       ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
          RETURNING *`,
        [this.workerId, LEASE_SECONDS],
      )
      .then((r: [Array<Record<string, unknown>>, number]) => r[0]);
    const row = rows[0];
    if (!row) return false;
    const job = toJob(row);
    await this.notify(job.id);
    // Progress writes run one after another and all land before the final status.
    let progress: Promise<void> = Promise.resolve();
    try {
      let done = 0;
      const result = await this.graph.rebuildGraph(job.namespace, {
        onProgress: (p) => {
          done += 1;
          const step = done;
          progress = progress
            .then(() =>
              this.ds.query(
                `UPDATE ops.jobs SET progress_done = $2, message = $3, locked_until = now() + make_interval(secs => $4) WHERE id = $1 AND status = 'running'`,
                [job.id, step, `${p.phase}: ${p.done}`, LEASE_SECONDS],
              ),
            )
            .then(() => this.notify(job.id))
            .catch(() => undefined);
        },
      });
      await progress;
      await this.ds.query(`UPDATE ops.jobs SET status = 'succeeded', finished_at = now(), progress_total = progress_done, message = $2 WHERE id = $1`, [
        job.id,
        `deleted ${result.deleted} nodes; projected ${result.events} events, ${result.entities} entities, ${result.facts} facts, ${result.relationships} relationships in ${result.ms} ms`,
      ]);
    } catch (err) {
      await progress;
      await this.ds.query(`UPDATE ops.jobs SET status = 'failed', finished_at = now(), error = $2 WHERE id = $1`, [
        job.id,
        (err instanceof Error ? err.message : String(err)).slice(0, 4000),
      ]);
    }
    await this.notify(job.id);
    return true;
  }

  private async notify(id: string): Promise<void> {
    await this.ds.query(`SELECT pg_notify('medallion_jobs', $1)`, [JSON.stringify({ id })]);
  }
}
