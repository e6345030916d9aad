import { Sql } from '../platform/postgres/sql';
import { JobHandler } from '../platform/jobs/job-handler';
import { JobPayloads } from '../platform/jobs/job-kinds';
import { RebuildRepository } from './rebuild.repository';

/**
 * `rebuild_silver` jobs. The first run retires (soft) the Silver rows derived from the window's
 * events and re-queues the events tagged with the job, in one transaction fenced by the job's
 * lease; the derive workers then re-derive them with the current models. Until they are done the
 * job is `waiting`: each later run re-reads how many of its events are done, reports it, and
 * succeeds when none is pending. The started state lives in the job row (its total), so a run
 * after a crash does not retire twice.
 */
export function silverRebuildJob(
  sql: Sql,
  rebuilds: RebuildRepository,
  settings: { checkEveryMs: number },
  /** Runs once re-derivation is done, before the job succeeds (overlays re-anchor on the new facts); its summary joins the job's message. */
  afterDerived?: (namespace: string, jobId: string) => Promise<string>,
): JobHandler<JobPayloads, 'rebuild_silver'> {
  return {
    async run(job, ctx) {
      const namespace = job.namespace;
      if (namespace === null) return { kind: 'failed', error: 'a Silver rebuild needs a namespace' };
      let total = job.progressTotal;
      let reported = job.progressDone;
      if (total === null) {
        const started = await sql.transaction(async (tx) => {
          await ctx.fence(tx);
          const s = await rebuilds.start(tx, namespace, job.id, job.params);
          const message = `retired ${s.retiredFacts} facts, reopened ${s.reopenedFacts}; re-deriving ${s.requeuedEvents} events`;
          await ctx.progress({ done: 0, total: s.requeuedEvents, message }, tx);
          return s;
        });
        total = started.requeuedEvents;
        reported = 0;
      }
      const p = await rebuilds.progress(job.id);
      if (p.pending === 0) {
        const derived = `re-derived ${p.done} of ${total} events (${p.failed} in dead letters)`;
        if (!afterDerived) return { kind: 'success', message: derived, progressDone: p.done };
        await ctx.progress({ done: p.done, message: `${derived}; re-anchoring overlays` });
        return { kind: 'success', message: `${derived}; ${await afterDerived(namespace, job.id)}`, progressDone: p.done };
      }
      if (p.done !== reported) await ctx.progress({ done: p.done });
      return { kind: 'waiting', checkAfterMs: settings.checkEveryMs };
    },
  };
}
