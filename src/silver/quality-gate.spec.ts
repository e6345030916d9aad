import { ExtractionEvent, ExtractionResult } from './model-ports';
import { applyQualityGate, mapEntityType, mapRelationshipType } from './quality-gate';

const event: ExtractionEvent = {
  id: 'ev1',
  content: 'I use Postgres at Acme in Berlin',
  kind: 'message',
  role: 'user',
  actor: null,
  occurredAt: new Date(),
  conversationId: null,
  sequenceNum: null,
};
const span = { eventId: 'ev1', start: 0, end: 14 };

describe('ontology quality gate', () => {
  it('maps types by documented synonyms, else to concept / related_to', () => {
    expect(mapEntityType('technology')).toEqual({ type: 'technology', mapped: false });
    expect(mapEntityType('Company')).toEqual({ type: 'organization', mapped: true });
    expect(mapEntityType('city')).toEqual({ type: 'place', mapped: true });
    expect(mapEntityType('spaceship')).toEqual({ type: 'concept', mapped: true });
    expect(mapRelationshipType('works_at')).toEqual({ type: 'works_on', mapped: true });
    expect(mapRelationshipType('admires')).toEqual({ type: 'related_to', mapped: true });
  });

  it('never drops silently: every change leaves a note, facts without a valid source are removed with one', () => {
    const raw: ExtractionResult = {
      entities: [
        { ref: 'a', name: 'Acme', type: 'company', aliases: [], mentions: [span] },
        { ref: 'b', name: 'Postgres', type: 'technology', aliases: [], mentions: [{ eventId: 'ev1', start: 5, end: 999 }] },
      ],
      facts: [
        {
          ref: 'f1',
          statement: 'The user uses Postgres',
          factType: 'preference',
          subjectRef: 'zzz',
          predicate: 'uses',
          objectValue: 'Postgres',
          objectRef: 'b',
          isNegation: false,
          confidence: 7,
          validFrom: null,
          validTo: null,
          replacesValue: null,
          sources: [span],
        },
        {
          ref: 'f2',
          statement: 'Invented',
          factType: 'gossip',
          subjectRef: null,
          predicate: null,
          objectValue: null,
          objectRef: null,
          isNegation: false,
          confidence: 0.5,
          validFrom: null,
          validTo: null,
          replacesValue: null,
          sources: [{ eventId: 'other-event', start: 0, end: 3 }],
        },
      ],
      relationships: [
        { ref: 'r1', type: 'employs', sourceRef: 'a', targetRef: 'b', confidence: 0.8, validFrom: null, sources: [span] },
        { ref: 'r2', type: 'uses', sourceRef: 'a', targetRef: 'ghost', confidence: 0.8, validFrom: null, sources: [span] },
      ],
    };
    const { result, notes } = applyQualityGate(raw, [event]);
    expect(result.entities.map((e) => e.type)).toEqual(['organization', 'technology']);
    expect(result.entities[1]?.mentions).toEqual([]);
    expect(result.facts).toHaveLength(1);
    expect(result.facts[0]).toMatchObject({ subjectRef: null, objectRef: 'b', confidence: 1 });
    expect(result.relationships).toEqual([expect.objectContaining({ type: 'related_to', sourceRef: 'a', targetRef: 'b' })]);
    expect(notes.map((n) => n.rule).sort()).toEqual([1, 2, 3, 4, 4, 5, 5, 5].sort());
  });
});

describe('ontology quality gate with earlier turns (context read beside the batch)', () => {
  const before: ExtractionEvent = { ...event, id: 'ev0', content: 'meeting w/ legal' };
  const fact = (ref: string, sources: Array<{ eventId: string; start: number; end: number }>): ExtractionResult['facts'][number] => ({
    ref,
    statement: `fact ${ref}`,
    factType: 'other',
    subjectRef: null,
    predicate: 'said',
    objectValue: null,
    objectRef: null,
    isNegation: false,
    confidence: 0.55,
    validFrom: null,
    validTo: null,
    replacesValue: null,
    sources,
  });

  it('keeps a fact that cites an earlier turn beside the batch, drops one resting on earlier turns only, and keeps no mention in them', () => {
    const earlierSpan = { eventId: 'ev0', start: 0, end: 16 };
    const raw: ExtractionResult = {
      entities: [{ ref: 'a', name: 'Postgres', type: 'technology', aliases: [], mentions: [earlierSpan, { eventId: 'ev1', start: 6, end: 14 }] }],
      facts: [fact('both', [earlierSpan, span]), fact('earlier', [earlierSpan])],
      relationships: [],
    };
    const { result, notes } = applyQualityGate(raw, [event], undefined, [before]);
    expect(result.facts.map((f) => [f.ref, f.sources])).toEqual([['both', [earlierSpan, span]]]);
    expect(result.entities[0]?.mentions).toEqual([{ eventId: 'ev1', start: 6, end: 14 }]);
    expect(notes).toEqual([{ rule: 5, detail: 'fact "fact earlier" removed: it rests on earlier turns only (derived with them)' }]);
    // Without the earlier turns, their spans name no known event.
    expect(applyQualityGate(raw, [event]).result.facts.map((f) => [f.ref, f.sources])).toEqual([['both', [span]]]);
  });

  it('removes a malformed statement with a note (rule 7) and keeps the well-formed one beside it', () => {
    const allergy: ExtractionEvent = { ...event, id: 'ev2', content: "I'm allergic to peanuts, so be careful with recipes." };
    const fact = (ref: string, statement: string, objectValue: string) => ({
      ref,
      statement,
      factType: 'attribute',
      subjectRef: null,
      predicate: 'allergic_to',
      objectValue,
      objectRef: null,
      isNegation: false,
      confidence: 0.9,
      validFrom: null,
      validTo: null,
      replacesValue: null,
      sources: [{ eventId: 'ev2', start: 0, end: 24 }],
    });
    const { result, notes } = applyQualityGate(
      {
        entities: [],
        facts: [
          fact('f1', 'The user is allergic to peanuts', 'peanuts'),
          fact('f2', 'The user is allergic to so be careful with recipes', 'so be careful with recipes'),
        ],
        relationships: [],
      },
      [allergy],
    );
    expect(result.facts.map((f) => f.statement)).toEqual(['The user is allergic to peanuts']);
    expect(notes).toEqual([
      { rule: 7, detail: expect.stringMatching(/^fact "The user is allergic to so be careful with recipes" removed: malformed, its object/) },
    ]);
  });
});
