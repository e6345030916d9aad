import { JobHandler } from '../../platform/jobs/job-handler';
import { JobPayloads } from '../../platform/jobs/job-kinds';
import { LifecycleService } from './lifecycle.service';

/**
 * `decay` jobs: writes a namespace's effective importance at the worker's clock (one statement,
 * fenced by the job's lease), and brings back Gold entities pruned earlier that have a current fact again.
 */
export function decayJob(lifecycle: LifecycleService): JobHandler<JobPayloads, 'decay'> {
  return {
    retry: { maxAttempts: 3 },
    async run(job, ctx) {
      if (job.namespace === null) return { kind: 'failed', error: 'decay needs a namespace' };
      const r = await lifecycle.decay(job.namespace, job.id, (tx) => ctx.fence(tx));
      return {
        kind: 'success',
        message: `${r.facts} current facts, ${r.decayed} below their base importance; ${r.restoredGoldEntities} Gold entities restored`,
        progressDone: r.facts,
      };
    },
  };
}
