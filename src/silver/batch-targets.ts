import { JudgeAction } from './model-ports';

/** One fact's checked decision, in the batch's decision order. */
export interface BatchDecision {
  /** The new fact's planned id. */
  id: string;
  action: JudgeAction;
  /** A fact among the new fact's candidates (stored, or an earlier fact of this batch), or null. */
  targetId: string | null;
  reason: string;
}

/**
 * Points every decision at a fact the write transaction will actually hold.
 *
 * The judge sees the earlier facts of the same batch as candidates, and judges all facts in one
 * call, so it may name a fact of the batch that will not exist as itself:
 * - a fact judged SKIP is never inserted (its sources go to its target): a later fact that names
 *   it (the same sentence a third time, or its supersession) refers to that SKIP's target;
 * - a fact an earlier fact of the batch UPDATEd is retired, replaced by the better statement: a
 *   later fact that names it refers to the replacement.
 * Without this a batch with repeated or near-identical statements references a fact id that was
 * never inserted and fails as a whole (`fact_sources_fact_id_fkey`,
 * `judge_decisions_target_fact_id_fkey`). SUPERSEDE chains are left to the writer, which
 * supersedes the head of the chain.
 */
export function settleBatchTargets(decisions: readonly BatchDecision[]): BatchDecision[] {
  // In-batch id → the fact that stands for it once the batch is written.
  const standsFor = new Map<string, string>();
  const settle = (id: string): string => {
    let current = id;
    const seen = new Set<string>();
    while (standsFor.has(current) && !seen.has(current)) {
      seen.add(current);
      current = standsFor.get(current) as string;
    }
    return current;
  };
  return decisions.map((d) => {
    if (d.action === 'ADD' || !d.targetId) return d;
    const targetId = settle(d.targetId);
    if (d.action === 'SKIP') standsFor.set(d.id, targetId);
    else if (d.action === 'UPDATE') standsFor.set(targetId, d.id);
    if (targetId === d.targetId) return d;
    return { ...d, targetId, reason: `${d.reason} (applied to ${targetId}, which stands for ${d.targetId} in this batch)` };
  });
}
