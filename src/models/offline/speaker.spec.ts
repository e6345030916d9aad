import type { ExtractionEvent } from '../../silver/model-ports';
import { addresseeOf, bodyStart, rewritePersons, speaksToAssistant } from './speaker';

const ev = (id: string, actor: string | null, role = 'user', conversationId = 'c1'): ExtractionEvent => ({
  id,
  content: 'x',
  kind: 'message',
  role,
  actor,
  occurredAt: new Date('2023-05-08T00:00:00Z'),
  conversationId,
  sequenceNum: 0,
});

describe('speaker', () => {
  it('finds where the spoken text starts after a "<actor>:" prefix, and only for the actor', () => {
    expect(bodyStart('Caroline: I went home.', 'Caroline')).toBe(10);
    expect(bodyStart('Caroline:I went home.', 'Caroline')).toBe(9);
    expect(bodyStart('Caroline went home.', 'Caroline')).toBe(0);
    expect(bodyStart('Melanie: I went home.', 'Caroline')).toBe(0);
    expect(bodyStart('Caroline: I went home.', null)).toBe(0);
  });

  it('takes the addressee from the nearest other party of the same conversation', () => {
    const events = [ev('1', 'Caroline'), ev('2', 'Melanie'), ev('3', 'Melanie'), ev('4', 'Bob', 'user', 'other')];
    expect(addresseeOf(events, 2)).toBe('Caroline'); // previous speaker other than Melanie
    expect(addresseeOf(events, 0)).toBe('Melanie'); // no one before: the next speaker
    expect(addresseeOf(events, 3)).toBeNull(); // alone in its conversation
    expect(addresseeOf([ev('1', null, 'user')], 0)).toBe('the assistant'); // a user talks to the assistant
  });

  it('tells a turn spoken to the assistant from one spoken to another person', () => {
    expect(speaksToAssistant([ev('1', 'Caroline'), ev('2', 'Melanie')], 1)).toBe(false); // two people
    expect(speaksToAssistant([ev('1', null, 'assistant'), ev('2', null, 'user')], 1)).toBe(true);
    expect(speaksToAssistant([ev('1', 'Sam'), ev('2', 'Ava', 'assistant')], 0)).toBe(true); // a named assistant
    expect(speaksToAssistant([ev('1', 'Sam')], 0)).toBe(true); // no one else in sight: the agent listens
  });

  it('writes first and second person out as names, keeping the rest of the phrase', () => {
    const p = { speaker: 'Melanie', addressee: 'Caroline' };
    expect(rewritePersons('took my fam camping', p)).toBe("took Melanie's family camping");
    expect(rewritePersons('helped me and my kids', p)).toBe("helped Melanie and Melanie's kids");
    expect(rewritePersons('the painting you gave me', p)).toBe('the painting Caroline gave Melanie');
    expect(rewritePersons("the difference you're making in your town", p)).toBe("the difference Caroline is making in Caroline's town");
    expect(rewritePersons('some me-time', p)).toBe('some me-time');
    expect(rewritePersons('moved to the US', p)).toBe('moved to the US');
    expect(rewritePersons('the painting you gave me', { speaker: 'Melanie', addressee: null })).toBeNull();
  });
});
