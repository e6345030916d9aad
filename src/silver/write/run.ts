import { col, Sql } from '../../platform/postgres/sql';
import { DerivationPlan } from '../derivation-plan';

export interface RunMeta {
  kind: 'incremental' | 'rebuild';
  jobId: string | null;
  workerId: string;
}

/** Thrown when the queue rows were no longer ours to complete: the transaction rolls back. */
export class LostClaimError extends Error {}

/**
 * Marks the batch's queue rows done; fails unless every one was still pending (another worker or
 * a rebuild took them). Returns the transaction's clock, the time every change of this write
 * carries (what `now()` is in the statements that follow).
 */
export async function completeQueueRows(tx: Sql, eventIds: readonly string[]): Promise<Date> {
  const done = await tx.returning(
    `UPDATE ops.derivation_queue SET status = 'done', processed_at = now(), last_error = NULL, locked_by = NULL, locked_until = NULL
      WHERE event_id = ANY($1::uuid[]) AND status <> 'done' RETURNING event_id, now() AS tx_now`,
    [eventIds],
    (r) => col.date(r, 'tx_now'),
  );
  if (done.length !== eventIds.length) throw new LostClaimError(`only ${done.length} of ${eventIds.length} events were still pending`);
  return done[0] ?? new Date();
}

/** The run row: who derived what, with which models and prompt versions. */
export async function insertRun(tx: Sql, plan: DerivationPlan, meta: RunMeta, storedFacts: number): Promise<string> {
  const m = plan.models;
  return tx.one(
    `INSERT INTO silver.derivation_runs (namespace, kind, job_id, extraction_model, judge_model, embedding_model, extractor, extraction_prompt_version,
                                         judge_prompt_version, worker_id, event_count, fact_count, model_calls, gate_notes)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id`,
    [
      plan.namespace,
      meta.kind,
      meta.jobId,
      m.extraction,
      m.judge,
      m.embedding,
      m.extractor,
      m.extractionPrompt,
      m.judgePrompt,
      meta.workerId,
      plan.eventIds.length,
      storedFacts,
      plan.modelCalls,
      JSON.stringify(plan.gateNotes),
    ],
    (r) => col.string(r, 'id'),
  );
}

/** Open dead letters of the batch's events are resolved: they derived now. */
export async function resolveDeadLetters(tx: Sql, eventIds: readonly string[]): Promise<void> {
  await tx.execute(`UPDATE silver.dead_letters SET resolved_at = now(), updated_at = now() WHERE event_id = ANY($1::uuid[]) AND resolved_at IS NULL`, [
    eventIds,
  ]);
}
