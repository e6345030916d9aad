import { changeForDecision, isBelievedAt, isValidAt, planTargetChanges, resolveValidFrom, validFromAfterUpdate } from './temporal';
import { corroborate, scoreFact } from './scoring';

const t = (s: string) => new Date(s);

describe('temporal rules', () => {
  const old = { validFrom: t('2026-01-01T00:00:00Z') };
  const now = t('2026-11-29T00:00:00Z');

  it('SUPERSEDE closes the old interval where the new one starts, never before the old began', () => {
    expect(changeForDecision('SUPERSEDE', old, { id: 'n', validFrom: t('2026-03-01T00:00:00Z') }, now)).toEqual({
      kind: 'supersede',
      validTo: t('2026-03-01T00:00:00Z'),
      supersededBy: 'n',
    });
    expect(changeForDecision('SUPERSEDE', old, { id: 'n', validFrom: t('2025-06-01T00:00:00Z') }, now)).toEqual({
      kind: 'supersede',
      validTo: old.validFrom,
      supersededBy: 'n',
    });
  });

  it('UPDATE retires the old belief and keeps the earliest start', () => {
    expect(changeForDecision('UPDATE', old, { id: 'n', validFrom: t('2026-02-01T00:00:00Z') }, now)).toEqual({
      kind: 'retire',
      retiredAt: now,
      supersededBy: 'n',
    });
    expect(validFromAfterUpdate(old, t('2026-02-01T00:00:00Z'))).toEqual(old.validFrom);
  });

  it('ADD and SKIP leave the target alone', () => {
    expect(changeForDecision('ADD', old, { id: 'n', validFrom: now }, now)).toEqual({ kind: 'none' });
    expect(changeForDecision('SKIP', old, { id: 'n', validFrom: now }, now)).toEqual({ kind: 'none' });
  });

  it('answers validity and belief at a time, with half-open intervals', () => {
    const f = { validFrom: t('2026-01-01T00:00:00Z'), validTo: t('2026-03-01T00:00:00Z'), recordedAt: t('2026-01-02T00:00:00Z'), retiredAt: null };
    expect(isValidAt(f, t('2026-01-01T00:00:00Z'))).toBe(true);
    expect(isValidAt(f, t('2026-02-28T23:59:59Z'))).toBe(true);
    expect(isValidAt(f, t('2026-03-01T00:00:00Z'))).toBe(false);
    expect(isValidAt(f, t('2025-12-31T00:00:00Z'))).toBe(false);
    expect(isBelievedAt(f, t('2026-01-01T12:00:00Z'))).toBe(false);
    expect(isBelievedAt(f, t('2027-01-01T00:00:00Z'))).toBe(true);
  });

  it('uses an explicit time when the text gave one, else the event time', () => {
    const occurred = t('2026-03-08T10:00:00Z');
    expect(resolveValidFrom('2026-03-01T00:00:00Z', occurred)).toEqual(t('2026-03-01T00:00:00Z'));
    expect(resolveValidFrom(null, occurred)).toEqual(occurred);
    expect(resolveValidFrom('not a date', occurred)).toEqual(occurred);
  });
});

describe('scoring', () => {
  it('weights the source and corroboration into confidence', () => {
    expect(
      scoreFact({ factType: 'preference', extractorConfidence: 0.9, role: 'user', isNegation: false, explicitTime: false, corroborations: 0 }).confidence,
    ).toBe(0.9);
    expect(
      scoreFact({ factType: 'preference', extractorConfidence: 0.9, role: 'assistant', isNegation: false, explicitTime: false, corroborations: 0 }).confidence,
    ).toBe(0.72);
    expect(
      scoreFact({ factType: 'preference', extractorConfidence: 0.9, role: 'user', isNegation: false, explicitTime: false, corroborations: 5 }).confidence,
    ).toBe(0.99);
  });

  it('ranks importance by type, explicit time, negation and corroboration, within [0, 1]', () => {
    const base = { extractorConfidence: 0.9, role: 'user', isNegation: false, explicitTime: false, corroborations: 0 };
    expect(scoreFact({ ...base, factType: 'preference' }).importance).toBeGreaterThan(scoreFact({ ...base, factType: 'event' }).importance);
    expect(scoreFact({ ...base, factType: 'plan', explicitTime: true }).importance).toBe(0.75);
    expect(scoreFact({ ...base, factType: 'preference', explicitTime: true, isNegation: true, corroborations: 10 }).importance).toBe(1);
  });
});

describe('planTargetChanges (what the writer applies)', () => {
  const now = t('2026-11-29T00:00:00Z');
  const current = (validFrom: string) => ({ validFrom: t(validFrom), validTo: null, retired: false });

  it('leaves facts that are no longer current or believed alone', () => {
    const states = new Map([
      ['closed', { validFrom: t('2026-01-01T00:00:00Z'), validTo: t('2026-02-01T00:00:00Z'), retired: false }],
      ['retired', { validFrom: t('2026-01-01T00:00:00Z'), validTo: null, retired: true }],
    ]);
    const decisions = [
      { id: 'a', action: 'SUPERSEDE' as const, targetId: 'closed', validFrom: t('2026-03-01T00:00:00Z') },
      { id: 'b', action: 'UPDATE' as const, targetId: 'retired', validFrom: t('2026-03-01T00:00:00Z') },
      { id: 'c', action: 'SUPERSEDE' as const, targetId: 'unknown', validFrom: t('2026-03-01T00:00:00Z') },
    ];
    expect(planTargetChanges(decisions, states, now)).toEqual({ changes: [], replaced: [] });
  });

  it('an UPDATE retires the target once; a second UPDATE of it changes nothing', () => {
    const states = new Map([['old', current('2026-01-01T00:00:00Z')]]);
    const decisions = [
      { id: 'a', action: 'UPDATE' as const, targetId: 'old', validFrom: t('2026-03-01T00:00:00Z') },
      { id: 'b', action: 'UPDATE' as const, targetId: 'old', validFrom: t('2026-04-01T00:00:00Z') },
    ];
    expect(planTargetChanges(decisions, states, now)).toEqual({
      changes: [{ id: 'old', validTo: null, retiredAt: now, supersededBy: 'a' }],
      replaced: [{ oldId: 'old', newId: 'a' }],
    });
  });
});

describe('corroborate (SKIP on a stored fact)', () => {
  it('adds 0.05 per source, importance never beyond the +0.2 the scoring rule allows in all', () => {
    expect(corroborate({ confidence: 0.8, importance: 0.7 }, 0, 1)).toEqual({ confidence: 0.85, importance: 0.75 });
    expect(corroborate({ confidence: 0.8, importance: 0.85 }, 3, 2)).toEqual({ confidence: 0.9, importance: 0.9 });
    expect(corroborate({ confidence: 0.97, importance: 0.9 }, 4, 5)).toEqual({ confidence: 0.99, importance: 0.9 });
  });

  it('agrees with scoreFact: corroborating one by one lands where scoring all at once does', () => {
    const base = { factType: 'preference', extractorConfidence: 0.9, role: 'user', isNegation: false, explicitTime: false };
    let s = scoreFact({ ...base, corroborations: 0 });
    for (let n = 0; n < 7; n++) s = corroborate(s, n, 1);
    expect(s).toEqual(scoreFact({ ...base, corroborations: 7 }));
  });
});
