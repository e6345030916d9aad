import { decayJob } from '../gold/decay/decay.job';
import { LifecycleService } from '../gold/decay/lifecycle.service';
import { pruneJob } from '../gold/decay/prune.job';
import { promoteJob } from '../gold/promotion/promote.job';
import { PromotionService } from '../gold/promotion/promotion.service';
import { PromotionTrigger } from '../gold/promotion/promotion-trigger';
import { GraphRebuildService } from '../graph/graph-rebuild.service';
import { graphRebuildJob } from '../graph/graph-rebuild.job';
import { reembedJob } from '../silver/reembed.job';
import { ReembedService } from '../silver/reembed.service';
import { Sql } from '../platform/postgres/sql';
import { silverRebuildJob } from '../silver/rebuild.job';
import { RebuildRepository } from '../silver/rebuild.repository';
import { JobHandlers } from '../platform/jobs/job-handler';
import { JobPayloads } from '../platform/jobs/job-kinds';
import { ChainRepository } from '../gold/portability/chain.repository';
import { chainVerifyJob, ChainVerifyLog } from '../gold/portability/chain-verify.job';
import { ChainVerificationRepository } from '../gold/portability/chain-verify.repository';

export interface JobDependencies {
  sql: Sql;
  graph: GraphRebuildService;
  reembed: ReembedService;
  promotion: PromotionService;
  /** Decay and pruning (docs/lifecycle.md). */
  lifecycle: LifecycleService;
  /** Brings a namespace's promotion forward again when derivation committed there while a run went on (docs/gold.md). */
  promotionTrigger?: PromotionTrigger;
  /** How often a job that waits on other workers (a Silver rebuild) looks again. */
  pollMs: number;
  /** Re-anchors a namespace's overlays after a Silver rebuild re-derived it (gold/overlay/reanchor.service.ts); returns a summary. */
  reanchorOverlays?: (namespace: string, jobId: string) => Promise<string>;
  /** Where the scheduled verify reports a broken chain. */
  log?: ChainVerifyLog;
}

/** The handler of every job kind (JobPayloads): register a new kind's handler here. */
export function jobHandlers(d: JobDependencies): JobHandlers<JobPayloads> {
  return {
    rebuild_silver: silverRebuildJob(d.sql, new RebuildRepository(d.sql), { checkEveryMs: d.pollMs }, d.reanchorOverlays),
    rebuild_graph: graphRebuildJob(d.graph),
    reembed: reembedJob(d.reembed),
    promote: promoteJob(d.promotion, d.promotionTrigger),
    decay: decayJob(d.lifecycle),
    prune: pruneJob(d.lifecycle),
    verify_chain: chainVerifyJob(new ChainRepository(d.sql), new ChainVerificationRepository(d.sql), d.log),
  };
}
