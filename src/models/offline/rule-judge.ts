import { OFFLINE_RULES_MODEL } from './rule-set';
import type { Judge, JudgeCandidate, JudgeDecision, JudgeInput, ModelProvenance } from '../../silver/model-ports';
import { lookupTech } from '../../silver/vocabulary/gazetteer';
import { sameValue, tokenJaccard } from '../../silver/vocabulary/normalise';
import { wordKey } from '../../common/word-forms';
import { predicateGroup, SINGLE_VALUED } from '../../silver/ontology';
import { stateOf } from '../../silver/vocabulary/states';
import { LIGHT_VERBS } from './general-clauses';
import { saysAChange } from '../../common/change-cues';

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

const group = predicateGroup;

const CHANGE_WORDS = /\b(?:switched|moved|migrated|replaced|no longer|any ?more|instead|now|these days|stopped|gave up|changed)\b/i;

/** Words that name no topic: a change shares a topic with an older fact by some other word. */
const GENERIC = new Set(
  (
    'user assistant speaker i me my mine we our us you your he she they them his her their it its this that these those there here ' +
    'be is are was were been being am have has had having do does did done get got go went going goes make made use used uses ' +
    'say said tell told know think want like really just also very much many more most some any all every each one two ' +
    'completely entirely totally altogether fully ' +
    'now then today yesterday tomorrow day days week weeks weekend month months year years time times ago last next ' +
    'again still already ever never always often actually anymore longer new old instead only ' +
    'switch switched move moved start started stop stopped quit left sold change changed took take up went become became turned ' +
    'a an the of to in on at for with about from by as and or but not no so if than too'
  ).split(' '),
);

/** Predicates of the general clauses that name no relation of their own: a light verb ("be", "have"), or a view ("said"). */
const lightPredicate = (p: string): boolean => LIGHT_VERBS.has(p) || p === 'said';

type Fact = JudgeInput['fact'];

/**
 * The offline default judge: deterministic rules over the structured triple, the gazetteer's
 * aliases and categories, and the candidates' similarity. First rule that fires wins:
 * 1. `replacesValue` names a candidate's object (same subject) → SUPERSEDE it;
 * 2. same subject, same predicate group, same object: negation flipped → SUPERSEDE, else more
 *    words → UPDATE, else SKIP when the new object names nothing the old one does not (objects
 *    alike by token overlap alone, "Dana's sister lives in Dublin" / "… in Turin", are no repeat);
 * 3. same subject and predicate group, different object, both positive, and the predicate is
 *    single-valued or the new fact is a change ("switched", "now") between interchangeable
 *    things (same gazetteer category, or unknown) → SUPERSEDE; a light predicate ("be", "have",
 *    "said") also needs a shared topic word;
 *    A new state of the same kind for the subject (a diet, a relationship or working status:
 *    vocabulary/states.ts) → SUPERSEDE the old one;
 * 4. a negated fact ends an older positive one holding its object's words → SUPERSEDE; a change
 *    statement (its sentence says "now", "again", "actually", "quit", …) replaces the older fact of
 *    the subject sharing its topic → SUPERSEDE;
 *    the same thing with a new amount ("rent here is $2,100" after "… rent here is $1,850") → SUPERSEDE;
 * 5. similarity ≥ skipSimilarity and the same content words → SKIP; ≥ updateSimilarity, same
 *    type, more words → UPDATE;
 * 6. else ADD.
 */
