import { sameValue } from '../../silver/vocabulary/normalise';
import { predicateGroup, SINGLE_VALUED } from '../../silver/ontology';

/**
 * Gold's conflict rules (docs/gold-review.md): once promotion merges Silver entities, their
 * current facts can contradict each other. Pure functions; the promotion pass
 * (conflict.service.ts) reads the facts, calls these and writes what they decide.
 */

/** A current Silver fact about a member of a Gold entity, as the rules see it. */
export interface ClaimFact {
  id: string;
  goldEntityId: string;
  /** Its Silver subject (a member of the Gold entity). */
  silverEntityId: string;
  factType: string;
  predicate: string | null;
  objectValue: string | null;
  isNegation: boolean;
  confidence: number;
  validFrom: Date;
  /** Distinct Bronze events it rests on. */
  eventIds: string[];
  /** The id it descends from through Silver rebuilds (silver.fact_lineage), or its own id: what decisions are keyed by. */
  rootId: string;
}

export type ConflictKind = 'value_conflict' | 'negation_conflict';
export type ClaimRule = 'recency' | 'frequency' | 'negation';

export interface Conflict {
  kind: ConflictKind;
  goldEntityId: string;
  /** The predicate group (silver/ontology.ts `predicateGroup`). */
  group: string;
  /** Sorted by id. */
  facts: ClaimFact[];
  /** The sorted lineage roots of its facts: one conflict is decided once, across Silver rebuilds. */
  key: string;
}

export type Verdict =
  | {
      outcome: 'supersede';
      rule: ClaimRule;
      winnerIds: string[];
      loserIds: string[];
      /** The losers stop being valid at Gold from here on: the latest valid_from among the winners. */
      supersededFrom: Date;
      reason: string;
      scores: Record<string, number>;
    }
  | { outcome: 'review'; rule: ClaimRule; reason: string; scores: Record<string, number> };

export interface ConflictSettings {
  /** A conflict with any fact below this confidence goes to review (GOLD_REVIEW_CONFIDENCE). */
  reviewConfidence: number;
  /** Token overlap at which two objects are the same value (as in Silver's judge). */
  objectOverlap: number;
}

export const DEFAULT_CONFLICT_SETTINGS: ConflictSettings = Object.freeze({ reviewConfidence: 0.7, objectOverlap: 0.6 });

const byId = (a: ClaimFact, b: ClaimFact) => a.id.localeCompare(b.id);
const keyOf = (facts: readonly ClaimFact[]) => [...new Set(facts.map((f) => f.rootId))].sort().join(',');
const subjects = (facts: readonly ClaimFact[]) => new Set(facts.map((f) => f.silverEntityId)).size;
const day = (d: Date) => d.toISOString().slice(0, 10);

/** Facts with the same object, first fact (by id) as the representative. Deterministic. */
function byValue(facts: readonly ClaimFact[], overlap: number): ClaimFact[][] {
  const sides: ClaimFact[][] = [];
  for (const f of [...facts].sort(byId)) {
    const side = sides.find((s) => sameValue((s[0] as ClaimFact).objectValue, f.objectValue, overlap));
    if (side) side.push(f);
    else sides.push([f]);
  }
  return sides;
}

/**
 * The conflicts among the current facts of Gold entities. Only facts of one Gold entity and one
 * predicate group meet, and only conflicts that span at least two Silver subjects count (within one
 * Silver subject Silver's own judge has decided already):
 * - `negation_conflict`: negations and positives with the same object ("no longer uses vim" vs
 *   "uses vim");
 * - `value_conflict`: positives with different objects, each either a preference or with a
 *   single-valued predicate (silver/ontology.ts `SINGLE_VALUED`): "uses vim" vs "uses neovim".
 */
