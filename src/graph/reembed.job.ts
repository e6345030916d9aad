import { DataSource } from 'typeorm';
import { toJob } from '../silver/pipeline.service';
import { ReembedService } from './reembed.service';

/** How long a running re-embedding may go without progress before another worker may take it. */
const LEASE_SECONDS = 600;

/**
 * `reembed` jobs (ReembedService): claimed in one statement, progress in ops.jobs and NOTIFY
 * (jobProgress), like graph rebuilds. A re-run after a crash picks up where the vectors stop.
 */
export class ReembedJob {
  constructor(
    private readonly ds: DataSource,
    private readonly reembed: ReembedService,
    private readonly workerId: string,
  ) {}

  /** Runs the oldest queued (or abandoned) re-embedding, if any; true when one ran. */
  async runNext(): Promise<boolean> {
    const rows = (await this.ds.query(
      `UPDATE ops.jobs SET status = 'running', started_at = coalesce(started_at, now()), locked_by = $1,
              locked_until = now() + make_interval(secs => $2), progress_done = 0
        WHERE id = (SELECT id FROM ops.jobs
                     WHERE kind = 'reembed' AND (status = 'queued' OR (status = 'running' AND locked_until < now()))
                     ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING *`,
      [this.workerId, LEASE_SECONDS],
    )) as [Array<Record<string, unknown>>, number];
    const row = rows[0][0];
    if (!row) return false;
    const job = toJob(row);
    await this.notify(job.id);
    let progress: Promise<void> = Promise.resolve();
    try {
      const result = await this.reembed.run(job.namespace, (p) => {
        progress = progress
          .then(() =>
            this.ds.query(
              `UPDATE ops.jobs SET progress_done = progress_done + 1, message = $2, locked_until = now() + make_interval(secs => $3) WHERE id = $1 AND status = 'running'`,
              [job.id, `${p.phase}: ${p.done}`, LEASE_SECONDS],
            ),
          )
          .then(() => this.notify(job.id))
          .catch(() => undefined);
      });
      await progress;
      await this.ds.query(`UPDATE ops.jobs SET status = 'succeeded', finished_at = now(), progress_total = progress_done, message = $2 WHERE id = $1`, [
        job.id,
        `embedded ${result.facts} facts and ${result.events} events with ${result.model}`,
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