export class RuleJudge implements Judge {
  readonly model = OFFLINE_RULES_MODEL;
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
      // Objects alike by overlap are not the same when the new one names something the old one
      // does not: "… lives in Dublin" is no repeat of "… lives in Turin", and its source never
      // becomes one of that fact's.
      if (!sameValue(c.objectValue, fact.objectValue) && !containsAll(topicWords(c.objectValue ?? ''), topicWords(fact.objectValue ?? ''))) continue;
      return { action: 'SKIP', targetId: c.id, reason: `already known: "${c.statement}"` };
    }
    for (const c of mine) {
      if (!fact.predicate || group(c.predicate) !== group(fact.predicate) || fact.isNegation || c.isNegation) continue;
      if (this.same(c.objectValue, fact.objectValue)) continue;
      // "is", "has", "said" name no relation: two such facts are about the same thing only when they
      // share a topic word ("Thursdays are climbing nights now" does not replace "the whole company
      // is fully remote"); rule 4 reads those.
      if (lightPredicate(fact.predicate) && !topicWords(c.statement).some((w) => topicWords(fact.statement).includes(w))) continue;
      const single = SINGLE_VALUED.has(fact.predicate) && SINGLE_VALUED.has(c.predicate ?? '');
      if (single || (isChange(fact) && interchangeable(c.objectValue, fact.objectValue))) {
        return {
          action: 'SUPERSEDE',
          targetId: c.id,
          reason: `${single ? `${fact.predicate} holds one value` : 'a change'}: ${fact.objectValue} replaces ${c.objectValue} ("${c.statement}")`,
        };
      }
    }
    const state = newState(fact, mine);
    if (state) return state;
    const negated = this.negatedOlder(fact, mine);
    if (negated) return negated;
    const changed = this.changedOlder(fact, mine);
    if (changed) return changed;
    const recounted = newAmount(fact, mine);
    if (recounted) return recounted;
    // Near-identical by similarity alone is not enough: distinct facts can embed almost alike
    // ("allergic to peanuts" / "allergic to cats"), so their content must say the same too.
    const near = sorted.find((c) => c.similarity >= this.skipSimilarity && sameContent(c.statement, fact.statement));
    if (near) return { action: 'SKIP', targetId: near.id, reason: `says the same (similarity ${near.similarity.toFixed(2)}) as "${near.statement}"` };
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

  /**
   * "The user no longer drinks coffee" ends an older positive fact of the same subject whose
   * statement holds every word of the negated object ("The user drinks four cups of coffee a day"),
   * whatever predicate each was read with.
   */
  private negatedOlder(fact: Fact, mine: readonly JudgeCandidate[]): JudgeDecision | null {
    if (!fact.isNegation || !fact.objectValue) return null;
    const object = topicWords(fact.objectValue);
    if (object.length === 0) return null;
    // Every candidate was stated before this fact (stored, or earlier in the batch); their world
    // times may say otherwise ("I quit coffee last month"), and changeForDecision keeps validTo sane.
    // What a stop ends is a standing fact (a habit, a preference): "I made a bowl at pottery last
    // night" still happened when "I dropped pottery", and "I do a pottery class thursday nights"
    // is what ends. A past event is ended only when no standing fact holds the words.
    const holding = mine.filter((c) => !c.isNegation && containsAll(topicWords(c.statement), object));
    const old = holding.find((c) => c.factType !== 'event') ?? holding[0];
    return old ? { action: 'SUPERSEDE', targetId: old.id, reason: `"${fact.statement}" ends what "${old.statement}" states` } : null;
  }

  /**
   * A change statement ("I started going to the gym again", "we are twelve people on the team now",
   * "the flight is actually on Wednesday") replaces the older fact of the same subject that shares
   * its topic: a word other than generic ones (or, lacking one, a similarity at the UPDATE bar).
   * The candidate sharing the most topic words wins, then the most similar.
   */
  private changedOlder(fact: Fact, mine: readonly JudgeCandidate[]): JudgeDecision | null {
    if (!isChangeText(fact)) return null;
    // The subject's own name is no topic: every fact about "Dana" names her.
    const subject = new Set(topicWords(fact.subjectName ?? ''));
    const words = new Set([...topicWords(fact.statement), ...topicWords(fact.sourceText ?? '')].filter((w) => !subject.has(w)));
    let best: { c: JudgeCandidate; shared: number } | null = null;
    for (const c of mine) {
      if (sameContent(c.statement, fact.statement)) continue;
      if (c.isNegation && fact.isNegation) continue;
      // A stop and what remains, said in one breath ("I quit coffee last month, only green tea
      // now"): both hold. (A change said with the old belief, "I used vim but switched to neovim", does end it.)
      if (c.sameSource && c.isNegation && !fact.isNegation) continue;
      // A way to be served ("wants the assistant to call the app Stockpot", acknowledged "from now
      // on") replaces an older way, not a fact about the world ("The app is now Stockpot").
      if (fact.predicate === 'wants' && c.predicate !== 'wants') continue;
      const shared = topicWords(c.statement).filter((w) => words.has(w)).length;
      if (shared === 0 && c.similarity < this.updateSimilarity) continue;
      if (!best || shared > best.shared || (shared === best.shared && c.similarity > best.c.similarity)) best = { c, shared };
    }
    if (!best) return null;
    return {
      action: 'SUPERSEDE',
      targetId: best.c.id,
      reason: `a change: "${fact.statement}" replaces "${best.c.statement}" (${best.shared > 0 ? `${best.shared} shared topic word(s)` : `similarity ${best.c.similarity.toFixed(2)}`})`,
    };
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

/** The fact, or the sentence it was read from, says something changed or was corrected. */
function isChangeText(fact: Fact): boolean {
  const text = `${fact.statement} ${fact.sourceText ?? ''}`;
  return fact.replacesValue !== null || saysAChange(text);
}

/**
 * A new state of the same kind for the subject ("The user went fully vegan" after "The user is
 * vegetarian", "Sam is now married" after "Sam is engaged"): vocabulary/states.ts.
 */
function newState(fact: Fact, mine: readonly JudgeCandidate[]): JudgeDecision | null {
  if (fact.isNegation) return null;
  const now = stateOf(fact.statement, fact.subjectName);
  if (!now) return null;
  for (const c of mine) {
    if (c.isNegation) continue;
    const before = stateOf(c.statement, c.subjectName ?? fact.subjectName);
    if (before && before.kind === now.kind && before.state !== now.state)
      return { action: 'SUPERSEDE', targetId: c.id, reason: `a new ${now.kind}: ${now.state} replaces ${before.state} ("${c.statement}")` };
  }
  return null;
}

/**
 * "rent here is $1,850" and later "rent here is $2,100": the same thing with another amount, said
 * without a change word. The amount's head noun (the last topic word before "is") must be the same;
 * the most recent stating of a quantity is the current one.
 */
function newAmount(fact: Fact, mine: readonly JudgeCandidate[]): JudgeDecision | null {
  // A past amount ("rent was $1,200 in college") says nothing of what it is now.
  const mineNow = amounts(fact.statement).filter((a) => !a.past);
  if (mineNow.length === 0) return null;
  for (const c of mine) {
    if (c.isNegation || fact.isNegation) continue;
    for (const old of amounts(c.statement)) {
      // "9:30" and "9.30", "$2,100" and "2100" are one amount.
      const same = mineNow.find((a) => a.head === old.head && a.amount.replace(/[^\p{L}\p{N}]/gu, '') !== old.amount.replace(/[^\p{L}\p{N}]/gu, ''));
      if (same)
        return {
          action: 'SUPERSEDE',
          targetId: c.id,
          reason: `a new amount: ${same.head} ${same.amount} replaces ${old.amount} ("${c.statement}")`,
        };
    }
  }
  return null;
}

const AMOUNT =
  /((?:[\p{L}'-]+\s+){0,2}[\p{L}'-]+)\s+(is|are|was|were|costs?)\s+(?:(?:now|about|around|roughly|at)\s+)*([$€£]?\d[\d,.:]*(?:\s*(?:%|k|g|kg|km|mi|miles|am|pm)\b)?)/giu;

/** "<head> is <amount>" in a text: the head's last topic word, the amount as written, and whether the verb is past. */
function amounts(text: string): Array<{ head: string; amount: string; past: boolean }> {
  const out: Array<{ head: string; amount: string; past: boolean }> = [];
  for (const m of text.matchAll(AMOUNT)) {
    const head = topicWords(m[1] as string).at(-1);
    if (head && !/\d/.test(head))
      out.push({ head, amount: (m[3] as string).replace(/[.,:]$/, '').toLowerCase(), past: /^(?:was|were)$/i.test(m[2] as string) });
  }
  return out;
}

/**
 * Content words of a text by their word keys (common/word-forms.ts: Porter2, so "coffees" meets
 * "coffee" and "allergies" meets "allergic", as in the keyword channels), without generic ones (the
 * subject, pronouns, common verbs, time words, intensifiers).
 */
export function topicWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? [])
    .map((w) => w.replace(/'s$/, ''))
    .filter((w) => !GENERIC.has(w) && (w.length > 2 || /\d/.test(w)))
    .map((w) => (/\d/.test(w) ? w : wordKey(w)));
}

function containsAll(words: readonly string[], wanted: readonly string[]): boolean {
  const have = new Set(words);
  return wanted.every((w) => have.has(w));
}

/**
 * Two statements say the same thing: the same topic words, numbers and names. A similarity score
 * alone cannot tell "allergic to peanuts" from "allergic to cats".
 */
export function sameContent(a: string, b: string): boolean {
  const x = new Set(topicWords(a));
  const y = new Set(topicWords(b));
  if (x.size !== y.size) return false;
  for (const w of x) if (!y.has(w)) return false;
  return true;
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
