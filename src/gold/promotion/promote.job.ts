import { JobHandler } from '../../platform/jobs/job-handler';
import { JobPayloads } from '../../platform/jobs/job-kinds';
import { PromotionService } from './promotion.service';
import { PromotionTrigger } from './promotion-trigger';

/**
 * `promote` jobs: one promotion run of a namespace (PromotionService), every batch fenced by the
 * job's lease and reported as progress. A run after a crash re-reads Silver and Gold: committed
 * batches are members already, the rest is resolved again, so nothing is written twice. When
 * derivation committed in the namespace while the run went on, the run brings the namespace's
 * schedule forward again (PromotionTrigger.afterPromotion): a schedule that came round meanwhile
 * skipped its turn.
 */
export function promoteJob(promotion: PromotionService, trigger?: PromotionTrigger): JobHandler<JobPayloads, 'promote'> {
  return {
    retry: { maxAttempts: 3 },
    async run(job, ctx) {
      if (job.namespace === null) return { kind: 'failed', error: 'a promotion needs a namespace' };
      await ctx.progress({ done: 0, total: null, message: 'resolving entities' });
      const r = await promotion.promote(job.namespace, {
        runId: job.id,
        fence: (tx) => ctx.fence(tx),
        progress: (p, tx) => ctx.progress(p, tx),
      });
      await trigger?.afterPromotion(job.namespace, job.startedAt);
      return {
        kind: 'success',
        message: `${r.candidates} candidates: ${r.created} Gold entities created, ${r.updated} updated, ${r.retired} retired, ${r.deferred} clusters deferred; relationships ${r.relationshipsCreated} created, ${r.relationshipsUpdated} updated; ${r.batches} batches; conflicts ${r.conflictsDecided} decided, ${r.reviewQueued} queued for review; ${r.candidatePairs} candidate pairs; ms: read ${r.timings.candidatesMs}, compare ${r.timings.pairsMs}, resolve ${r.timings.resolveMs}, write ${r.timings.writeMs}, conflicts ${r.timings.conflictsMs}`,
        progressDone: r.created + r.updated + r.retired + r.relationshipsCreated + r.relationshipsUpdated,
      };
    },
  };
}
