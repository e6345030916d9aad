import { DataSource } from 'typeorm';
import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { AccessException, AccessExceptionCode } from '../access/access.exception';
import { SilverException, SilverExceptionCode } from './silver.exception';
import { isUuid } from '../common/ids';

export interface PipelineStatusRow {
  namespace: string;
  pending: number;
  deadLetters: number;
  outboxLag: number;
  oldestPendingSeconds: number | null;
}

export interface JobRow {
  id: string;
  kind: string;
  namespace: string | null;
  status: string;
  reason: string;
  progressDone: number;
  progressTotal: number | null;
  message: string | null;
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export const toJob = (r: Record<string, unknown>): JobRow => ({
  id: r.id as string,
  kind: r.kind as string,
  namespace: r.namespace as string | null,
  status: r.status as string,
  reason: r.reason as string,
  progressDone: r.progress_done as number,
  progressTotal: r.progress_total as number | null,
  message: r.message as string | null,
  error: r.error as string | null,
  createdAt: r.created_at as Date,
  startedAt: r.started_at as Date | null,
  finishedAt: r.finished_at as Date | null,
});

/** Pipeline state and operator actions: status, dead-letter retries, rebuild jobs. */
export class PipelineService {
  constructor(private readonly ds: DataSource) {}

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
    const [row] = (await this.ds.query(
      `INSERT INTO ops.jobs (kind, namespace, params, reason, created_by) VALUES ('rebuild_silver', $1, $2, $3, $4) RETURNING *`,
      [namespace, JSON.stringify({ from: from?.toISOString() ?? null, to: to?.toISOString() ?? null }), reason, principal.tokenId],
    )) as Array<Record<string, unknown>>;
    await this.ds.query(`SELECT pg_notify('medallion_jobs', $1)`, [JSON.stringify({ id: row?.id })]);
    return toJob(row as Record<string, unknown>);
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
    const [row] = (await this.ds.query(`INSERT INTO ops.jobs (kind, namespace, reason, created_by) VALUES ('rebuild_graph', $1, $2, $3) RETURNING *`, [
      namespace,
      reason?.trim() || 'graph rebuild requested',
      principal.tokenId,
    ])) as Array<Record<string, unknown>>;
    await this.ds.query(`SELECT pg_notify('medallion_jobs', $1)`, [JSON.stringify({ id: row?.id })]);
    return toJob(row as Record<string, unknown>);
  }

  async job(auth: AuthContext, id: string): Promise<JobRow | null> {
    auth.requirePrincipal();
    const job = await this.jobById(id);
    if (!job) return null;
    // A job over every namespace (graph rebuild of all) is visible to admins of "*" only.
    return auth.can(Capability.READ, job.namespace ?? '*') && (job.namespace !== null || auth.can(Capability.ADMIN, '*')) ? job : null;
  }

  async jobById(id: string): Promise<JobRow | null> {
    if (!isUuid(id)) return null;
    const rows: Array<Record<string, unknown>> = await this.ds.query(`SELECT * FROM ops.jobs WHERE id = $1`, [id]);
    return rows[0] ? toJob(rows[0]) : null;
  }
}
