import { DataSource } from 'typeorm';
import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { AccessException, AccessExceptionCode } from '../access/access.exception';
import { SilverException, SilverExceptionCode } from './silver.exception';
import { isUuid } from '../common/ids';
import { JobRow } from '../jobs/job';
import { parsePayload } from '../jobs/job-kinds';
import { JobRepository } from '../jobs/job.repository';

export interface PipelineStatusRow {
  namespace: string;
  pending: number;
  deadLetters: number;
  outboxLag: number;
  oldestPendingSeconds: number | null;
}

/** Pipeline state and operator actions: status, dead-letter retries, rebuild jobs. */
export class PipelineService {
  constructor(
    private readonly ds: DataSource,
    private readonly jobs: JobRepository,
  ) {}

  async status(auth: AuthContext, namespace: string): Promise<PipelineStatusRow> {
    auth.require(Capability.READ, namespace);
    const [row] = (await this.ds.query(
      `SELECT (SELECT count(*)::int FROM ops.derivation_queue WHERE namespace = $1 AND status = 'pending') AS pending,
              (SELECT count(*)::int FROM silver.dead_letters WHERE namespace = $1 AND resolved_at IS NULL) AS dead_letters,
              (SELECT count(*)::int FROM ops.outbox WHERE namespace = $1 AND processed_at IS NULL) AS outbox_lag,
              (SELECT extract(epoch FROM now() - min(enqueued_at))::float FROM ops.derivation_queue WHERE namespace = $1 AND status = 'pending') AS oldest`,
      [namespace],
    )) as Array<{ pending: number; dead_letters: number; outbox_lag: number; oldest: number | null }>;
    return {
      namespace,
      pending: row?.pending ?? 0,
      deadLetters: row?.dead_letters ?? 0,
      outboxLag: row?.outbox_lag ?? 0,
      oldestPendingSeconds: row?.oldest ?? null,
    };
  }

  /** Makes every failed event of the namespace due again with fresh attempts; returns how many. */
  async retryDeadLetters(auth: AuthContext, namespace: string): Promise<number> {
    auth.require(Capability.ADMIN, namespace);
    return this.ds.transaction(async (em) => {
      const res = (await em.query(
        `UPDATE ops.derivation_queue SET status = 'pending', attempts = 0, available_at = now() WHERE namespace = $1 AND status = 'failed' RETURNING event_id`,
        [namespace],
      )) as [unknown[], number];
      await em.query(`UPDATE silver.dead_letters SET next_retry_at = now(), updated_at = now() WHERE namespace = $1 AND resolved_at IS NULL`, [namespace]);
      return res[0].length;
    });
  }

  /** Queues a rebuild of the namespace's Silver rows from Bronze (optionally a time window of events). */
  async requestRebuild(auth: AuthContext, namespace: string, from: Date | null, to: Date | null, reason: string): Promise<JobRow> {
    const principal = auth.require(Capability.ADMIN, namespace);
    if (reason.trim().length < 3)
      throw new SilverException(SilverExceptionCode.INVALID_ARGUMENT, 'reason is required: say why Silver is rebuilt (it is kept with the job)');
    if (from && to && from >= to) throw new SilverException(SilverExceptionCode.INVALID_ARGUMENT, 'from must be before to');
    const window = { from: from?.toISOString() ?? null, to: to?.toISOString() ?? null };
    const { job, created } = await this.jobs.enqueue({ kind: 'rebuild_silver', namespace, params: window, reason, createdBy: principal.tokenId });
    const held = created ? window : parsePayload('rebuild_silver', await this.jobs.paramsOf(job.id));
    if (held.from !== window.from || held.to !== window.to) {
      throw new SilverException(
        SilverExceptionCode.INVALID_ARGUMENT,
        `a rebuild of ${namespace} over another window is already ${job.status} (job ${job.id}): wait for it to finish (jobProgress), then request this one`,
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
    const reasonText = reason?.trim() || 'graph rebuild requested';
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
