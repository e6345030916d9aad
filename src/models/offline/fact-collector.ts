import type { ExtractedFact, ExtractedRelationship, Span } from '../../silver/model-ports';
import type { WorkingEntity } from './entity-registry';
import { lookupTech } from '../../silver/vocabulary/gazetteer';
import type { Draft } from './patterns';

/**
 * Confidence rule (documented, deterministic):
 * - 0.9 an explicit first-person statement ("I use vim");
 * - 0.8 a third-person statement ("Atlas depends on Redis"), a plan, or a "my wife Anna" relation;
 * - 0.75 a past event;
 * - at most 0.7 when hedged ("I think", "probably", "maybe", "thinking about");
 * - minus 0.1 when the subject or object was resolved by coreference ("it", "the database");
 * - 0.7 a general clause shape (general-clauses.ts: "I went to X", "my kids loved it");
 * - times 0.6 for assistant-role text (the assistant speaking about itself).
 * Tool and system events yield entities only, never facts.
 */
export const CONFIDENCE = {
  firstPerson: 0.9,
  thirdPerson: 0.8,
  plan: 0.8,
  event: 0.75,
  general: 0.7,
  hedgedCap: 0.7,
  corefPenalty: 0.1,
  assistantFactor: 0.6,
  // A sentence kept as said (no rule read it): below Gold's promotion bar.
  said: 0.55,
} as const;

export function confidenceOf(draft: Draft, hedged: boolean, coref: boolean, third: boolean, role: string | null): number {
  let c: number =
    draft.factType === 'event' ? CONFIDENCE.event : draft.factType === 'plan' ? CONFIDENCE.plan : third ? CONFIDENCE.thirdPerson : CONFIDENCE.firstPerson;
  if (hedged) c = Math.min(c, CONFIDENCE.hedgedCap);
  if (coref) c -= CONFIDENCE.corefPenalty;
  if (role === 'assistant') c *= CONFIDENCE.assistantFactor;
  return Math.round(c * 100) / 100;
}

// Ontology relationship type for a fact predicate (positive facts with two entities only).
const RELATION_OF: Record<string, string> = {
  uses: 'uses',
  prefers: 'prefers',
  likes: 'prefers',
  works_on: 'works_on',
  works_at: 'part_of',
  lives_in: 'located_in',
  located_in: 'located_in',
  depends_on: 'depends_on',
  runs_on: 'depends_on',
  knows: 'knows',
  spouse: 'knows',
  sibling: 'knows',
  parent: 'knows',
  child: 'knows',
  has_manager: 'knows',
  colleague: 'knows',
  friend: 'knows',
  cofounder: 'knows',
  mentor: 'knows',
  dating: 'knows',
  roommate: 'knows',
  neighbor: 'knows',
};

export interface NewFact {
  statement: string;
  factType: string;
  subject: WorkingEntity;
  predicate: string;
  value: string;
  objectEntity: WorkingEntity | null;
  isNegation: boolean;
  confidence: number;
  validFrom: string | null;
  replaces: string | null;
  source: Span;
}

/** Chat filler at the end of a statement says nothing about the fact: "Marketing renamed the app lol", "… end of april,". */
const CHAT_TAIL = /(?:[\s,]+(?:lol|lmao|rofl|haha+|hehe+|btw|fyi|tbh|imo|ngl|xd|smh)\b)*[\s,;:-]*$/i;

/** A statement as a reader wants it: no chat filler at its end, "rn" written out. */
export function tidyStatement(statement: string): string {
  return statement.replace(CHAT_TAIL, '').replace(/\brn\b/g, 'right now');
}

/** The facts and relationships of one batch as the extractor finds them, with same-fact merging within an event. */
export class FactCollector {
  readonly facts: ExtractedFact[] = [];
  readonly relationships: ExtractedRelationship[] = [];
  private readonly subjects = new Map<string, WorkingEntity | null>();
  private made = 0;

  /**
   * Adds a fact (or a source to the same fact already found in the same event), and its
   * relationship. A fact said again in another event of the batch is a fact of its own: the judge
   * SKIPs it into the first as it would one event per batch, and the rules that ask what a
   * sentence produced see it as produced (docs/silver.md "Order"). Merged across events, a repeat
   * counted as nothing new, and its sentence was kept again as a general clause only when the
   * batch held the first saying.
   */
  add(f: NewFact): void {
    const dup = this.facts.find(
      (x) =>
        x.sources.some((s) => s.eventId === f.source.eventId) &&
        this.subjects.get(x.ref) === f.subject &&
        x.predicate === f.predicate &&
        x.objectValue?.toLowerCase() === f.value.toLowerCase() &&
        x.isNegation === f.isNegation,
    );
    if (dup) {
      if (!dup.sources.some((s) => s.eventId === f.source.eventId && s.start === f.source.start)) dup.sources.push(f.source);
      dup.confidence = Math.max(dup.confidence, f.confidence);
      return;
    }
    const ref = `f${++this.made}`;
    this.subjects.set(ref, f.subject);
    this.facts.push({
      ref,
      statement: tidyStatement(f.statement),
      factType: f.factType,
      subjectRef: f.subject.ref,
      predicate: f.predicate,
      objectValue: f.value,
      objectRef: f.objectEntity?.ref ?? null,
      isNegation: f.isNegation,
      confidence: f.confidence,
      validFrom: f.validFrom,
      validTo: null,
      replacesValue: f.replaces,
      sources: [f.source],
    });
    const type = RELATION_OF[f.predicate];
    if (type && f.objectEntity && !f.isNegation && f.objectEntity !== f.subject) {
      this.relationships.push({
        ref: `r${this.relationships.length + 1}`,
        type,
        sourceRef: f.subject.ref,
        targetRef: f.objectEntity.ref,
        confidence: f.confidence,
        validFrom: f.validFrom,
        sources: [f.source],
      });
    }
  }

  /** Takes back facts found in the batch, with the relationships added with them (same subject, same first source). */
  remove(facts: readonly ExtractedFact[]): void {
    for (const f of facts) {
      const at = this.facts.indexOf(f);
      if (at < 0) continue;
      this.facts.splice(at, 1);
      this.subjects.delete(f.ref);
      const [s] = f.sources;
      const rel = this.relationships.findIndex(
        (r) => r.sourceRef === f.subjectRef && r.sources[0]?.eventId === s?.eventId && r.sources[0]?.start === s?.start && r.sources[0]?.end === s?.end,
      );
      if (rel >= 0) this.relationships.splice(rel, 1);
    }
  }

  /** The latest value of this subject in the batch that `object` replaces (same category, or another home). */
  previousValue(subject: WorkingEntity, object: WorkingEntity | null, predicate: string): string | null {
    for (let i = this.facts.length - 1; i >= 0; i--) {
      const f = this.facts[i] as ExtractedFact;
      if (f.isNegation || this.subjects.get(f.ref) !== subject) continue;
      if (predicate === 'lives_in' && f.predicate === 'lives_in' && f.objectValue !== object?.name) return f.objectValue;
      const prev = f.objectValue ? lookupTech(f.objectValue) : undefined;
      if (object?.category && prev && prev.category === object.category && prev.name !== object.name && (f.predicate === 'uses' || f.predicate === 'prefers'))
        return prev.name;
    }
    return null;
  }
}
