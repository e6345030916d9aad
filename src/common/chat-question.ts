/**
 * Whether a chat turn or sentence asks rather than states. Chat drops question marks and puts the
 * addressee first: "Marco did u ever get the bike", "Kat how was the panel", "where r u". A
 * question states nothing, so extraction keeps no fact of it and search weighs it below a turn
 * that answers. A clause that opens with a question word but goes on as a statement ("When you
 * book flights for me, always pick an aisle seat") does not ask; neither does "Kat did the dishes"
 * (an auxiliary asks only before its subject).
 */
export function asks(text: string): boolean {
  const t = text.trim();
  if (/\?\s*$/.test(t)) return true;
  return OPENS_A_QUESTION.test(withoutVocative(t));
}

/**
 * The turn without a leading name it addresses ("Marco did u …", "Kat, how was …", "Kat!! how did
 * it go"): a capitalised word other than "I" before a lower-case word, set off by punctuation or
 * followed by a question.
 */
export function withoutVocative(text: string): string {
  const t = text.trim();
  const m = VOCATIVE.exec(t);
  if (!m) return t;
  const rest = t.slice(m[0].length);
  // Set off by punctuation, or followed by a question: "Porto is lovely" names its subject.
  return m[1] || OPENS_A_QUESTION.test(rest) ? rest : t;
}

/**
 * Whether a question asks for yes or no ("Does the user like country music?", "is Kat coming"):
 * it opens (after a name it addresses) with an auxiliary, not a question word. A fact that denies
 * answers it as well as one that affirms.
 */
export function asksYesOrNo(text: string): boolean {
  return YES_OR_NO.test(withoutVocative(text.trim()));
}

const YES_OR_NO =
  /^(?:do|does|did|dont|don't|doesn't|didn't|is|isn't|are|aren't|am|was|wasn't|were|weren't|has|hasn't|have|haven't|had|can|can't|could|will|won't|would|should|shall|may|might|must)\s/i;

const VOCATIVE = /^(?!I\b)\p{Lu}[\p{L}'-]*([,!?.]*)\s+(?=\p{Ll})/u;

const OPENS_A_QUESTION =
  /^(?:(?:did|do|does|dont|don't|didnt|didn't|is|isnt|isn't|are|arent|aren't|was|were|can|could|will|would|should|have|has|r)\s+(?:u|you|ya|we|they|he|she|it|i|ur|your|anyone|any|there)\b|(?:what|where|when|why|how|which|who|whose)\s+(?:is|are|was|were|do|does|did|can|could|will|would|should|has|have|r|u)\b|(?:what|where|when|why|how|who)'s\b)/i;
