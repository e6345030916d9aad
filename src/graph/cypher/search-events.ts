import neo4j from 'neo4j-driver';
import { CypherRunner } from './cypher-runner';
import { ScoredId, scoredIds, vectorChannel, VectorSearch, vectorSearch } from './search-channel';
import { KEYWORD_OVERSAMPLE, keyTerms, LuceneField, scopedLucene } from './search-facts';

/** Scope of the raw-event channels of searchMemory: the namespace first, then `asOf` (occurred at or before it). */
export interface EventSearchScope {
  namespace: string;
  /** ISO 8601, or null for "now" (every event). */
  asOf: string | null;
}

const EVENT_FILTER = `e.namespace = $ns AND ($asOf IS NULL OR e.occurredAt <= datetime($asOf))`;

/**
 * Every event channel returns `id, score, supersededBy`: the facts that replaced what this turn
 * said (the successors of the facts derived from it, along the chain: "drinks coffee" → "no
 * longer uses coffee" → "now uses only green tea", up to 8 steps), so a stale turn can be ranked
 * below the current fact that superseded it, also when the first successor has ended too.
 */
const RETURN_EVENT = `RETURN e.id AS id, score,
       [(old:Fact)-[:DERIVED_FROM]->(e) WHERE old.validTo IS NOT NULL | [(newer:Fact)-[:SUPERSEDES*1..8]->(old) | newer.id]] AS supersededBy
     ORDER BY score DESC, id LIMIT $k`;

function params(s: EventSearchScope): Record<string, unknown> {
  return { ns: s.namespace, asOf: s.asOf };
}

/** The event vector channel (`event_embedding`): hits carry the facts that superseded what the turn said. */
const EVENT_VECTOR = vectorChannel({
  label: 'Event',
  node: 'e',
  index: 'event_embedding',
  filter: EVENT_FILTER,
  returns: RETURN_EVENT,
  text: 'content',
  extra: {
    name: 'supersededBy',
    expression: `[(old:Fact)-[:DERIVED_FROM]->(n) WHERE old.validTo IS NOT NULL | [(newer:Fact)-[:SUPERSEDES*1..8]->(old) | newer.id]]`,
  },
});

/** The event vector channel of `scope` for `vector` of `model` (the statements of the fact channel, over events). */
export function eventVectorSearch(scope: EventSearchScope, model: string, vector: number[]): VectorSearch {
  return vectorSearch(EVENT_VECTOR, params(scope), model, vector);
}

/**
 * How much the turn before an event counts in the event keyword channel, against the event's own
 * content (1): enough that a reply is found by the words of what it answers, not so much that it
 * outranks the turn holding them. Measured on the LoCoMo development split (the channel alone,
 * Recall@10 of the evidence turns): 0.589 without context, 0.618 at 0.3, 0.637 at 0.5, 0.646 at
 * 0.7; with stop words left out of the query, 0.628 without context and 0.672 at 0.5.
 */
export const EVENT_CONTEXT_BOOST = 0.5;

/**
 * How much a turn's speaker counts in the event keyword channel, against what the turn says (1).
 * The speaker is a field of its own (`speaker`, speaker-label.ts): a one-word field, so a match
 * there scores high in BM25, and every turn of that person matches. Low, it breaks ties among
 * turns that say what was asked toward the person the question names, and cannot lift a turn that
 * says nothing ("Caroline: ?") over one that answers.
 */
export const EVENT_SPEAKER_BOOST = 0.3;

/**
 * Lucene BM25 over what events say (`stems`: the word keys of `body`), at `EVENT_CONTEXT_BOOST` the turn before each event
 * (event-nodes.ts), and at `speakerBoost` who said it, scoped to the namespace inside the index
 * query (`terms` from `toLuceneQuery`).
 */
export function eventKeywordSearch(
  tx: CypherRunner,
  scope: EventSearchScope,
  terms: string,
  k: number,
  speakerBoost: number = EVENT_SPEAKER_BOOST,
): Promise<ScoredId[]> {
  const fields: LuceneField[] = [
    { name: 'stems', boost: 1, terms: keyTerms(terms) },
    { name: 'context', boost: EVENT_CONTEXT_BOOST },
  ];
  if (speakerBoost > 0) fields.push({ name: 'speaker', boost: speakerBoost });
  return scoredIds(
    tx,
    `CALL db.index.fulltext.queryNodes('event_stems_fulltext', $lucene, {limit: $candidates}) YIELD node AS e, score
     WITH e, score WHERE ${EVENT_FILTER}
     ${RETURN_EVENT}`,
    {
      ...params(scope),
      lucene: scopedLucene(scope.namespace, fields, terms),
      candidates: neo4j.int(k * KEYWORD_OVERSAMPLE),
      k: neo4j.int(k),
    },
  );
}
