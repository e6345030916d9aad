import { Fact } from './silver.types';
import { isVisible } from './visibility';

/**
 * Predicates that make a fact a preference whatever type its extractor gave it (an OpenAI-compatible
 * extractor may file "Bob prefers tea" as an attribute). Lower case, as extractors write predicates.
 */
export const PREFERENCE_PREDICATES: readonly string[] = Object.freeze(['prefers', 'likes', 'loves', 'enjoys', 'dislikes', 'hates', 'favourite', 'favorite']);

/** The fact type the extractors give preferences (silver/ontology.ts FACT_TYPES). */
export const PREFERENCE_FACT_TYPE = 'preference';

/** What the rule reads of a fact (a Silver row or a projected (:Fact) node). */
export type PreferenceShape = Pick<Fact, 'factType' | 'predicate'>;

/**
 * A preference: fact type `preference`, or a predicate of PREFERENCE_PREDICATES (case-insensitive).
 * The Cypher form (graph/cypher/gold-preferences.ts) passes the same two constants as parameters.
 */
export function isPreference(f: PreferenceShape): boolean {
  return f.factType === PREFERENCE_FACT_TYPE || (f.predicate !== null && PREFERENCE_PREDICATES.includes(f.predicate.toLowerCase()));
}

/**
 * Whether a Gold read shows this fact as held at `asOf` (now when null): the one check every Gold
 * read (preferences, relatedContext) applies to the rows it re-reads from Postgres. Today the
 * Silver rule (silver/visibility.ts: not superseded and not retired, or valid at asOf); a Gold-level
 * conflict decision (a fact superseded by review) belongs here, so every Gold read obeys it.
 */
export function isHeldAt(f: Fact, asOf: Date | null): boolean {
  return isVisible(f, { asOf, includeRetired: false });
}

/**
 * Which facts a preference replaced, newest first: walking `supersededById` back from the
 * preference through `candidates` (the facts the graph found on its SUPERSEDES chain, re-read from
 * Postgres). A candidate is kept only when its own row links it into the chain, it is in the
 * preference's namespace and it is not retired, so a graph that lags Postgres cannot add a fact
 * Postgres does not link, and a cycle cannot loop.
 */
export function replacedChain(head: Fact, candidates: readonly Fact[], max: number): Fact[] {
  const bySuccessor = new Map<string, Fact[]>();
  for (const c of candidates) {
    if (c.namespace !== head.namespace || c.retiredAt !== null || c.supersededById === null || c.id === head.id) continue;
    bySuccessor.set(c.supersededById, [...(bySuccessor.get(c.supersededById) ?? []), c]);
  }
  const out: Fact[] = [];
  const seen = new Set([head.id]);
  let frontier = [head.id];
  while (frontier.length > 0 && out.length < max) {
    const next: Fact[] = frontier
      .flatMap((id) => bySuccessor.get(id) ?? [])
      .filter((f) => !seen.has(f.id))
      .sort((a, b) => b.validFrom.getTime() - a.validFrom.getTime() || a.id.localeCompare(b.id));
    for (const f of next) seen.add(f.id);
    out.push(...next);
    frontier = next.map((f) => f.id);
  }
  return out.slice(0, max);
}
