import { countsDiverged, GraphCounts } from './replan';

const counts = (facts: number, events = 100, entities = 100, relationships = 100): GraphCounts => ({ facts, events, entities, relationships });

describe('countsDiverged: when the search plans are made again', () => {
  it('past the threshold in either direction, for any count', () => {
    expect(countsDiverged(counts(100), counts(150), 0.5)).toBe(false);
    expect(countsDiverged(counts(100), counts(151), 0.5)).toBe(true);
    expect(countsDiverged(counts(100), counts(49), 0.5)).toBe(true);
    expect(countsDiverged(counts(100), counts(100, 100, 100, 260), 0.5)).toBe(true);
    expect(countsDiverged(counts(100), counts(100), 0)).toBe(false);
  });

  it('from an empty graph, at its first row', () => {
    expect(countsDiverged(counts(0, 0, 0, 0), counts(1, 0, 0, 0), 0.5)).toBe(true);
    expect(countsDiverged(counts(0, 0, 0, 0), counts(0, 0, 0, 0), 0.5)).toBe(false);
  });
});
