import type { Judge, JudgeDecision, JudgeInput, ModelProvenance } from '../../silver/model-ports';
import { lookupTech } from './gazetteer';
import { sameValue, tokenJaccard } from './normalise';

export interface RuleJudgeOptions {
  /** A candidate at least this similar (embedding or trigram) is the same statement: SKIP. Default 0.92. */
  skipSimilarity?: number;
  /** At least this similar, same fact type and the new statement adds words: UPDATE. Default 0.8. */
  updateSimilarity?: number;
  /** Token overlap at which two free-text objects are the same value. Default 0.6. */
  objectOverlap?: number;
}

/** The default similarity thresholds, set on all-MiniLM-L6-v2's cosine scale (see judgeOptionsForEmbedder). */
export const DEFAULT_SKIP_SIMILARITY = 0.92;
export const DEFAULT_UPDATE_SIMILARITY = 0.8;

/** Predicates that hold one value at a time: a different value replaces the old one. */
export const SINGLE_VALUED = new Set(['prefers', 'lives_in', 'located_in', 'works_at', 'name', 'role', 'birthday', 'spouse', 'has_manager', 'from']);

// Predicates that say the same kind of thing about a subject.
const GROUP: Readonly<Record<string, string>> = {
  uses: 'usage',
  prefers: 'usage',
  likes: 'liking',
  lives_in: 'residence',
  located_in: 'residence',
  moved_to: 'residence',
};
/**
 * The kind of thing a predicate says about its subject (`uses` and `prefers` are both "usage"):
 * facts of one group can repeat or contradict each other. Also used by Gold's conflict rules
 * (src/gold/review/conflict-rules.ts). '' for no predicate.
 */
export const predicateGroup = (p: string | null): string => (p ? (GROUP[p] ?? p) : '');
const group = predicateGroup;

const CHANGE_WORDS = /\b(?:switched|moved|migrated|replaced|no longer|any ?more|instead|now|these days|stopped|gave up|changed)\b/i;

type Fact = JudgeInput['fact'];

/**
 * The offline default judge: deterministic rules over the structured triple, the gazetteer's
 * aliases and categories, and the candidates' similarity. First rule that fires wins:
 * 1. `replacesValue` names a candidate's object (same subject) → SUPERSEDE it;
 * 2. same subject, same predicate group, same object: negation flipped → SUPERSEDE, else more
 *    words → UPDATE, else SKIP;
 * 3. same subject and predicate group, different object, both positive, and the predicate is
 *    single-valued or the new fact is a change ("switched", "now") between interchangeable
 *    things (same gazetteer category, or unknown) → SUPERSEDE;
 * 4. similarity ≥ skipSimilarity → SKIP; ≥ updateSimilarity, same type, more words → UPDATE;
 * 5. else ADD.
 */
export class RuleJudge implements Judge {
  readonly model = 'offline-rules@1';
  readonly provenance: ModelProvenance = { adapter: 'offline-rules', promptVersion: null };
  private readonly skipSimilarity: number;
  private readonly updateSimilarity: number;
  private readonly objectOverlap: number;

  constructor(options: RuleJudgeOptions = {}) {
    this.skipSimilarity = options.skipSimilarity ?? DEFAULT_SKIP_SIMILARITY;
    this.updateSimilarity = options.updateSimilarity ?? DEFAULT_UPDATE_SIMILARITY;
    this.objectOverlap = options.objectOverlap ?? 0.6;
  }

  async decide(inputs: JudgeInput[]): Promise<JudgeDecision[]> {
    return inputs.map((input) => this.decideOne(input));
  }

  decideOne({ fact, candidates }: JudgeInput): JudgeDecision {
    // Most similar first; ties by id so the decision never depends on input order.
    const sorted = [...candidates].sort((a, b) => b.similarity - a.similarity || a.id.localeCompare(b.id));
    const mine = sorted.filter((c) => sameSubject(fact.subjectName, c.subjectName));
    if (fact.replacesValue) {
      const old = mine.find((c) => !c.isNegation && this.same(c.objectValue, fact.replacesValue));
      if (old) return { action: 'SUPERSEDE', targetId: old.id, reason: `"${fact.statement}" replaces ${fact.replacesValue}, which "${old.statement}" states` };
    }
    for (const c of mine) {
      if (group(c.predicate) !== group(fact.predicate) || !fact.predicate) continue;
      if (!this.same(c.objectValue, fact.objectValue)) continue;
      if (c.isNegation !== fact.isNegation)
        return { action: 'SUPERSEDE', targetId: c.id, reason: `negation flips: "${fact.statement}" now contradicts "${c.statement}"` };
      if (moreDetail(fact.statement, c.statement))
        return { action: 'UPDATE', targetId: c.id, reason: `same ${fact.predicate} ${fact.objectValue}, with more detail than "${c.statement}"` };
      return { action: 'SKIP', targetId: c.id, reason: `already known: "${c.statement}"` };
    }
    for (const c of mine) {
      if (!fact.predicate || group(c.predicate) !== group(fact.predicate) || fact.isNegation || c.isNegation) continue;
      if (this.same(c.objectValue, fact.objectValue)) continue;
      const single = SINGLE_VALUED.has(fact.predicate) && SINGLE_VALUED.has(c.predicate ?? '');
      if (single || (isChange(fact) && interchangeable(c.objectValue, fact.objectValue))) {
        return {
          action: 'SUPERSEDE',
          targetId: c.id,
          reason: `${single ? `${fact.predicate} holds one value` : 'a change'}: ${fact.objectValue} replaces ${c.objectValue} ("${c.statement}")`,
        };
      }
    }
    const near = sorted[0];
    if (near && near.similarity >= this.skipSimilarity)
      return { action: 'SKIP', targetId: near.id, reason: `near-identical (similarity ${near.similarity.toFixed(2)}) to "${near.statement}"` };
    const close = sorted.find(
      (c) =>
        c.similarity >= this.updateSimilarity && c.factType === fact.factType && c.isNegation === fact.isNegation && moreDetail(fact.statement, c.statement),
    );
    if (close)
      return {
        action: 'UPDATE',
        targetId: close.id,
        reason: `same meaning (similarity ${close.similarity.toFixed(2)}) with more detail than "${close.statement}"`,
      };
    return { action: 'ADD', targetId: null, reason: candidates.length === 0 ? 'no related fact' : 'no candidate states or conflicts with this' };
  }

  private same(a: string | null, b: string | null): boolean {
    return sameValue(a, b, this.objectOverlap);
  }
}

function sameSubject(a: string | null, b: string | null): boolean {
  if (a === null || b === null) return true;
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

function isChange(fact: Fact): boolean {
  return fact.replacesValue !== null || CHANGE_WORDS.test(fact.statement);
}

/** Two values can replace each other: same gazetteer category, or at least one unknown to it. */
function interchangeable(a: string | null, b: string | null): boolean {
  const x = a ? lookupTech(a) : undefined;
  const y = b ? lookupTech(b) : undefined;
  return !x || !y || x.category === y.category;
}

/** The new statement says at least as much and something more. */
function moreDetail(next: string, old: string): boolean {
  return next.length > old.length + 3 && tokenJaccard(next, old) < 1 && containsTokens(next, old);
}

function containsTokens(next: string, old: string): boolean {
  const n = new Set(next.toLowerCase().split(/\W+/).filter(Boolean));
  return old
    .toLowerCase()
    .split(/\W+/)
    .filter(Boolean)
    .every((w) => n.has(w));
}
