import { JudgeAction } from './model-ports';

/** The two clocks of a fact. */
export interface FactClocks {
  validFrom: Date;
  validTo: Date | null;
  recordedAt: Date;
  retiredAt: Date | null;
}

/** What happens to an existing fact when a new one is judged against it. */
export type OldFactChange =
  { kind: 'none' } | { kind: 'supersede'; validTo: Date; supersededBy: string } | { kind: 'retire'; retiredAt: Date; supersededBy: string };

/**
 * The effect of a judge decision on the target fact (pure; graphiti's
 * resolve_edge_contradictions in spirit):
 * - SUPERSEDE: the world changed. The old fact stays on record (it was true) and stops being
 *   valid when the new one starts: validTo = new validFrom (never before its own validFrom).
 * - UPDATE: the same thing said better. The old fact is retired from belief (system time) and
 *   points to its replacement; its validity interval is left as it was.
 * - ADD / SKIP: the target is unchanged.
 */
export function changeForDecision(
  action: JudgeAction,
  target: Pick<FactClocks, 'validFrom'>,
  newFact: { id: string; validFrom: Date },
  now: Date,
): OldFactChange {
  switch (action) {
    case 'SUPERSEDE':
      return { kind: 'supersede', validTo: newFact.validFrom < target.validFrom ? target.validFrom : newFact.validFrom, supersededBy: newFact.id };
    case 'UPDATE':
      return { kind: 'retire', retiredAt: now, supersededBy: newFact.id };
    case 'ADD':
    case 'SKIP':
      return { kind: 'none' };
  }
}

/** For UPDATE, the refined fact keeps the earliest start of the two: it is the same fact. */
export function validFromAfterUpdate(target: Pick<FactClocks, 'validFrom'>, newValidFrom: Date): Date {
  return target.validFrom < newValidFrom ? target.validFrom : newValidFrom;
}

/** True in the world at `t`. */
export function isValidAt(f: Pick<FactClocks, 'validFrom' | 'validTo'>, t: Date): boolean {
  return f.validFrom <= t && (f.validTo === null || t < f.validTo);
}

/** Believed by the system at `t` (recorded and not yet retired). */
export function isBelievedAt(f: Pick<FactClocks, 'recordedAt' | 'retiredAt'>, t: Date): boolean {
  return f.recordedAt <= t && (f.retiredAt === null || t < f.retiredAt);
}

/** A fact's validFrom: an explicit time the extractor found, else when its event happened. */
export function resolveValidFrom(explicit: string | null, occurredAt: Date): Date {
  if (explicit) {
    const t = new Date(explicit);
    if (!Number.isNaN(t.getTime())) return t;
  }
  return occurredAt;
}

/** What the write path knows of a fact a decision may change. */
export interface TargetState {
  validFrom: Date;
  validTo: Date | null;
  retired: boolean;
}

/** The decisions of one batch, in order, as the write path applies them. */
export interface BatchDecisionInput {
  id: string;
  action: JudgeAction;
  targetId: string | null;
  validFrom: Date;
}

/** The final change to one older fact after all of a batch's decisions (what SQL applies). */
export interface FactChange {
  id: string;
  /** Set when a SUPERSEDE closed it. */
  validTo: Date | null;
  /** Set when an UPDATE retired it. */
  retiredAt: Date | null;
  supersededBy: string;
}

/**
 * The effects of a batch's decisions on older facts, in decision order, by `changeForDecision`.
 * A SUPERSEDE whose target was already replaced by an earlier fact of this batch replaces the head
 * of that chain instead (the judge saw the batch's facts side by side). A change applies only to a
 * fact that is still current (SUPERSEDE) or believed (UPDATE); others are left alone.
 * `states` holds every fact a decision can reach: the candidates and the batch's own facts.
 * Returns the per-fact final changes and the (old, new) pairs in decision order.
 */
export function planTargetChanges(
  decisions: readonly BatchDecisionInput[],
  states: ReadonlyMap<string, TargetState>,
  now: Date,
): { changes: FactChange[]; replaced: Array<{ oldId: string; newId: string }> } {
  const state = new Map([...states].map(([id, s]) => [id, { ...s }]));
  const next = new Map<string, string>();
  const changes = new Map<string, FactChange>();
  const replaced: Array<{ oldId: string; newId: string }> = [];
  const change = (id: string): FactChange => changes.get(id) ?? { id, validTo: null, retiredAt: null, supersededBy: '' };
  for (const d of decisions) {
    if (!d.targetId) continue;
    if (d.action === 'SUPERSEDE') {
      let head = d.targetId;
      for (let depth = 0; depth < 100; depth++) {
        const n = next.get(head);
        if (n === undefined || n === d.id) break;
        head = n;
      }
      const s = state.get(head);
      if (!s || s.validTo !== null || s.retired) continue;
      const effect = changeForDecision('SUPERSEDE', s, d, now);
      if (effect.kind !== 'supersede') continue;
      s.validTo = effect.validTo;
      next.set(head, d.id);
      changes.set(head, { ...change(head), validTo: effect.validTo, supersededBy: effect.supersededBy });
      replaced.push({ oldId: head, newId: d.id });
    } else if (d.action === 'UPDATE') {
      const s = state.get(d.targetId);
      if (!s || s.retired) continue;
      const effect = changeForDecision('UPDATE', s, d, now);
      if (effect.kind !== 'retire') continue;
      s.retired = true;
      next.set(d.targetId, d.id);
      changes.set(d.targetId, { ...change(d.targetId), retiredAt: effect.retiredAt, supersededBy: effect.supersededBy });
      replaced.push({ oldId: d.targetId, newId: d.id });
    }
  }
  return { changes: [...changes.values()], replaced };
}
