import { Fact } from './silver.types';
import { isHeldAt, isPreference, replacedChain } from './preference-rules';

const fact = (id: string, over: Partial<Fact> = {}): Fact => ({
  id,
  namespace: 'ns',
  statement: id,
  factType: 'preference',
  subjectEntityId: 'e',
  predicate: 'prefers',
  objectValue: id,
  objectEntityId: null,
  isNegation: false,
  confidence: 0.9,
  importance: 0.5,
  validFrom: new Date('2020-01-01T00:00:00Z'),
  validTo: null,
  recordedAt: new Date('2020-01-01T00:00:00Z'),
  retiredAt: null,
  supersededById: null,
  extractionModel: 'm',
  derivationRunId: 'r',
  ...over,
});

describe('isPreference', () => {
  it('takes the preference fact type or a preference predicate, in any case', () => {
    expect(isPreference({ factType: 'preference', predicate: null })).toBe(true);
    expect(isPreference({ factType: 'attribute', predicate: 'Prefers' })).toBe(true);
    expect(isPreference({ factType: 'attribute', predicate: 'dislikes' })).toBe(true);
    expect(isPreference({ factType: 'attribute', predicate: 'works_at' })).toBe(false);
    expect(isPreference({ factType: 'event', predicate: null })).toBe(false);
  });
});

describe('isHeldAt', () => {
  it('holds a current fact now, a superseded one only at a time inside its validity, a retired one never', () => {
    const old = fact('old', { validTo: new Date('2021-01-01T00:00:00Z'), supersededById: 'new' });
    expect(isHeldAt(fact('new'), null)).toBe(true);
    expect(isHeldAt(old, null)).toBe(false);
    expect(isHeldAt(old, new Date('2020-06-01T00:00:00Z'))).toBe(true);
    expect(isHeldAt(old, new Date('2021-01-01T00:00:00Z'))).toBe(false);
    expect(isHeldAt(fact('gone', { retiredAt: new Date() }), null)).toBe(false);
  });
});

describe('replacedChain', () => {
  const head = fact('c', { validFrom: new Date('2022-01-01T00:00:00Z') });
  const b = fact('b', { supersededById: 'c', validFrom: new Date('2021-01-01T00:00:00Z'), validTo: new Date('2022-01-01T00:00:00Z') });
  const a = fact('a', { supersededById: 'b', validFrom: new Date('2020-01-01T00:00:00Z'), validTo: new Date('2021-01-01T00:00:00Z') });

  it('walks supersededBy back from the preference, newest first, whatever order the graph gave', () => {
    expect(replacedChain(head, [a, b], 50).map((f) => f.id)).toEqual(['b', 'a']);
  });

  it('drops a candidate Postgres does not link into the chain, one of another namespace, and a retired one', () => {
    const stray = fact('stray', { supersededById: 'elsewhere' });
    const foreign = fact('foreign', { namespace: 'other', supersededById: 'c' });
    const retired = fact('retired', { supersededById: 'c', retiredAt: new Date() });
    expect(replacedChain(head, [b, stray, foreign, retired], 50).map((f) => f.id)).toEqual(['b']);
    // A break in the chain (b missing) stops the walk: a is not linked to the preference.
    expect(replacedChain(head, [a], 50)).toEqual([]);
  });

  it('stops at a cycle and at the limit', () => {
    const loop = fact('c2', { supersededById: 'b' });
    expect(replacedChain(head, [a, b, fact('x', { supersededById: 'a' }), loop], 2).map((f) => f.id)).toEqual(['b', 'a']);
    const cyc = fact('h', { supersededById: 'y' });
    const y = fact('y', { supersededById: 'h' });
    expect(replacedChain(cyc, [y, cyc], 50).map((f) => f.id)).toEqual(['y']);
  });
});