export function findConflicts(facts: readonly ClaimFact[], settings: ConflictSettings = DEFAULT_CONFLICT_SETTINGS): Conflict[] {
  const groups = new Map<string, ClaimFact[]>();
  for (const f of facts) {
    if (!f.predicate) continue;
    const k = `${f.goldEntityId}\u0000${predicateGroup(f.predicate)}`;
    groups.set(k, [...(groups.get(k) ?? []), f]);
  }
  const out = new Map<string, Conflict>();
  const add = (kind: ConflictKind, goldEntityId: string, group: string, members: ClaimFact[]) => {
    if (subjects(members) < 2) return;
    const sorted = [...members].sort(byId);
    const key = `${kind}:${keyOf(sorted)}`;
    if (!out.has(key)) out.set(key, { kind, goldEntityId, group, facts: sorted, key });
  };
  for (const [k, rows] of [...groups.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    const [goldEntityId, group] = k.split('\u0000') as [string, string];
    const positives = rows.filter((f) => !f.isNegation);
    const negations = rows.filter((f) => f.isNegation);
    for (const side of byValue(negations, settings.objectOverlap)) {
      const value = (side[0] as ClaimFact).objectValue;
      const negated = positives.filter((p) => sameValue(p.objectValue, value, settings.objectOverlap));
      if (negated.length > 0) add('negation_conflict', goldEntityId, group, [...side, ...negated]);
    }
    const exclusive = positives.filter((f) => f.factType === 'preference' || SINGLE_VALUED.has(f.predicate ?? ''));
    if (byValue(exclusive, settings.objectOverlap).length >= 2) add('value_conflict', goldEntityId, group, exclusive);
  }
  return [...out.values()];
}

interface Side {
  facts: ClaimFact[];
  latest: Date;
  sources: number;
  confidence: number;
}

function sideOf(facts: ClaimFact[]): Side {
  return {
    facts,
    latest: new Date(Math.max(...facts.map((f) => f.validFrom.getTime()))),
    sources: new Set(facts.flatMap((f) => f.eventIds)).size,
    confidence: Math.max(...facts.map((f) => f.confidence)),
  };
}

/** The unique best side by `score`, or null on a tie. */
function best(sides: Side[], score: (s: Side) => number): Side | null {
  const sorted = [...sides].sort((a, b) => score(b) - score(a));
  const [first, second] = sorted;
  if (!first || (second && score(second) === score(first))) return null;
  return first;
}

const ids = (s: Side) => s.facts.map((f) => f.id);
const supersede = (rule: ClaimRule, winner: Side, losers: Side[], reason: string, scores: Record<string, number>): Verdict => ({
  outcome: 'supersede',
  rule,
  winnerIds: ids(winner),
  loserIds: losers.flatMap(ids).sort(),
  supersededFrom: winner.latest,
  reason,
  scores,
});

/**
 * Decides one conflict, or sends it to review:
 * - any fact below `reviewConfidence` → review (low confidence);
 * - negation: the negation supersedes the positives it negates when it is at least as recent as
 *   the latest of them; a positive more recent than the negation → review (did it start again?);
 * - value, every fact a preference → recency: the side with the latest valid_from wins;
 * - value, otherwise (factual claims) → frequency: the side with the most distinct source events wins;
 * - a tie under the rule → review; the rules disagree → review: the other rule (frequency for a
 *   preference, recency for a claim) picks another side that is also strictly more confident.
 * Reasons name fact ids, dates, counts and confidences, never fact text (an erasure scrubs the text,
 * not these rows).
 */
export function decideConflict(c: Conflict, settings: ConflictSettings = DEFAULT_CONFLICT_SETTINGS): Verdict {
  const weakest = [...c.facts].sort((a, b) => a.confidence - b.confidence || a.id.localeCompare(b.id))[0] as ClaimFact;
  if (c.kind === 'negation_conflict') {
    const neg = sideOf(c.facts.filter((f) => f.isNegation));
    const pos = sideOf(c.facts.filter((f) => !f.isNegation));
    const scores = { negationFrom: neg.latest.getTime(), positiveFrom: pos.latest.getTime(), minConfidence: weakest.confidence };
    if (weakest.confidence < settings.reviewConfidence) return { outcome: 'review', rule: 'negation', reason: lowConfidence(weakest, settings), scores };
    if (neg.latest.getTime() >= pos.latest.getTime())
      return supersede('negation', neg, [pos], `negation: ${ids(neg).join(', ')} (from ${day(neg.latest)}) negates ${ids(pos).join(', ')}`, scores);
    return {
      outcome: 'review',
      rule: 'negation',
      reason: `rules disagree: ${ids(pos).join(', ')} (from ${day(pos.latest)}) is more recent than its negation ${ids(neg).join(', ')} (from ${day(neg.latest)})`,
      scores,
    };
  }
  const sides = byValue(c.facts, settings.objectOverlap).map(sideOf);
  const preference = c.facts.every((f) => f.factType === 'preference');
  const rule: ClaimRule = preference ? 'recency' : 'frequency';
  const byRecency = best(sides, (s) => s.latest.getTime());
  const byFrequency = best(sides, (s) => s.sources);
  const winner = preference ? byRecency : byFrequency;
  const other = preference ? byFrequency : byRecency;
  const scores: Record<string, number> = { sides: sides.length, minConfidence: weakest.confidence };
  if (winner) Object.assign(scores, { winnerSources: winner.sources, winnerFrom: winner.latest.getTime(), winnerConfidence: winner.confidence });
  if (weakest.confidence < settings.reviewConfidence) return { outcome: 'review', rule, reason: lowConfidence(weakest, settings), scores };
  if (!winner)
    return {
      outcome: 'review',
      rule,
      reason: preference ? 'tie: the latest preferences start on the same day and time' : 'tie: the best-attested values have as many source events',
      scores,
    };
  if (other && other !== winner && other.confidence > winner.confidence)
    return {
      outcome: 'review',
      rule,
      reason: preference
        ? `rules disagree: recency picks ${ids(winner).join(', ')} (${winner.sources} sources, confidence ${winner.confidence.toFixed(2)}), frequency picks ${ids(other).join(', ')} (${other.sources} sources, confidence ${other.confidence.toFixed(2)})`
        : `rules disagree: frequency picks ${ids(winner).join(', ')} (from ${day(winner.latest)}, confidence ${winner.confidence.toFixed(2)}), recency picks ${ids(other).join(', ')} (from ${day(other.latest)}, confidence ${other.confidence.toFixed(2)})`,
      scores,
    };
  const losers = sides.filter((s) => s !== winner);
  const reason = preference
    ? `recency: ${ids(winner).join(', ')} (from ${day(winner.latest)}) is the latest preference`
    : `frequency: ${ids(winner).join(', ')} rests on ${winner.sources} source events, the others on ${losers.map((s) => s.sources).join(', ')}`;
  return supersede(rule, winner, losers, reason, scores);
}

function lowConfidence(f: ClaimFact, s: ConflictSettings): string {
  return `low confidence: ${f.id} at ${f.confidence.toFixed(2)} (below GOLD_REVIEW_CONFIDENCE ${s.reviewConfidence})`;
}

/** A fact superseded at Gold: hidden from current reads, and from reads at or after `supersededFrom`. */
export interface GoldSupersession {
  factId: string;
  supersededFrom: Date;
  decisionId: string;
}

/** Whether a Gold supersession hides the fact at `asOf` (null: now). */
export function hiddenAtGold(s: GoldSupersession | undefined, asOf: Date | null): boolean {
  return !!s && (asOf === null || asOf.getTime() >= s.supersededFrom.getTime());
}

/** A reviewer's decision on a review item (resolveReview). */
export type ReviewDecision = { kind: 'KEEP'; factId: string } | { kind: 'KEEP_ALL' } | { kind: 'DISMISS' };

/**
 * Parses `KEEP:<factId>` (that fact wins; the item's other facts are superseded at Gold),
 * `KEEP_ALL` (no conflict: all stand) or `DISMISS` (closed, nothing applied); case-insensitive
 * keyword, surrounding spaces ignored. The error message names the allowed forms.
 */
export function parseReviewDecision(text: string, factIds: readonly string[]): ReviewDecision | { error: string } {
  const t = text.trim();
  const forms = `KEEP:<factId> (one of ${factIds.join(', ')}), KEEP_ALL or DISMISS`;
  if (/^keep_all$/i.test(t)) return { kind: 'KEEP_ALL' };
  if (/^dismiss$/i.test(t)) return { kind: 'DISMISS' };
  const m = /^keep:\s*(\S+)$/i.exec(t);
  if (!m) return { error: `decision must be ${forms}; got "${t.slice(0, 60)}"` };
  const id = (m[1] as string).toLowerCase();
  if (!factIds.includes(id)) return { error: `KEEP names a fact that is not in this item: use ${forms}` };
  return { kind: 'KEEP', factId: id };
}
