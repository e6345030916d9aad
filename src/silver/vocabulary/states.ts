/**
 * States a person is in one of at a time, by kind: a diet, a relationship status, a working
 * status. The offline judge reads "The user went fully vegan" as replacing "The user is
 * vegetarian" because both name a state of the same kind for the same subject; nothing in the
 * words of the two facts says so otherwise (they share no topic word, and on e5's compressed scale
 * their similarity is no evidence). Hand-kept like the gazetteer; a word in two kinds is in none.
 */
const KINDS: Readonly<Record<string, readonly string[]>> = {
  diet: ['vegetarian', 'vegan', 'pescatarian', 'pescetarian', 'omnivore', 'carnivore', 'keto', 'paleo', 'flexitarian', 'plant-based'],
  relationship: ['single', 'married', 'engaged', 'divorced', 'widowed', 'separated'],
  work: ['employed', 'unemployed', 'retired', 'self-employed', 'jobless'],
};

const KIND_OF = new Map<string, string>(Object.entries(KINDS).flatMap(([kind, words]) => words.map((w) => [w, kind] as const)));

/**
 * The state a statement gives its subject, right after the subject and a verb of being or
 * becoming ("The user is vegetarian", "The user went fully vegan", "Sam is now married", "The user
 * has been retired since May"), or null; a past state ("was married") says nothing of now. `subject` is the statement's subject as written at its
 * start; a state of someone else ("The user's sister is vegan") is not the subject's.
 */
export function stateOf(statement: string, subject: string | null): { kind: string; state: string } | null {
  if (!subject) return null;
  const text = statement.trim();
  if (text.slice(0, subject.length).toLowerCase() !== subject.toLowerCase()) return null;
  const m = STATE_AFTER_SUBJECT.exec(text.slice(subject.length));
  const state = m?.groups?.state?.toLowerCase();
  const kind = state ? KIND_OF.get(state) : undefined;
  return state && kind ? { kind, state } : null;
}

const STATE_AFTER_SUBJECT =
  /^\s+(?:(?:is|are|has been|have been|went|goes|became|becomes|has become|turned|got|gets|stays|remains)\s+)(?:(?:now|still|fully|completely|totally|strictly|mostly|officially|finally|just|a|an)\s+)*(?<state>[a-z-]+)\b/i;
