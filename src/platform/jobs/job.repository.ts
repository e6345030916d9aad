import { col, Sql } from '../postgres/sql';
import { retryDelaySql } from '../backoff';
import { FencedLease, Leases, LeaseTable } from '../lease';
import { JobPayloads, JobRequest } from './job-kinds';
import { notifying } from './job-notify';
import { ClaimedRow, JOB_COLUMNS, JobRow, Lease, toClaimedRow, toJobRow } from './job';

/** How often a kind's failed runs are retried, and how far apart. */
export interface RetryPolicy {
  /** Runs in all, the first included (1 = never retried). */
  maxAttempts: number;
  baseSeconds: number;
  maxSeconds: number;
}

export interface JobProgress {
  done?: number;
  /** A number sets the total; null clears it; undefined leaves it. */
  total?: number | null;
  message?: string;
}

/** A job's lease lives on its row (platform/lease.ts): claimed with the row, held while it runs. */
const JOB_LEASES: LeaseTable = { table: 'ops.jobs', key: 'id', holder: 'locked_by', until: 'locked_until', token: 'lease_token', live: `status = 'running'` };

/** The conflict target of the partial unique index: one queued or running job per kind and namespace. */
const ONE_ACTIVE = `ON CONFLICT (kind, (coalesce(namespace, ''))) WHERE status IN ('queued', 'running')`;

/**
 * `ops.jobs`, for every kind: queue (at most one active job per kind and namespace, enforced by
 * the database), claim (`FOR UPDATE SKIP LOCKED`), lease with a fencing token, progress, finish,
 * retry with backoff. Writes by a worker go through its `Lease`: once the lease was claimed again
 * by another worker, they change nothing and report false (or throw LostLeaseError, see JobWorker).
 */
export class JobRepository<P = JobPayloads> {
  private readonly leases: Leases;

  constructor(private readonly sql: Sql) {
    this.leases = new Leases(sql, JOB_LEASES);
  }

