import { EntityManager } from 'typeorm';
import { Sql } from '../platform/postgres/sql';
import { DerivationPlan } from './derivation-plan';
import { writeEntities, writeMentions } from './write/entities';
import { applyFactChanges, corroborateStoredFacts, insertFacts, insertFactSources } from './write/facts';
import { insertDecisions } from './write/decisions';
import { recordLineage } from './write/lineage';
import { enqueueProjection, notifyFacts, OutboxItem } from './write/outbox';
import { planFactWrites } from './write/plan-writes';
import { restorePrunedTwins } from './write/pruned-twins';
import { writeRelationships } from './write/relationships';
import { completeQueueRows, insertRun, resolveDeadLetters, RunMeta } from './write/run';

export { LostClaimError } from './write/run';
export type { RunMeta } from './write/run';

export interface WriteOutcome {
  runId: string;
  added: string[];
  superseded: Array<{ oldId: string; newId: string }>;
}

/**
 * Writes a DerivationPlan inside the caller's transaction: the queue rows first (all still
 * pending, or nothing is written), then the run, entities, facts and their sources, the judge's
 * decisions and their effects on older facts, relationships, where each entity is named, lineage (rebuilds), outbox rows,
 * and subscriber notifications. All or nothing.
 *
 * The pure rules decide and SQL applies: `planFactWrites` (src/silver/write/plan-writes.ts) turns
 * the plan into rows and changes by `temporal.changeForDecision` and `scoring.corroborate`; each
 * write operation in src/silver/write/ is one or two statements for one kind of row.
 */
export async function writePlan(em: EntityManager, plan: DerivationPlan, meta: RunMeta): Promise<WriteOutcome> {
  const tx = Sql.within(em);
  const ns = plan.namespace;
  const now = await completeQueueRows(tx, plan.eventIds);
  const writes = planFactWrites(plan, now);
  const runId = await insertRun(tx, plan, meta, writes.inserts.length);

  await writeEntities(tx, ns, runId, plan.entities);
  await writeMentions(tx, ns, plan.mentions);
  await insertFacts(tx, ns, runId, plan.models, writes.inserts);
  // Effects on the targets, decided in decision order (a later fact may supersede an earlier one of this batch).
  const changed = await applyFactChanges(tx, writes.changes);
  const superseded = writes.replaced.filter((r) => changed.has(r.oldId));
  await corroborateStoredFacts(tx, writes.corroboratedStored);
  await insertFactSources(tx, writes.sources);
  // A new fact that a pruned one already states brings the pruned one back (docs/lifecycle.md).
  const twins = await restorePrunedTwins(
    tx,
    ns,
    writes.inserts.map((f) => f.id),
  );
  await insertDecisions(tx, ns, runId, plan.models.judge, plan.facts);
  await writeRelationships(tx, ns, runId, plan.models.extraction, plan.relationships);
  const added = writes.inserts.map((f) => f.id);
  if (meta.jobId) await recordLineage(tx, ns, meta.jobId, runId, [...new Set([...added, ...writes.corroborated])], plan.eventIds);

  const outbox: OutboxItem[] = [
    ...plan.entities.filter((e) => e.isNew || e.aliasesChanged).map((e) => ({ type: 'entity' as const, id: e.id })),
    ...added.map((id) => ({ type: 'fact' as const, id })),
    ...superseded.map((s) => ({ type: 'fact' as const, id: s.oldId })),
    // A corroborated fact gained a source and confidence: the graph needs its new DERIVED_FROM edge.
    ...writes.corroborated.map((id) => ({ type: 'fact' as const, id })),
    ...[...twins.restored, ...twins.older].map((id) => ({ type: 'fact' as const, id })),
  ];
  await enqueueProjection(tx, ns, runId, outbox);
  await resolveDeadLetters(tx, plan.eventIds);
  const duplicate = new Set(twins.duplicates);
  await notifyFacts(tx, ns, [...added.filter((id) => !duplicate.has(id)), ...twins.restored], superseded);
  return { runId, added, superseded };
}
