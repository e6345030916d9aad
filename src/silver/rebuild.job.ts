import { DataSource } from 'typeorm';
import { toJob } from './pipeline.service';

/**
 * `rebuild_silver` jobs. Starting one retires (soft) the Silver rows derived from the window's
 * events in one transaction, reopens older facts that retired ones had superseded, and re-queues
 * the window's events tagged with the job; the derive workers then re-derive them with the
 * current models. Progress = the job's queue rows that are done. Bronze is only read.
 */
export class RebuildJob {
  constructor(
    private readonly ds: DataSource,
    private readonly workerId: string,
  ) {}

  /** Starts the oldest queued rebuild, if any; returns its id. */
  async startNext(): Promise<string | null> {
    return this.ds.transaction(async (em) => {
      const rows: Array<Record<string, unknown>> = await em.query(
        `SELECT * FROM ops.jobs WHERE kind = 'rebuild_silver' AND status = 'queued' ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
      );
      if (!rows[0]) return null;
      const job = toJob(rows[0]);
      const params = rows[0].params as { from: string | null; to: string | null };
      const ns = job.namespace as string;
      const window = `q.namespace = $1 AND ($2::timestamptz IS NULL OR q.occurred_at >= $2) AND ($3::timestamptz IS NULL OR q.occurred_at < $3)`;
      const args = [ns, params.from, params.to];
      const full = params.from === null && params.to === null;

      const retired: Array<{ id: string }> = await em
        .query(
          `UPDATE silver.facts f SET retired_at = now()
          WHERE f.namespace = $1 AND f.retired_at IS NULL
            AND ($4 OR EXISTS (SELECT 1 FROM silver.fact_sources s JOIN ops.derivation_queue q ON q.event_id = s.event_id WHERE s.fact_id = f.id AND ${window}))
          RETURNING f.id`,
          [...args, full],
        )
        .then((r: [Array<{ id: string }>, number]) => r[0]);
      const retiredIds = retired.map((r) => r.id);
      const reopened: Array<{ id: string }> = await em
        .query(
          `UPDATE silver.facts SET valid_to = NULL, superseded_by = NULL
          WHERE superseded_by = ANY($1::uuid[]) AND retired_at IS NULL RETURNING id`,
          [retiredIds],
        )
        .then((r: [Array<{ id: string }>, number]) => r[0]);
      const retiredRelationships: Array<{ id: string }> = await em
        .query(
          `UPDATE silver.relationships r SET retired_at = now()
          WHERE r.namespace = $1 AND r.retired_at IS NULL
            AND ($4 OR EXISTS (SELECT 1 FROM silver.relationship_sources s JOIN ops.derivation_queue q ON q.event_id = s.event_id WHERE s.relationship_id = r.id AND ${window}))
          RETURNING r.id`,
          [...args, full],
        )
        .then((r: [Array<{ id: string }>, number]) => r[0]);
      const retiredEntities: Array<{ id: string }> = full
        ? await em
            .query(`UPDATE silver.entities SET retired_at = now() WHERE namespace = $1 AND retired_at IS NULL RETURNING id`, [ns])
            .then((r: [Array<{ id: string }>, number]) => r[0])
        : [];
      // The graph projection mirrors retirements too (retiredAt on RELATED edges and Entity nodes).
      await em.query(
        `INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload)
         SELECT $1, x.type, x.id, 'upsert', jsonb_build_object('id', x.id, 'jobId', $2::text)
           FROM jsonb_to_recordset($3::jsonb) AS x(type text, id text, ord int) ORDER BY x.ord`,
        [
          ns,
          job.id,
          JSON.stringify(
            [...retiredEntities.map((r) => ({ type: 'entity', id: r.id })), ...retiredRelationships.map((r) => ({ type: 'relationship', id: r.id }))].map(
              (o, ord) => ({ ...o, ord }),
            ),
          ),
        ],
      );
      await em.query(
        `INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload)
         SELECT $1, 'fact', id::text, 'upsert', jsonb_build_object('id', id, 'jobId', $3::text) FROM unnest($2::uuid[]) AS id`,
        [ns, [...retiredIds, ...reopened.map((r) => r.id)], job.id],
      );
      const requeued: [unknown[], number] = await em.query(
        `UPDATE ops.derivation_queue q SET status = 'pending', attempts = 0, available_at = now(), processed_at = NULL, job_id = $4, last_error = NULL
          WHERE ${window} RETURNING event_id`,
        [...args, job.id],
      );
      await em.query(
        `UPDATE ops.jobs SET status = 'running', started_at = now(), progress_total = $2, progress_done = 0, locked_by = $3,
                message = $4 WHERE id = $1`,
        [
          job.id,
          requeued[0].length,
          this.workerId,
          `retired ${retiredIds.length} facts, reopened ${reopened.length}; re-deriving ${requeued[0].length} events`,
        ],
      );
      await em.query(`SELECT pg_notify('medallion_jobs', $1)`, [JSON.stringify({ id: job.id })]);
      return job.id;
    });
  }

  /** Updates the progress of running rebuilds; finishes those with nothing left pending. */
  async refreshRunning(): Promise<void> {
    const rows: Array<{ id: string; changed: boolean }> = await this.ds
      .query(
        `WITH p AS (
         SELECT j.id, j.progress_total,
                count(q.event_id) FILTER (WHERE q.status = 'done')::int AS done,
                count(q.event_id) FILTER (WHERE q.status = 'failed')::int AS failed,
                count(q.event_id) FILTER (WHERE q.status = 'pending')::int AS pending
           FROM ops.jobs j LEFT JOIN ops.derivation_queue q ON q.job_id = j.id
          WHERE j.kind = 'rebuild_silver' AND j.status = 'running'
          GROUP BY j.id, j.progress_total
       )
       UPDATE ops.jobs j SET progress_done = p.done,
              status = CASE WHEN p.pending = 0 THEN 'succeeded' ELSE 'running' END,
              finished_at = CASE WHEN p.pending = 0 THEN now() ELSE NULL END,
              message = CASE WHEN p.pending = 0 THEN format('re-derived %s of %s events (%s in dead letters)', p.done, p.progress_total, p.failed) ELSE j.message END
         FROM p WHERE j.id = p.id AND (j.progress_done <> p.done OR p.pending = 0)
       RETURNING j.id`,
      )
      .then((r: [Array<{ id: string; changed: boolean }>, number]) => r[0]);
    for (const r of rows) await this.ds.query(`SELECT pg_notify('medallion_jobs', $1)`, [JSON.stringify({ id: r.id })]);
  }
}

/** One job step for a PollingLoop: starts queued rebuilds and refreshes running ones. */
export function rebuildStep(job: RebuildJob): () => Promise<boolean> {
  return async () => {
    const started = await job.startNext();
    await job.refreshRunning();
    return started !== null;
  };
}
