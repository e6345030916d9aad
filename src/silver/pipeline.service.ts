import { DataSource } from 'typeorm';
import { col, Sql } from '../platform/postgres/sql';
import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { AccessException, AccessExceptionCode } from '../access/access.exception';
import { SilverException, SilverExceptionCode } from './silver.exception';
import { isUuid } from '../common/ids';
import { requireEventTime, requireWithin } from '../common/input';
import { MAX_JOB_REASON } from '../common/limits';
import { JobRow } from '../platform/jobs/job';
import { parsePayload } from '../platform/jobs/job-kinds';
import { JobRepository } from '../platform/jobs/job.repository';

export interface PipelineStatusRow {
  namespace: string;
  pending: number;
  deadLetters: number;
  outboxLag: number;
  oldestPendingSeconds: number | null;
}

/** Pipeline state and operator actions: status, dead-letter retries, rebuild jobs. */
export class PipelineService {
  private readonly sql: Sql;

  constructor(
    ds: DataSource,
    private readonly jobs: JobRepository,
  ) {
    this.sql = Sql.of(ds);
  }

  async status(auth: AuthContext, namespace: string): Promise<PipelineStatusRow> {
    auth.require(Capability.READ, namespace);
    return this.sql.one(
      `SELECT (SELECT count(*)::int FROM ops.derivation_queue WHERE namespace = $1 AND status = 'pending') AS pending,
              (SELECT count(*)::int FROM silver.dead_letters WHERE namespace = $1 AND resolved_at IS NULL) AS dead_letters,
              (SELECT count(*)::int FROM ops.outbox WHERE namespace = $1 AND processed_at IS NULL) AS outbox_lag,
              (SELECT extract(epoch FROM now() - min(enqueued_at))::float FROM ops.derivation_queue WHERE namespace = $1 AND status = 'pending') AS oldest`,
      [namespace],
      (r) => ({
        namespace,
        pending: col.number(r, 'pending'),
        deadLetters: col.number(r, 'dead_letters'),
        outboxLag: col.number(r, 'outbox_lag'),
        oldestPendingSeconds: col.numberOrNull(r, 'oldest'),
      }),
    );
  }

  /** Makes every failed event of the namespace due again with fresh attempts; returns how many. */
  async retryDeadLetters(auth: AuthContext, namespace: string): Promise<number> {
    auth.require(Capability.ADMIN, namespace);
    return this.sql.transaction(async (tx) => {
      const retried = await tx.returning(
        `UPDATE ops.derivation_queue SET status = 'pending', attempts = 0, available_at = now() WHERE namespace = $1 AND status = 'failed' RETURNING event_id`,
        [namespace],
        (r) => col.string(r, 'event_id'),
      );
      await tx.execute(`UPDATE silver.dead_letters SET next_retry_at = now(), updated_at = now() WHERE namespace = $1 AND resolved_at IS NULL`, [namespace]);
      return retried.length;
    });
  }

  /** Queues a rebuild of the namespace's Silver rows from Bronze (optionally a time window of events). */
  async requestRebuild(auth: AuthContext, namespace: string, from: Date | null, to: Date | null, reason: string): Promise<JobRow> {
    const principal = auth.require(Capability.ADMIN, namespace);
    if (reason.trim().length < 3)
      throw new SilverException(SilverExceptionCode.INVALID_ARGUMENT, 'reason is required: say why Silver is rebuilt (it is kept with the job)');
    requireWithin(reason, 'reason', MAX_JOB_REASON);
    if (from) requireEventTime(from, 'from', 'omit from to rebuild from the first event');
    if (to) requireEventTime(to, 'to', 'omit to to rebuild up to the last event');
    if (from && to && from >= to) throw new SilverException(SilverExceptionCode.INVALID_ARGUMENT, 'from must be before to');
    const window = { from: from?.toISOString() ?? null, to: to?.toISOString() ?? null };
    const { job, created } = await this.jobs.enqueue({ kind: 'rebuild_silver', namespace, params: window, reason, createdBy: principal.tokenId });
    const held = created ? window : parsePayload('rebuild_silver', await this.jobs.paramsOf(job.id));
    if (held.from !== window.from || held.to !== window.to) {
      throw new SilverException(
        SilverExceptionCode.INVALID_ARGUMENT,
        `a rebuild of ${namespace} over another window is already ${job.status} (job ${job.id}): wait for it to finish (the job(id) query or the jobProgress subscription), then request this one`,
      );
    }
    return job;
  }

  /**
   * Queues a re-projection of Postgres into Neo4j for a namespace, or for all of them (needs
   * "admin" on "*"). Neo4j is a projection: this is always safe to run.
   */
  async requestGraphRebuild(auth: AuthContext, namespace: string | null, reason: string | null): Promise<JobRow> {
    const principal = namespace ? auth.require(Capability.ADMIN, namespace) : auth.requirePrincipal();
    if (!namespace && !principal.grants.some((g) => g.namespacePattern === '*' && g.capabilities.includes(Capability.ADMIN))) {
      throw new AccessException(AccessExceptionCode.FORBIDDEN, 'rebuilding the whole graph needs "admin" on "*"; pass a namespace to rebuild one');
    }
    const reasonText = requireWithin(reason?.trim() || 'graph rebuild requested', 'reason', MAX_JOB_REASON);
    // One already queued or running for the namespace does the same: it is returned instead.
    return (await this.jobs.enqueue({ kind: 'rebuild_graph', namespace, params: {}, reason: reasonText, createdBy: principal.tokenId })).job;
  }

  async job(auth: AuthContext, id: string): Promise<JobRow | null> {
    auth.requirePrincipal();
    const job = await this.jobById(id);
    if (!job) return null;
    // A job over every namespace (graph rebuild of all) is visible to admins of "*" only.
    return auth.can(Capability.READ, job.namespace ?? '*') && (job.namespace !== null || auth.can(Capability.ADMIN, '*')) ? job : null;
  }

  async jobById(id: string): Promise<JobRow | null> {
    return isUuid(id) ? this.jobs.byId(id) : null;
  }
}
