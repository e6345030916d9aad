import { DerivationPlan, PlannedFact, PlannedSource } from '../derivation-plan';
import { corroborate } from '../scoring';
import { FactChange, planTargetChanges, TargetState } from '../temporal';

/** A fact row as it is inserted, its scores final (corroborations of this batch folded in). */
export type FactInsert = PlannedFact & { ord: number };

export interface SourceRow {
  factId: string;
  source: PlannedSource;
}

/**
 * What the write path will do for one plan, decided by the pure rules before any SQL runs:
 * which facts are inserted with which scores (`scoring.corroborate`), which older facts are
 * superseded or retired (`temporal.planTargetChanges` → `changeForDecision`), which stored facts
 * gain corroborations, and which sources attach to which fact. The SQL only applies it.
 */
export interface FactWrites {
  inserts: FactInsert[];
  changes: FactChange[];
  /** (old, new) pairs in decision order, before the database confirms each old fact was still current. */
  replaced: Array<{ oldId: string; newId: string }>;
  /** Stored facts (not of this batch) that SKIP decisions corroborate, with how many times. */
  corroboratedStored: Array<{ id: string; added: number }>;
  /** Every fact a SKIP corroborated (stored or of this batch), once each. */
  corroborated: string[];
  sources: SourceRow[];
}

/** `now` is the write transaction's clock (retirements carry it). */
export function planFactWrites(plan: Pick<DerivationPlan, 'facts'>, now: Date): FactWrites {
  const stored = plan.facts.filter((f) => f.action !== 'SKIP');
  const storedIds = new Set(stored.map((f) => f.id));

  const skips = new Map<string, number>();
  for (const f of plan.facts) if (f.action === 'SKIP' && f.targetId) skips.set(f.targetId, (skips.get(f.targetId) ?? 0) + 1);

  const inserts = stored.map((f, ord) => {
    const added = skips.get(f.id) ?? 0;
    return { ...f, ...(added > 0 ? corroborate(f, f.sources.length - 1, added) : {}), ord };
  });

  const states = new Map<string, TargetState>();
  for (const f of plan.facts)
    for (const c of f.candidates) if (!storedIds.has(c.id)) states.set(c.id, { validFrom: c.validFrom, validTo: null, retired: false });
  for (const f of stored) states.set(f.id, { validFrom: f.validFrom, validTo: f.validTo, retired: false });
  const { changes, replaced } = planTargetChanges(
    plan.facts.map((f) => ({ id: f.id, action: f.action, targetId: f.targetId, validFrom: f.validFrom })),
    states,
    now,
  );

  const sources = plan.facts.flatMap((f) => {
    const factId = f.action === 'SKIP' ? f.targetId : f.id;
    return factId ? f.sources.map((source) => ({ factId, source })) : [];
  });

  return {
    inserts,
    changes,
    replaced,
    corroboratedStored: [...skips].filter(([id]) => !storedIds.has(id)).map(([id, added]) => ({ id, added })),
    corroborated: [...skips.keys()],
    sources,
  };
}
