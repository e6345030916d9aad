/**
 * Whether a fact's statement is well formed (issue 44, item 5): a statement whose object is a
 * dangling clause ("The user is allergic to so be careful with recipes", "Maya switched to which
 * is tiring") or whose verb phrase is cut ("Gina's favourite memory was", "The user added the
 * version column and") says nothing a reader can use, and once written it ranks and supersedes
 * like any other fact. The quality gate removes such a fact with a note (quality-gate.ts, rule 7),
 * whichever extractor wrote it. The rules read closed classes of words only (conjunctions,
 * determiners, prepositions, auxiliaries), never the topic words of some data.
 */

/** Words that open a clause and cannot open a noun phrase: a value that starts with one is the rest of a sentence. */
const CLAUSE_OPENER = /^(?:and|or|but|nor|which|whereas|plus)\b/i;
/**
 * "so" starting a clause ("so be careful", "so I can", "so maybe we …"), not "so much fun": the
 * word after it is a pronoun, a determiner, an auxiliary or a modal.
 */
const SO_CLAUSE =
  /^so\s+(?:i|you|we|they|he|she|it|that|this|there|the|a|an|my|your|our|their|his|its|be|let|let's|maybe|can|could|will|would|should|must|do|don't|dont|please|if|now|then)\b/i;
const PREPOSITION = '(?:to|of|for|with|about|from|at|in|on|into|onto|by)';
/** A preposition whose object is a connector: the noun phrase it governed was cut out ("allergic to so …", "switched to which …"). */
const PREPOSITION_BEFORE_CONNECTOR = new RegExp(
  `\\b${PREPOSITION}\\s+(?:but|which|because|whereas|although|though|cause|cuz)\\b|\\b${PREPOSITION}\\s+${SO_CLAUSE.source.slice(1)}`,
  'i',
);
/** A statement ending on a conjunction, an article or a possessive determiner stops mid-phrase. */
const DANGLING_END = /\b(?:and|or|but|nor|because|the|a|an|my|your|our|their|its)$/i;
/**
 * A statement ending on a copula or a modal stops mid-verb-phrase ("Gina's favourite memory was"),
 * unless a clause before it ends there of its own accord ("how important kindness is", "however
 * Maria can", "as much as she can").
 */
const CUT_VERB = /\b(?:is|are|was|were|be|been|am|will|would|can|could|should|shall|may|might|must)$/i;
const CLAUSE_BEFORE = /\b(?:how|what|who|whom|where|when|why|however|whatever|whoever|wherever|as|than|that|which|if|whether|because|since)\b/i;

/** Why a statement is malformed (a short reason), or null when it is well formed. `object` is its object value, when the extractor gave one. */
export function malformedStatement(statement: string, object: string | null): string | null {
  const value = (object ?? '').trim();
  if (CLAUSE_OPENER.test(value) || SO_CLAUSE.test(value)) return `its object "${value}" opens a clause`;
  const text = statement.trim().replace(/[.!?]+$/, '');
  if (PREPOSITION_BEFORE_CONNECTOR.test(text)) return 'a preposition is followed by a connector: the phrase it governs is missing';
  if (DANGLING_END.test(text)) return 'it ends on a conjunction or determiner';
  if (CUT_VERB.test(text) && !CLAUSE_BEFORE.test(text)) return 'it ends on an auxiliary: the verb phrase is cut';
  return null;
}
