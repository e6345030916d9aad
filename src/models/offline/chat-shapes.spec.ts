import type { ExtractionEvent } from '../../silver/model-ports';
import { ENTITY_TYPES, FACT_TYPES, RELATIONSHIP_TYPES } from '../../silver/ontology';
import { RuleExtractor } from './rule-extractor';

/**
 * Shapes of chat between two people that a turn states a fact in but the rules used to miss
 * (issue 23 item 4, turn coverage), each with a near miss that must stay without a fact.
 */
const at = new Date('2023-05-08T13:56:00Z');
const extractor = new RuleExtractor();
const CTX = { namespace: 't', entityTypes: ENTITY_TYPES, relationshipTypes: RELATIONSHIP_TYPES, factTypes: FACT_TYPES };

/** Statements of the last turn, after an opening turn of the other speaker (so "you" is known). */
async function said(speaker: string, text: string, other = speaker === 'Maria' ? 'John' : 'Maria'): Promise<string[]> {
  const turns: ExtractionEvent[] = [
    { id: 'e0', content: `${other}: Hi!`, kind: 'message', role: 'user', actor: other, occurredAt: at, conversationId: 'c', sequenceNum: 1 },
    { id: 'e1', content: `${speaker}: ${text}`, kind: 'message', role: 'user', actor: speaker, occurredAt: at, conversationId: 'c', sequenceNum: 2 },
  ];
  const res = await extractor.extract(turns, CTX);
  return res.facts.filter((f) => f.sources[0]?.eventId === 'e1').map((f) => f.statement);
}

describe('RuleExtractor: shapes of chat between people', () => {
  it('reads an irregular past compromise leaves untagged ("got back") as an event', async () => {
    expect(await said('John', 'Just got back from a family road trip yesterday, it was fun!')).toEqual([
      'John just got back from a family road trip on 7 May 2023',
    ]);
    // "got" with nothing named after it stays a reaction.
    expect(await said('John', 'I got it!')).toEqual([]);
  });

  it('reads "have gone <activity>" with the activity as its content', async () => {
    expect(await said('Maria', "I've gone camping a few times but never tried mountain climbing.")).toEqual(['Maria has gone camping a few times']);
    expect(await said('Maria', "I've gone a few times.")).toEqual([]);
  });

  it('keeps a plan too long for one value without its trailing relative clause, not dropping it', async () => {
    expect(await said('Caroline', "I hope to build my own family and put a roof over kids who haven't had that before.")).toEqual([
      "Caroline plans to build Caroline's own family and put a roof over kids",
    ]);
  });

  it('reads a present verb compromise tags as a noun when an object pronoun follows it', async () => {
    expect(await said('Melanie', 'Family time matters to me.')).toEqual(['Family time matters to Melanie']);
    expect(await said('Caroline', 'Painting helps me explore my identity.')).toEqual(["Painting helps Caroline explore Caroline's identity"]);
    // A plural noun before a pronoun that is no object stays a noun: nothing is stated.
    expect(await said('Melanie', 'Family matters, you know.')).toEqual([]);
  });

  it('reads "it is <evaluation> to/how/-ing …" as the speaker\'s view when what follows names something', async () => {
    expect(await said('John', "It's important to support each other when we're feeling down.")).toEqual(['John said it is important to support each other']);
    expect(await said('Maria', "It's great to see community power in action.")).toEqual(['Maria said it is great to see community power in action']);
    expect(await said('Caroline', "It's amazing how art can show things that are hard to put into words.")).toEqual([
      'Caroline said it is amazing how art can show things that are hard to put into words',
    ]);
    expect(await said('Gina', "It's awesome seeing my vision happen.", 'Jon')).toEqual(["Gina said it is awesome seeing Gina's vision happen"]);
    expect(await said('Maria', 'It was inspiring seeing everyone come together for a shared goal.')).toEqual([
      'Maria said it was inspiring seeing everyone come together for a shared goal',
    ]);
  });

  it('keeps courtesies and empty evaluations without a fact', async () => {
    for (const text of [
      "It's great to see you!",
      "It's nice to meet you.",
      "It's so good to be back.",
      "It's been great chatting with you.",
      "It's so nice having you here.",
      "It's amazing how peaceful and pretty it can be.",
      "It's amazing how far you've come!",
      "It's hard to say.",
      "It's time to go home.",
      "It's hard to believe it's already May.",
    ])
      expect([text, await said('Maria', text)]).toEqual([text, []]);
  });
});
