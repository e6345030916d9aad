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
