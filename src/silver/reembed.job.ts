import { JobHandler } from '../platform/jobs/job-handler';
import { JobPayloads } from '../platform/jobs/job-kinds';
import { ReembedService } from './reembed.service';

/**
 * `reembed` jobs (ReembedService): progress per page in ops.jobs (jobProgress). A run after a
 * crash or a lost lease picks up where the vectors stop: the service re-reads what is still
 * embedded by another model.
 */
export function reembedJob(reembed: ReembedService): JobHandler<JobPayloads, 'reembed'> {
  return {
    async run(job, ctx) {
      let pages = 0;
      await ctx.progress({ done: 0, total: null, message: 'started' });
      const result = await reembed.run(job.namespace, (p) => {
        pages += 1;
        void ctx.progress({ done: pages, message: `${p.phase}: ${p.done}` });
      });
      return { kind: 'success', message: `embedded ${result.facts} facts and ${result.events} events with ${result.model}` };
    },
  };
}
