/** Word tables of the offline extractor's clause rules (patterns.ts, third-person-patterns.ts). */

/** A negated verb → [the predicate it denies, the bare verb for the statement]. */
export const NEG_VERBS: Record<string, [string, string]> = {
  use: ['uses', 'use'],
  like: ['likes', 'like'],
  love: ['likes', 'like'],
  enjoy: ['likes', 'like'],
  eat: ['eats', 'eat'],
  drink: ['drinks', 'drink'],
  want: ['wants', 'want'],
  need: ['needs', 'need'],
  trust: ['trusts', 'trust'],
  play: ['plays', 'play'],
  watch: ['watches', 'watch'],
  own: ['owns', 'own'],
  write: ['uses', 'write'],
  touch: ['uses', 'touch'],
  do: ['does', 'do'],
  care: ['likes', 'care for'],
};

/** A relation word in "my wife Anna" → the relationship predicate. */
export const RELATIVES: Record<string, string> = {
  wife: 'spouse',
  husband: 'spouse',
  partner: 'spouse',
  spouse: 'spouse',
  brother: 'sibling',
  sister: 'sibling',
  sibling: 'sibling',
  mother: 'parent',
  mom: 'parent',
  mum: 'parent',
  father: 'parent',
  dad: 'parent',
  son: 'child',
  daughter: 'child',
  manager: 'has_manager',
  boss: 'has_manager',
  colleague: 'colleague',
  coworker: 'colleague',
  teammate: 'colleague',
  girlfriend: 'dating',
  boyfriend: 'dating',
  fiancee: 'dating',
  fiancée: 'dating',
  fiance: 'dating',
  roommate: 'roommate',
  neighbour: 'neighbor',
  neighbor: 'neighbor',
  friend: 'friend',
  cofounder: 'cofounder',
  'co-founder': 'cofounder',
  lead: 'has_manager',
  mentor: 'mentor',
};
export const REL_WORDS = Object.keys(RELATIVES).join('|');
export const relationPredicate = (word: string): string => RELATIVES[word.toLowerCase()] ?? 'knows';