  /**
   * Queues a job, or, when one of its kind is already queued or running for the namespace,
   * returns that one with `created: false` (also under concurrent requests).
   */
  async enqueue(req: JobRequest<P>, tx: Sql = this.sql): Promise<{ job: JobRow; created: boolean }> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const [created] = await tx.returning(
        ...notifying(
          `INSERT INTO ops.jobs (kind, namespace, params, reason, created_by) VALUES ($1, $2, $3, $4, $5) ${ONE_ACTIVE} DO NOTHING RETURNING ${JOB_COLUMNS}`,
          [req.kind, req.namespace, JSON.stringify(req.params), req.reason, req.createdBy ?? null],
        ),
        toJobRow,
      );
      if (created) return { job: created, created: true };
      const active = await this.active(req.kind, req.namespace, tx);
      if (active) return { job: active, created: false };
      // The active job finished between the two statements: queue again.
    }
    throw new Error(`could not queue a ${req.kind} job for ${req.namespace ?? 'every namespace'}: jobs of this kind keep finishing meanwhile`);
  }

  async byId(id: string): Promise<JobRow | null> {
    return this.sql.maybeOne(`SELECT ${JOB_COLUMNS} FROM ops.jobs WHERE id = $1`, [id], toJobRow);
  }

  /** The stored params of a job (parse them with the kind's schema), or null when there is no such job. */
  async paramsOf(id: string): Promise<unknown> {
    return this.sql.maybeOne(`SELECT params FROM ops.jobs WHERE id = $1`, [id], (r) => r.params);
  }

  /** The queued or running job of a kind for a namespace (null: the all-namespaces job). */
  async active(kind: keyof P & string, namespace: string | null, tx: Sql = this.sql): Promise<JobRow | null> {
    return tx.maybeOne(
      `SELECT ${JOB_COLUMNS} FROM ops.jobs WHERE kind = $1 AND coalesce(namespace, '') = coalesce($2, '') AND status IN ('queued', 'running')`,
      [kind, namespace],
      toJobRow,
    );
  }

  /** True when a job of the kind is queued or running for any namespace. */
  async anyActive(kind: keyof P & string): Promise<boolean> {
    return this.sql.one(`SELECT EXISTS (SELECT 1 FROM ops.jobs WHERE kind = $1 AND status IN ('queued', 'running')) AS any`, [kind], (r) =>
      col.boolean(r, 'any'),
    );
  }

  /**
   * Claims the next due job of one of `leaseSeconds`' kinds: a queued one whose time has come,
   * or a running one whose lease ran out (its worker died, or it is `waiting`). The claim draws a
   * new lease token; no transaction stays open while the job runs.
   */
  async claim(workerId: string, leaseSeconds: Readonly<Record<string, number>>): Promise<ClaimedRow | null> {
    return this.sql.maybeOne(
      `UPDATE ops.jobs j SET status = 'running', started_at = coalesce(j.started_at, now()),
              ${this.leases.takeSet('j', '$1', '($3::jsonb ->> j.kind)::float8')}
        WHERE j.id = (SELECT id FROM ops.jobs
                       WHERE kind = ANY($2::text[])
                         AND ((status = 'queued' AND run_at <= now()) OR (status = 'running' AND ${this.leases.expired()}))
                       ORDER BY run_at, created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING j.id::text AS id, j.kind, j.namespace, j.params, j.reason, j.attempts, j.progress_done, j.progress_total, j.started_at, j.lease_token`,
      [workerId, Object.keys(leaseSeconds), JSON.stringify(leaseSeconds)],
      toClaimedRow,
    );
  }

  /** Extends the lease; false when it is no longer this worker's. */
  heartbeat(lease: Lease, leaseSeconds: number): Promise<boolean> {
    return this.leases.renew(fenced(lease), leaseSeconds);
  }

  /**
   * Locks the job row inside the caller's transaction and tells whether the lease still holds,
   * so a handler's own writes commit only under a live lease (nobody can claim it meanwhile).
   */
  holds(lease: Lease, tx: Sql): Promise<boolean> {
    return this.leases.fence(fenced(lease), tx);
  }

  /** Records progress (and extends the lease); false when the lease is lost. */
  async progress(lease: Lease, p: JobProgress, leaseSeconds: number, tx: Sql = this.sql): Promise<boolean> {
    const rows = await tx.returning(
      ...notifying(
        `UPDATE ops.jobs SET progress_done = coalesce($3::int, progress_done),
                progress_total = CASE WHEN $4::boolean THEN $5::int ELSE progress_total END,
                message = coalesce($6::text, message), locked_until = now() + make_interval(secs => $7)
          WHERE ${this.leases.held('$1', '$2')} RETURNING id`,
        [lease.jobId, lease.token, p.done ?? null, p.total !== undefined, p.total ?? null, p.message ?? null, leaseSeconds],
      ),
      (r) => r,
    );
    return rows.length === 1;
  }

  /** Marks the job succeeded (a skipped job too, with its reason as the message). */
  async succeed(lease: Lease, message: string, progressDone?: number): Promise<boolean> {
    const rows = await this.sql.returning(
      ...notifying(
        `UPDATE ops.jobs SET status = 'succeeded', finished_at = now(), message = $3, error = NULL,
                progress_done = coalesce($4::int, progress_done), progress_total = coalesce(progress_total, $4::int, progress_done),
                locked_by = NULL, locked_until = NULL
          WHERE ${this.leases.held('$1', '$2')} RETURNING id`,
        [lease.jobId, lease.token, message.slice(0, 4000), progressDone ?? null],
      ),
      (r) => r,
    );
    return rows.length === 1;
  }

  /** Records a failed run: queued again after a backoff while attempts last, else failed for good. */
  async fail(lease: Lease, error: string, retry: RetryPolicy): Promise<boolean> {
    const again = `attempts + 1 < $4`;
    const rows = await this.sql.returning(
      ...notifying(
        `UPDATE ops.jobs SET attempts = attempts + 1, error = $3, locked_by = NULL, locked_until = NULL,
                status = CASE WHEN ${again} THEN 'queued' ELSE 'failed' END,
                run_at = CASE WHEN ${again} THEN now() + ${retryDelaySql('attempts', '$5::float8', '$6::float8')} ELSE run_at END,
                finished_at = CASE WHEN ${again} THEN NULL ELSE now() END
          WHERE ${this.leases.held('$1', '$2')} RETURNING id`,
        [lease.jobId, lease.token, error.slice(0, 4000), retry.maxAttempts, retry.baseSeconds, retry.maxSeconds],
      ),
      (r) => r,
    );
    return rows.length === 1;
  }

  /** Releases the lease of a job that stays running (its work goes on elsewhere) until `ms` from now. */
  wait(lease: Lease, ms: number): Promise<boolean> {
    return this.leases.release(fenced(lease), { afterMs: ms, clearHolder: true });
  }
}

/** A job's lease as the lease mechanism sees it (the job row's id is its key). */
function fenced(lease: Lease): FencedLease {
  return { key: lease.jobId, token: lease.token };
}
