import { decayCycles, decayedImportance, entityImportance, lastActive } from './decay';

const s = { afterDays: 30, cycleDays: 7, factor: 0.8, floor: 0.05 };
const DAY = 86_400_000;
const t0 = new Date('2026-01-01T00:00:00Z');
const at = (days: number) => new Date(t0.getTime() + days * DAY);

describe('decay formula (docs/lifecycle.md)', () => {
  it('leaves importance alone until afterDays idle days and one full cycle past them', () => {
    expect(decayCycles(t0, at(0), s)).toBe(0);
    expect(decayCycles(t0, at(36.99), s)).toBe(0);
    expect(decayedImportance(0.6, t0, at(36.99), s)).toBe(0.6);
    expect(decayCycles(t0, at(37), s)).toBe(1);
    expect(decayedImportance(0.6, t0, at(37), s)).toBeCloseTo(0.48, 10);
  });

  it('multiplies by the factor per full cycle: 60 idle days are 4 cycles', () => {
    expect(decayCycles(t0, at(60), s)).toBe(4);
    expect(decayedImportance(0.6, t0, at(60), s)).toBeCloseTo(0.6 * 0.8 ** 4, 10);
  });

  it('never goes below the floor, and never raises a base already below it', () => {
    expect(decayedImportance(0.6, t0, at(365), s)).toBe(0.05);
    expect(decayedImportance(0.03, t0, at(365), s)).toBe(0.03);
    expect(decayedImportance(0.05, t0, at(365), s)).toBe(0.05);
  });

  it('counts from the latest of last seen and last used; a clock before it is no decay', () => {
    expect(lastActive(at(1), at(5))).toEqual(at(5));
    expect(lastActive(null, at(5))).toEqual(at(5));
    expect(lastActive(at(7), null)).toEqual(at(7));
    expect(() => lastActive(null, null)).toThrow();
    expect(decayCycles(at(10), at(0), s)).toBe(0);
  });

  it("an entity's importance is its best current fact's effective importance (the base before any decay run), null with none", () => {
    expect(entityImportance([])).toBeNull();
    expect(
      entityImportance([
        { importance: 0.6, effectiveImportance: 0.25 },
        { importance: 0.4, effectiveImportance: null },
      ]),
    ).toBe(0.4);
    expect(
      entityImportance([
        { importance: 0.6, effectiveImportance: 0.25 },
        { importance: 0.3, effectiveImportance: 0.1 },
      ]),
    ).toBe(0.25);
    // So it decays as its facts do: idle facts of 0.6 and 0.4 after 4 cycles.
    const facts = [0.6, 0.4].map((b) => ({ importance: b, effectiveImportance: decayedImportance(b, t0, at(60), s) }));
    expect(entityImportance(facts)).toBeCloseTo(0.6 * 0.8 ** 4, 10);
  });
});
