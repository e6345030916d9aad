import { JobHandler } from '../../platform/jobs/job-handler';
import { JobPayloads } from '../../platform/jobs/job-kinds';
import { LifecycleService } from './lifecycle.service';

/** `prune` jobs: retires (reason 'pruned', restorable) what decayed and went unused (LifecycleService.prune), in one fenced transaction. */
export function pruneJob(lifecycle: LifecycleService): JobHandler<JobPayloads, 'prune'> {
  return {
    retry: { maxAttempts: 3 },
    async run(job, ctx) {
      if (job.namespace === null) return { kind: 'failed', error: 'pruning needs a namespace' };
      const r = await lifecycle.prune(job.namespace, job.params.maxImportance, job.params.unusedForDays, job.id, (tx) => ctx.fence(tx));
      return {
        kind: 'success',
        message: `${r.facts.length} facts pruned (${r.protectedByOverlay} kept: a human overlay sits on them), ${r.goldEntities.length} Gold entities pruned`,
        progressDone: r.facts.length + r.goldEntities.length,
      };
    },
  };
}
