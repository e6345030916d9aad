import { AuthContext } from '../../access/auth-context';
import { Capability } from '../../access/capability';
import { Clock, systemClock } from '../../common/clock';
import { requireUuid } from '../../common/input';
import { JobRow } from '../../platform/jobs/job';
import { JobRepository } from '../../platform/jobs/job.repository';
import { JobPayloads, parsePayload } from '../../platform/jobs/job-kinds';
import { Sql } from '../../platform/postgres/sql';
import { DecaySettings } from '../../silver/decay';
import { GoldException, GoldExceptionCode } from '../gold.exception';
import { DecayRun, LifecycleRepository, PruneRun, RestoreRun } from './lifecycle.repository';

/** The most fact ids restorePruned takes at once. */
export const MAX_RESTORE_IDS = 10_000;

/** Lets a job fence its transaction (JobContext.fence) before it writes. */
export type Fence = (tx: Sql) => Promise<void>;

/**
 * Decay, pruning and restoring (docs/lifecycle.md). The jobs (`decay`, `prune`) call `decay` and
 * `prune` at the service's clock; callers reach `requestPrune` (a prune job) and `restorePruned`,
 * both needing "admin" on the namespace.
 */
export class LifecycleService {
  constructor(
    private readonly sql: Sql,
    private readonly repo: LifecycleRepository,
    private readonly jobs: JobRepository<JobPayloads>,
    readonly settings: DecaySettings,
    private readonly clock: Clock = systemClock,
  ) {}

  async decay(namespace: string, jobId: string | null, fence?: Fence): Promise<DecayRun> {
    return this.sql.transaction(async (tx) => {
      await fence?.(tx);
      return this.repo.decay(tx, namespace, this.clock.now(), this.settings, jobId);
    });
  }

  async prune(namespace: string, maxImportance: number, unusedForDays: number, jobId: string | null, fence?: Fence): Promise<PruneRun> {
    return this.sql.transaction(async (tx) => {
      await fence?.(tx);
      return this.repo.prune(tx, namespace, this.clock.now(), this.settings, maxImportance, unusedForDays, jobId);
    });
  }

  /** Queues a prune job (one queued or running per namespace: that one is returned). */
  async requestPrune(auth: AuthContext, namespace: string, maxImportance: number, unusedForDays: number): Promise<JobRow> {
    const principal = auth.require(Capability.ADMIN, namespace);
    if (!(Number.isFinite(maxImportance) && maxImportance >= 0 && maxImportance <= 1)) {
      throw new GoldException(
        GoldExceptionCode.INVALID_ARGUMENT,
        `maxImportance must be between 0 and 1 (importance is a score in [0, 1]); got ${maxImportance}`,
      );
    }
    if (!Number.isInteger(unusedForDays) || unusedForDays < 1 || unusedForDays > 36_500) {
      throw new GoldException(GoldExceptionCode.INVALID_ARGUMENT, `unusedForDays must be a whole number of days between 1 and 36500; got ${unusedForDays}`);
    }
    const { job, created } = await this.jobs.enqueue({
      kind: 'prune',
      namespace,
      params: { maxImportance, unusedForDays },
      reason: `prune facts with decayed importance <= ${maxImportance}, unused for ${unusedForDays} days`,
      createdBy: principal.tokenId,
    });
    if (!created) {
      const held = parsePayload('prune', await this.jobs.paramsOf(job.id));
      if (held.maxImportance !== maxImportance || held.unusedForDays !== unusedForDays) {
        throw new GoldException(
          GoldExceptionCode.INVALID_ARGUMENT,
          `a prune of ${namespace} with maxImportance ${held.maxImportance} and unusedForDays ${held.unusedForDays} is already ${job.status} (job ${job.id}): wait for it to finish (the job(id) query), then request this one`,
        );
      }
    }
    return job;
  }

  /** Brings back pruned facts of the namespace (all of them when `factIds` is null) unchanged; returns how many came back. */
  async restorePruned(auth: AuthContext, namespace: string, factIds: readonly string[] | null): Promise<RestoreRun> {
    auth.require(Capability.ADMIN, namespace);
    if (factIds !== null) {
      if (factIds.length > MAX_RESTORE_IDS) {
        throw new GoldException(
          GoldExceptionCode.INVALID_ARGUMENT,
          `factIds holds ${factIds.length} ids; pass at most ${MAX_RESTORE_IDS} per call, or omit it to restore every pruned fact`,
        );
      }
      factIds.forEach((id, i) => requireUuid(id, `factIds[${i}]`));
    }
    return this.sql.transaction((tx) => this.repo.restore(tx, namespace, factIds ? factIds.map((id) => id.toLowerCase()) : null, null));
  }
}
