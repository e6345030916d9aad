import { Sql } from '../postgres/sql';
import { ClaimedJob, JobOutcome } from './job';
import { JobProgress, RetryPolicy } from './job.repository';

/** What a running handler may do with its job besides returning an outcome. */
export interface JobContext {
  readonly workerId: string;
  /**
   * Records progress and renews the lease. Reports are written in order, and the kernel waits
   * for all of them before it finishes the job, so a synchronous progress callback may call this
   * without awaiting. Inside the handler's own transaction (`tx`), the report commits with it.
   * Rejects with LostLeaseError once another worker holds the job.
   */
  progress(p: JobProgress, tx?: Sql): Promise<void>;
  /**
   * Locks the job row in the handler's transaction and throws LostLeaseError unless this worker
   * still holds it: call it first in any transaction whose writes must not land twice.
   */
  fence(tx: Sql): Promise<void>;
  /** True once a write found the lease taken (the handler may stop early; nothing it reports lands). */
  readonly leaseLost: boolean;
}

/**
 * Runs one kind of job. `run` re-reads the state it works on (the payload holds ids only), so a
 * second run after a crash, a lost lease or a retry does the same thing or finds nothing left to
 * do; it returns an outcome rather than throwing (a throw counts as `failed`).
 */
export interface JobHandler<P, K extends keyof P> {
  run(job: ClaimedJob<P, K>, ctx: JobContext): Promise<JobOutcome>;
  /** How long a run may go without progress or heartbeat before another worker may take the job (default: the worker's, JOB_LEASE_SECONDS). */
  leaseSeconds?: number;
  /** Default: one attempt (a failed run fails the job). */
  retry?: Partial<RetryPolicy>;
}

/** One handler per kind of the union: a kind without a handler does not compile. */
export type JobHandlers<P> = { [K in keyof P]: JobHandler<P, K> };
