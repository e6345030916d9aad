import { SilverCandidate } from './promotion.types';
import { cooccurrence, goldContent, namesCompatible, offlineEntityDecision, typeLabel } from './resolution-rules';

const judged = (a: { name: string; type: string }, b: { name: string; type: string }, cooc: number) =>
  offlineEntityDecision({
    entity: { id: 'a', aliases: [], ...a },
    partner: { id: 'b', aliases: [], ...b },
    trigram: 0.4,
    cosine: null,
    cooccurrence: cooc,
    fallbackType: 'concept',
  });

const member = (over: Partial<SilverCandidate>): SilverCandidate => ({
  id: 'x',
  type: 'person',
  name: 'x',
  nameKey: 'x',
  aliases: [],
  aliasKeys: [],
  confidence: 0.8,
  eventIds: [],
  conversationIds: [],
  recordedAt: new Date('2026-01-01T00:00:00Z'),
  retired: false,
  goldId: null,
  ...over,
});

describe('resolution rules', () => {
  it('names are compatible when the shorter one is contained word by word', () => {
    expect(namesCompatible('bob', 'bob smith')).toBe(true);
    expect(namesCompatible('mr. smith', 'bob smith')).toBe(true);
    expect(namesCompatible('jon smith', 'john smyth')).toBe(false);
    expect(namesCompatible('bob', 'robert')).toBe(false);
  });

  it('co-occurrence is shared contexts over the smaller side', () => {
    expect(cooccurrence(['c1', 'c2'], ['c2'])).toBe(1);
    expect(cooccurrence(['c1'], ['c2'])).toBe(0);
    expect(cooccurrence([], ['c2'])).toBe(0);
  });

  it('the offline judge merges across types only from the fallback type, and only in shared contexts', () => {
    expect(judged({ name: 'bob', type: 'concept' }, { name: 'Bob', type: 'person' }, 1)).toMatchObject({ same: true, type: 'person' });
    expect(judged({ name: 'bob', type: 'concept' }, { name: 'Bob', type: 'person' }, 0).same).toBe(false);
    expect(judged({ name: 'Bob', type: 'project' }, { name: 'Bob', type: 'person' }, 1).same).toBe(false);
    expect(judged({ name: 'Jon Smith', type: 'person' }, { name: 'John Smyth', type: 'person' }, 1).same).toBe(false);
  });

  it('Gold content: best-attested name, the others as aliases once, majority type over the fallback', () => {
    const c = goldContent(
      [
        member({ id: 'a', name: 'Bob', nameKey: 'bob', eventIds: ['e1', 'e2'] }),
        member({ id: 'b', name: 'Bob Smith', nameKey: 'bob smith', eventIds: ['e1'], aliases: ['Bobby'], aliasKeys: ['bobby'] }),
        member({ id: 'c', name: 'bob', nameKey: 'bob', type: 'concept', eventIds: ['e3'], confidence: 0.95 }),
      ],
      'concept',
      null,
    );
    expect(c).toEqual({ type: 'person', name: 'Bob', nameKey: 'bob', aliases: ['Bob Smith', 'Bobby'], confidence: 0.95, sourceCount: 3 });
  });

  it('type labels are checked identifiers and never one of the projection labels', () => {
    expect(typeLabel('programming_language')).toBe('ProgrammingLanguage');
    expect(() => typeLabel('person`) DETACH DELETE n //')).toThrow(/cannot be a Gold label/);
    expect(() => typeLabel('fact')).toThrow(/cannot be a Gold label/);
  });
});
