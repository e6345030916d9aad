import { z } from 'zod';

/**
 * Every kind of job the service runs, with the payload its rows carry in `ops.jobs.params`.
 * Payloads hold ids and windows, never state: a handler re-reads what it works on, so a retry or
 * a second worker does the same thing. To add a kind: add its schema here, write a handler
 * (`JobHandler<JobPayloads, 'kind'>`, one `*.job.ts` beside the service it calls) and register
 * it in `app.ts`'s handler map (the compiler refuses a kind without a handler).
 */
export const JOB_PAYLOADS = {
  /** Retire a namespace's Silver rows derived from a window of events and re-derive them (silver/rebuild.job.ts). */
  rebuild_silver: z.object({ from: z.string().nullable(), to: z.string().nullable() }),
  /** Re-project Postgres into Neo4j for a namespace, or all of them (graph/graph-rebuild.job.ts). */
  rebuild_graph: z.object({}),
  /** Give every fact and event a vector of the current embedding model (silver/reembed.job.ts). */
  reembed: z.object({}),
  /** Promote a namespace's Silver entities and relationships to Gold (gold/promotion/promote.job.ts). */
  promote: z.object({}),
  /** Compute a namespace's decayed importance at the job's clock (gold/decay/decay.job.ts, docs/lifecycle.md). */
  decay: z.object({}),
  /** Retire (reason 'pruned', restorable) a namespace's decayed, unused facts and the Gold entities left without one (gold/decay/prune.job.ts). */
  prune: z.object({ maxImportance: z.number().min(0).max(1), unusedForDays: z.number().int().min(1) }),
  /** Recompute a namespace's hash chain from the database and store the verdict (gold/portability/chain-verify.job.ts, docs/operations.md). */
  verify_chain: z.object({}),
};

export type JobPayloads = { [K in keyof typeof JOB_PAYLOADS]: z.infer<(typeof JOB_PAYLOADS)[K]> };
export type JobKind = keyof JobPayloads;

/** One job to queue, as a discriminated union on `kind`. */
export type JobRequest<P = JobPayloads> = {
  [K in keyof P & string]: { kind: K; namespace: string | null; params: P[K]; reason: string; createdBy?: string | null };
}[keyof P & string];

/** Reads the stored params of a kind back into its payload type (rejects rows an older or newer build wrote differently). */
export function parsePayload<K extends JobKind>(kind: K, raw: unknown): JobPayloads[K] {
  return JOB_PAYLOADS[kind].parse(raw) as JobPayloads[K];
}
