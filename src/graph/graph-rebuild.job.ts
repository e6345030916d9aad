import { JobHandler } from '../platform/jobs/job-handler';
import { JobPayloads } from '../platform/jobs/job-kinds';
import { GraphRebuildService } from './graph-rebuild.service';

/**
 * `rebuild_graph` jobs: re-project a namespace (or everything) from Postgres into Neo4j
 * (GraphRebuildService), with one progress step per batch. Always safe to run again: the rebuild
 * writes current Postgres state.
 */
export function graphRebuildJob(graph: GraphRebuildService): JobHandler<JobPayloads, 'rebuild_graph'> {
  return {
    async run(job, ctx) {
      let steps = 0;
      await ctx.progress({ done: 0, total: null, message: 'started' });
      const r = await graph.rebuildGraph(job.namespace, {
        onProgress: (p) => {
          steps += 1;
          void ctx.progress({ done: steps, message: `${p.phase}: ${p.done}` });
        },
      });
      return {
        kind: 'success',
        message: `deleted ${r.deleted} nodes; projected ${r.events} events, ${r.entities} entities, ${r.facts} facts, ${r.relationships} relationships, ${r.gold} Gold rows in ${r.ms} ms`,
      };
    },
  };
}
