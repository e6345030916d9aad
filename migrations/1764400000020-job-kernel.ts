import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The job kernel (src/jobs/): retries with backoff (`attempts`, `run_at`), a fencing token per
 * claim (`lease_token`: a worker whose lease was taken over cannot write the job any more), at
 * most one queued or running job per kind and namespace (a partial unique index, so concurrent
 * requests and schedules cannot queue a second one), and `ops.schedules`, which queue a job of a
 * kind for a namespace every `run_every`.
 */
export class JobKernel1764400000020 implements MigrationInterface {
  name = 'JobKernel1764400000020';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE ops.jobs
        ADD COLUMN attempts     integer NOT NULL DEFAULT 0,
        ADD COLUMN run_at       timestamptz NOT NULL DEFAULT now(),
        ADD COLUMN lease_token  bigint NOT NULL DEFAULT 0,
        ADD COLUMN schedule_id  uuid`);
    // Older setups could queue the same kind twice for a namespace: keep the oldest active one.
    await q.query(`
      UPDATE ops.jobs j SET status = 'failed', finished_at = now(),
             error = 'dropped on upgrade: another job of this kind was already queued or running for the namespace'
       WHERE j.status IN ('queued', 'running')
         AND EXISTS (SELECT 1 FROM ops.jobs o
                      WHERE o.kind = j.kind AND coalesce(o.namespace, '') = coalesce(j.namespace, '')
                        AND o.status IN ('queued', 'running') AND (o.created_at, o.id) < (j.created_at, j.id))`);
    await q.query(`CREATE UNIQUE INDEX jobs_one_active_per_kind_namespace ON ops.jobs (kind, coalesce(namespace, '')) WHERE status IN ('queued', 'running')`);
    await q.query(`CREATE INDEX jobs_due_idx ON ops.jobs (run_at) WHERE status IN ('queued', 'running')`);
    await q.query(`
      CREATE TABLE ops.schedules (
        id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        kind           text NOT NULL,
        namespace      text,
        params         jsonb NOT NULL DEFAULT '{}',
        run_every      interval NOT NULL CHECK (run_every >= interval '1 second'),
        next_run_at    timestamptz NOT NULL DEFAULT now(),
        enabled        boolean NOT NULL DEFAULT true,
        last_fired_at  timestamptz,
        last_job_id    uuid,
        created_at     timestamptz NOT NULL DEFAULT now(),
        updated_at     timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX schedules_kind_namespace ON ops.schedules (kind, coalesce(namespace, ''))`);
    await q.query(`CREATE INDEX schedules_due_idx ON ops.schedules (next_run_at) WHERE enabled`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE ops.schedules`);
    await q.query(`DROP INDEX ops.jobs_due_idx`);
    await q.query(`DROP INDEX ops.jobs_one_active_per_kind_namespace`);
    await q.query(`ALTER TABLE ops.jobs DROP COLUMN schedule_id, DROP COLUMN lease_token, DROP COLUMN run_at, DROP COLUMN attempts`);
  }
}
