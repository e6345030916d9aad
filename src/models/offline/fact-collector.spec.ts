import { EntityRegistry } from './entity-registry';
import { FactCollector, NewFact } from './fact-collector';

describe('FactCollector', () => {
  const registry = new EntityRegistry();
  const user = registry.upsert('the user', 'person', null, null, 0);
  const ana = registry.upsert('Ana', 'person', null, null, 0);
  const fact = (over: Partial<NewFact>): NewFact => ({
    statement: "The user's sister is Ana",
    factType: 'relationship',
    subject: user,
    predicate: 'sibling',
    value: 'Ana',
    objectEntity: ana,
    isNegation: false,
    confidence: 0.9,
    validFrom: null,
    replaces: null,
    source: { eventId: 'e1', start: 0, end: 20 },
    ...over,
  });

  it('takes back a fact with the relationship found with it, and keeps the others; later facts get refs of their own', () => {
    const out = new FactCollector();
    out.add(fact({}));
    out.add(
      fact({
        statement: 'The user and others are nine now',
        predicate: 'be',
        value: 'nine now',
        objectEntity: null,
        source: { eventId: 'e2', start: 0, end: 30 },
      }),
    );
    out.add(fact({ statement: "The user's friend is Ana", predicate: 'friend', source: { eventId: 'e3', start: 0, end: 20 } }));
    expect(out.relationships.map((r) => r.type)).toEqual(['knows', 'knows']);

    out.remove([out.facts[0]!, out.facts[1]!]);
    expect(out.facts.map((f) => f.statement)).toEqual(["The user's friend is Ana"]);
    // The sibling's relationship went with it; the friend's stays.
    expect(out.relationships.map((r) => r.sources[0]?.eventId)).toEqual(['e3']);

    out.add(
      fact({
        statement: "The user's team is nine people",
        predicate: 'team_size',
        value: 'nine people',
        objectEntity: null,
        source: { eventId: 'e4', start: 0, end: 9 },
      }),
    );
    expect(new Set(out.facts.map((f) => f.ref)).size).toBe(out.facts.length);
  });
});
