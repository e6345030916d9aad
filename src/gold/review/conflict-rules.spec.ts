import { ClaimFact, decideConflict, findConflicts, hiddenAtGold, parseReviewDecision } from './conflict-rules';

let n = 0;
const fact = (over: Partial<ClaimFact>): ClaimFact => {
  n += 1;
  const id = over.id ?? `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  return {
    id,
    goldEntityId: 'g1',
    silverEntityId: 's1',
    factType: 'attribute',
    predicate: 'lives_in',
    objectValue: 'Paris',
    isNegation: false,
    confidence: 0.9,
    validFrom: new Date('2026-01-01T00:00:00Z'),
    eventIds: [`e-${id}`],
    rootId: id,
    ...over,
  };
};

describe('findConflicts', () => {
  it('finds a value conflict across two Silver subjects of one Gold entity, for a single-valued predicate', () => {
    const a = fact({ silverEntityId: 'bob', objectValue: 'Paris' });
    const b = fact({ silverEntityId: 'bobSmith', objectValue: 'Berlin' });
    const [c, ...rest] = findConflicts([a, b]);
    expect(rest).toEqual([]);
    expect(c).toMatchObject({ kind: 'value_conflict', goldEntityId: 'g1', group: 'residence' });
    expect(c?.facts.map((f) => f.id)).toEqual([a.id, b.id].sort());
    expect(c?.key).toBe(`value_conflict:${[a.id, b.id].sort().join(',')}`);
  });

  it('uses the predicate groups of Silver’s judge (uses/prefers are one group) and preferences of any predicate', () => {
    const a = fact({ silverEntityId: 'bob', factType: 'preference', predicate: 'uses', objectValue: 'vim' });
    const b = fact({ silverEntityId: 'bobSmith', factType: 'preference', predicate: 'prefers', objectValue: 'neovim' });
    expect(findConflicts([a, b]).map((c) => c.group)).toEqual(['usage']);
  });

  it('ignores facts of one Silver subject, other Gold entities, multi-valued attributes, the same value and facts without a predicate', () => {
    expect(findConflicts([fact({ objectValue: 'Paris' }), fact({ objectValue: 'Berlin' })])).toEqual([]);
    expect(findConflicts([fact({ silverEntityId: 'a' }), fact({ silverEntityId: 'b', goldEntityId: 'g2', objectValue: 'Berlin' })])).toEqual([]);
    expect(
      findConflicts([
        fact({ silverEntityId: 'a', predicate: 'likes', objectValue: 'tea' }),
        fact({ silverEntityId: 'b', predicate: 'likes', objectValue: 'coffee' }),
      ]),
    ).toEqual([]);
    expect(findConflicts([fact({ silverEntityId: 'a', objectValue: 'Paris' }), fact({ silverEntityId: 'b', objectValue: 'paris' })])).toEqual([]);
    expect(findConflicts([fact({ silverEntityId: 'a', predicate: null }), fact({ silverEntityId: 'b', predicate: null, objectValue: 'x' })])).toEqual([]);
  });

  it('finds a negation against the positive with the same object in the same predicate group', () => {
    const pos = fact({ silverEntityId: 'bob', predicate: 'uses', objectValue: 'vim' });
    const neg = fact({ silverEntityId: 'bobSmith', predicate: 'uses', objectValue: 'vim', isNegation: true });
    expect(findConflicts([pos, neg])).toEqual([
      expect.objectContaining({ kind: 'negation_conflict', facts: [pos, neg].sort((x, y) => x.id.localeCompare(y.id)) }),
    ]);
  });

  it('keys a conflict by the lineage roots, so a rebuilt fact set has the same key', () => {
    const a = fact({ silverEntityId: 'a', objectValue: 'Paris' });
    const b = fact({ silverEntityId: 'b', objectValue: 'Berlin' });
    const rebuilt = [fact({ silverEntityId: 'a2', objectValue: 'Paris', rootId: a.id }), fact({ silverEntityId: 'b2', objectValue: 'Berlin', rootId: b.id })];
    expect(findConflicts(rebuilt)[0]?.key).toBe(findConflicts([a, b])[0]?.key);
  });
});

describe('decideConflict', () => {
  const one = (facts: ClaimFact[]) => {
    const [c] = findConflicts(facts);
    if (!c) throw new Error('no conflict');
    return decideConflict(c);
  };

  it('recency wins for preferences: the later valid_from supersedes, from its valid_from on', () => {
    const old = fact({ silverEntityId: 'bob', factType: 'preference', predicate: 'uses', objectValue: 'vim', validFrom: new Date('2026-01-10T00:00:00Z') });
    const now = fact({
      silverEntityId: 'bobSmith',
      factType: 'preference',
      predicate: 'uses',
      objectValue: 'neovim',
      validFrom: new Date('2026-03-08T00:00:00Z'),
    });
    expect(one([old, now])).toMatchObject({ outcome: 'supersede', rule: 'recency', winnerIds: [now.id], loserIds: [old.id], supersededFrom: now.validFrom });
  });

  it('frequency wins for factual claims: more distinct source events supersede, even when older', () => {
    const many = fact({ silverEntityId: 'bob', objectValue: 'Paris', eventIds: ['e1', 'e2', 'e3'], validFrom: new Date('2025-01-01T00:00:00Z') });
    const again = fact({ silverEntityId: 'bob2', objectValue: 'Paris', eventIds: ['e3'] });
    const few = fact({ silverEntityId: 'bobSmith', objectValue: 'Berlin', eventIds: ['e9'], validFrom: new Date('2026-02-01T00:00:00Z') });
    const v = one([many, again, few]);
    expect(v).toMatchObject({ outcome: 'supersede', rule: 'frequency', loserIds: [few.id] });
    expect(v.outcome === 'supersede' && [...v.winnerIds].sort()).toEqual([many.id, again.id].sort());
    expect(v.scores.winnerSources).toBe(3); // distinct events: e3 counted once
  });

  it('a later negation supersedes the positive; a positive later than its negation goes to review', () => {
    const pos = fact({ silverEntityId: 'bob', predicate: 'uses', objectValue: 'vim', validFrom: new Date('2026-01-01T00:00:00Z') });
    const neg = fact({ silverEntityId: 'bobSmith', predicate: 'uses', objectValue: 'vim', isNegation: true, validFrom: new Date('2026-02-01T00:00:00Z') });
    expect(one([pos, neg])).toMatchObject({ outcome: 'supersede', rule: 'negation', winnerIds: [neg.id], loserIds: [pos.id], supersededFrom: neg.validFrom });
    const later = { ...pos, validFrom: new Date('2026-03-01T00:00:00Z') };
    expect(one([later, neg])).toMatchObject({ outcome: 'review', rule: 'negation', reason: expect.stringMatching(/more recent than its negation/) });
  });

  it('sends low confidence, ties and disagreeing rules to review, naming ids and never fact text', () => {
    const a = fact({ silverEntityId: 'a', objectValue: 'Paris', confidence: 0.55 });
    const b = fact({ silverEntityId: 'b', objectValue: 'Berlin', eventIds: ['x', 'y'] });
    const low = one([a, b]);
    expect(low).toMatchObject({ outcome: 'review', reason: expect.stringContaining(`low confidence: ${a.id} at 0.55`) });
    expect(low.reason).not.toMatch(/Paris|Berlin/);
    expect(
      one([
        { ...a, confidence: 0.9 },
        { ...b, eventIds: ['z'] },
      ]),
    ).toMatchObject({ outcome: 'review', reason: expect.stringMatching(/^tie/) });
    // The newer preference has fewer sources and less confidence than the older one: the rules disagree.
    const older = fact({ silverEntityId: 'a', factType: 'preference', predicate: 'uses', objectValue: 'vim', eventIds: ['1', '2'], confidence: 0.95 });
    const newer = fact({
      silverEntityId: 'b',
      factType: 'preference',
      predicate: 'uses',
      objectValue: 'emacs',
      confidence: 0.8,
      validFrom: new Date('2026-05-01T00:00:00Z'),
    });
    expect(one([older, newer])).toMatchObject({ outcome: 'review', rule: 'recency', reason: expect.stringMatching(/^rules disagree/) });
    // Same, but the newer one is as confident: recency decides.
    expect(one([older, { ...newer, confidence: 0.95 }])).toMatchObject({ outcome: 'supersede', winnerIds: [newer.id] });
  });

  it('is deterministic whatever the input order', () => {
    const facts = [
      fact({ silverEntityId: 'a', objectValue: 'Paris', eventIds: ['1', '2'] }),
      fact({ silverEntityId: 'b', objectValue: 'Rome' }),
      fact({ silverEntityId: 'c', objectValue: 'Oslo' }),
    ];
    expect(findConflicts([...facts].reverse()).map((c) => decideConflict(c))).toEqual(findConflicts(facts).map((c) => decideConflict(c)));
  });
});

describe('hiddenAtGold', () => {
  const s = { factId: 'f', supersededFrom: new Date('2026-03-01T00:00:00Z'), decisionId: 'd' };
  it('hides a superseded fact now and from supersededFrom on, not before', () => {
    expect(hiddenAtGold(s, null)).toBe(true);
    expect(hiddenAtGold(s, new Date('2026-03-01T00:00:00Z'))).toBe(true);
    expect(hiddenAtGold(s, new Date('2026-02-28T00:00:00Z'))).toBe(false);
    expect(hiddenAtGold(undefined, null)).toBe(false);
  });
});

describe('parseReviewDecision', () => {
  const ids = ['00000000-0000-4000-8000-00000000000a', '00000000-0000-4000-8000-00000000000b'];
  it('accepts KEEP:<an item fact>, KEEP_ALL and DISMISS; refuses anything else naming the forms', () => {
    expect(parseReviewDecision(` keep:${ids[1]?.toUpperCase()} `, ids)).toEqual({ kind: 'KEEP', factId: ids[1] });
    expect(parseReviewDecision('KEEP_ALL', ids)).toEqual({ kind: 'KEEP_ALL' });
    expect(parseReviewDecision('dismiss', ids)).toEqual({ kind: 'DISMISS' });
    expect(parseReviewDecision('KEEP:00000000-0000-4000-8000-000000000099', ids)).toEqual({
      error: expect.stringMatching(/not in this item.*KEEP_ALL or DISMISS/),
    });
    expect(parseReviewDecision('yes please', ids)).toEqual({ error: expect.stringMatching(/^decision must be KEEP:<factId>/) });
  });
});
