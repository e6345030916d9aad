import { col, SqlRow } from '../postgres/sql';

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed';

/** A job as callers see it (`job`, `jobProgress`, the rebuild mutations). */
export interface JobRow {
  id: string;
  kind: string;
  namespace: string | null;
  status: JobStatus;
  reason: string;
  progressDone: number;
  progressTotal: number | null;
  message: string | null;
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/** The columns `toJobRow` reads (every statement that returns jobs selects these). */
export const JOB_COLUMNS = `id::text AS id, kind, namespace, status, reason, progress_done, progress_total, message, error, created_at, started_at, finished_at`;

export function toJobRow(r: SqlRow): JobRow {
  return {
    id: col.string(r, 'id'),
    kind: col.string(r, 'kind'),
    namespace: col.stringOrNull(r, 'namespace'),
    status: col.string(r, 'status') as JobStatus,
    reason: col.string(r, 'reason'),
    progressDone: col.number(r, 'progress_done'),
    progressTotal: col.numberOrNull(r, 'progress_total'),
    message: col.stringOrNull(r, 'message'),
    error: col.stringOrNull(r, 'error'),
    createdAt: col.date(r, 'created_at'),
    startedAt: col.dateOrNull(r, 'started_at'),
    finishedAt: col.dateOrNull(r, 'finished_at'),
  };
}

/**
 * The right to write one job: its id and the token its claim drew. Every write the kernel makes
 * for the job checks the token, so a worker whose lease expired and was claimed again by another
 * (a stale worker) can neither report progress nor finish it.
 */
export interface Lease {
  readonly jobId: string;
  readonly token: number;
}

/** A job a worker holds, with its payload parsed for its kind. */
export interface ClaimedJob<P, K extends keyof P> {
  readonly id: string;
  readonly kind: K;
  readonly namespace: string | null;
  readonly params: P[K];
  readonly reason: string;
  /** Failed runs so far (a handler's `failed` or throw); 0 on the first run. */
  readonly attempts: number;
  readonly progressDone: number;
  readonly progressTotal: number | null;
  /** When a run of this job started: a later run after a crash or a `waiting` outcome keeps it. */
  readonly startedAt: Date;
  readonly lease: Lease;
}

/** A claimed row before its payload is parsed. */
export interface ClaimedRow {
  id: string;
  kind: string;
  namespace: string | null;
  params: unknown;
  reason: string;
  attempts: number;
  progressDone: number;
  progressTotal: number | null;
  startedAt: Date;
  leaseToken: number;
}

export function toClaimedRow(r: SqlRow): ClaimedRow {
  return {
    id: col.string(r, 'id'),
    kind: col.string(r, 'kind'),
    namespace: col.stringOrNull(r, 'namespace'),
    params: r.params,
    reason: col.string(r, 'reason'),
    attempts: col.number(r, 'attempts'),
    progressDone: col.number(r, 'progress_done'),
    progressTotal: col.numberOrNull(r, 'progress_total'),
    startedAt: col.date(r, 'started_at'),
    leaseToken: col.number(r, 'lease_token'),
  };
}

/**
 * What a handler reports: `success` (done; the message is kept on the job), `skipped` (nothing
 * to do once state was re-read; the job succeeds with the message), `failed` (retried with
 * backoff while the kind's attempts last, then failed for good), or `waiting` (the work goes on
 * elsewhere, e.g. derive workers re-deriving a rebuild's events: the lease is released and the
 * job runs again after `checkAfterMs`, still `running` to its watchers).
 */
export type JobOutcome =
  | { kind: 'success'; message: string; progressDone?: number }
  | { kind: 'skipped'; message: string }
  | { kind: 'failed'; error: string }
  | { kind: 'waiting'; checkAfterMs: number };

/** Thrown by a fenced write when another worker holds the job now; the handler's work is not committed. */
export class LostLeaseError extends Error {
  constructor(jobId: string) {
    super(`job ${jobId}: the lease was taken over by another worker`);
    this.name = 'LostLeaseError';
  }
}
