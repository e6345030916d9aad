import neo4j from 'neo4j-driver';
import { namespaceKey } from '../../platform/neo4j/namespace-key';
import { wordKeys } from '../../common/word-forms';
import { visibleCypher } from '../../silver/visibility';
import { CypherRunner } from './cypher-runner';
import { countAll, countEmbedded, ScoredId, scoredIds, vectorChannel, VectorSearch, vectorSearch } from './search-channel';

/** Scope and filters every search channel applies inside Cypher (namespace first: nothing else is ever returned). */
export interface FactSearchScope {
  namespace: string;
  factTypes: string[] | null;
  entityId: string | null;
  minImportance: number | null;
  /** ISO 8601, or null for "now". */
  asOf: string | null;
  includeSuperseded: boolean;
}

/**
 * The WHERE body for a `(f:Fact)`; mirrors `matchesSearchFilter`. Which facts are visible (current,
 * asOf, includeSuperseded) is the shared rule of src/silver/visibility.ts.
 */
const FACT_FILTER = `f.namespace = $ns
  AND ($factTypes IS NULL OR f.factType IN $factTypes)
  AND ($minImportance IS NULL OR f.importance >= $minImportance)
  AND ($entityId IS NULL OR EXISTS { MATCH (f)-[:ABOUT]->(:Entity {id: $entityId}) })
  AND ${visibleCypher('f', { asOf: 'asOf', includeRetired: 'includeSuperseded' })}`;

function scopeParams(s: FactSearchScope): Record<string, unknown> {
  return {
    ns: s.namespace,
    factTypes: s.factTypes,
    entityId: s.entityId,
    minImportance: s.minImportance,
    asOf: s.asOf,
    includeSuperseded: s.includeSuperseded,
  };
}

/** Every fact channel returns `id, score, events` (the fact's source event ids). */
const RETURN_FACT = `RETURN f.id AS id, score, [(f)-[:DERIVED_FROM]->(ev:Event) | ev.id] AS events ORDER BY score DESC, id LIMIT $k`;

const ids = scoredIds;

/**
 * A field of a fulltext query: its name, or its name and a boost (a weight on its BM25 score, 1 by
 * default), and the terms it is asked for when they are not the query's own (its word keys).
 */
export type LuceneField = string | { name: string; boost: number; terms?: string };

/**
 * A Lucene query over `fields` that only matches the namespace's nodes: the namespace key is a
 * required clause, so the index never returns another namespace's matches. `terms` must already
 * be a safe query (`toLuceneQuery`). A node's score is the sum of its fields' scores.
 */
export function scopedLucene(namespace: string, fields: readonly LuceneField[], terms: string): string {
  const clause = (f: LuceneField): string => (typeof f === 'string' ? `${f}:(${terms})` : `${f.name}:(${f.terms ?? terms})^${f.boost}`);
  return `+nsKey:${namespaceKey(namespace)} +(${fields.map(clause).join(' ')})`;
}

/**
 * The word keys (common/word-forms.ts) of a safe query's terms, for the fields that hold keys
 * (`stems`): "allergies" asks for the key "allergic" was indexed by. Keys are letters and digits
 * only, so the query stays safe; a term without a key (a stop word the query kept) keeps itself.
 */
export function keyTerms(terms: string): string {
  return [
    ...new Set(
      terms.split(' ').flatMap((t) => {
        const keys = wordKeys(t);
        return keys.length > 0 ? keys : [t.toLowerCase()];
      }),
    ),
  ].join(' ');
}

/** The fact vector channel (`fact_embedding`): hits carry their source events, like every fact channel. */
const FACT_VECTOR = vectorChannel({
  label: 'Fact',
  node: 'f',
  index: 'fact_embedding',
  filter: FACT_FILTER,
  returns: RETURN_FACT,
  allScores: true,
  text: 'statement',
  extra: { name: 'events', expression: `[(n)-[:DERIVED_FROM]->(ev:Event) | ev.id]` },
});

/** The fact vector channel of `scope` for `vector` of `model`. */
export function factVectorSearch(scope: FactSearchScope, model: string, vector: number[]): VectorSearch {
  return vectorSearch(FACT_VECTOR, scopeParams(scope), model, vector);
}

/** Exact cosine over the namespace's facts of the same embedding model (bench/search.ts times it alone). */
export function exactVectorSearch(tx: CypherRunner, scope: FactSearchScope, model: string, vector: number[], k: number): Promise<ScoredId[]> {
  return factVectorSearch(scope, model, vector).exact(tx, k);
}

/** `candidates` neighbours from `fact_embedding` across all namespaces, then the namespace and filters: the caller oversamples. */
export function indexVectorSearch(
  tx: CypherRunner,
  scope: FactSearchScope,
  model: string,
  vector: number[],
  candidates: number,
  k: number,
): Promise<ScoredId[]> {
  return factVectorSearch(scope, model, vector).index(tx, candidates, k);
}

/** How many facts of the namespace carry an embedding of `model`. */
export function countEmbeddedFacts(tx: CypherRunner, namespace: string, model: string): Promise<number> {
  return countEmbedded(tx, FACT_VECTOR, namespace, model);
}

/** All `(:Fact)` nodes, every namespace. */
export function countAllFacts(tx: CypherRunner): Promise<number> {
  return countAll(tx, FACT_VECTOR);
}

/**
 * Fulltext (Lucene BM25) over fact statements, scoped to the namespace inside the index query;
 * `terms` must already be a safe query (`toLuceneQuery`). The index returns matches best first,
 * so `limit` bounds the work by k (times a margin for the other filters), not by how common a word is.
 */
export function keywordSearch(tx: CypherRunner, scope: FactSearchScope, terms: string, k: number): Promise<ScoredId[]> {
  return ids(
    tx,
    `CALL db.index.fulltext.queryNodes('fact_stems_ns_fulltext', $lucene, {limit: $candidates}) YIELD node AS f, score
     WITH f, score WHERE ${FACT_FILTER}
     ${RETURN_FACT}`,
    {
      ...scopeParams(scope),
      lucene: scopedLucene(scope.namespace, [{ name: 'stems', boost: 1, terms: keyTerms(terms) }], terms),
      candidates: neo4j.int(k * KEYWORD_OVERSAMPLE),
      k: neo4j.int(k),
    },
  );
}

/** Keyword candidates read per wanted hit: room for the facts the non-namespace filters (current, type, importance) drop. */
export const KEYWORD_OVERSAMPLE = 4;

/**
 * The Silver entities a matched Silver entity `e` stands for: itself and, when it belongs to a
 * live Gold entity of the namespace, every live member of that Gold entity (`MERGED_FROM`), as `m`.
 */
const WITH_GOLD_SIBLINGS = `CALL (e) {
       MATCH (g:GoldEntity)-[:MERGED_FROM]->(e) WHERE g.namespace = $ns AND g.retiredAt IS NULL
       MATCH (g)-[:MERGED_FROM]->(m:Entity) WHERE m.namespace = $ns AND m.retiredAt IS NULL
       RETURN m
       UNION
       RETURN e AS m
     }`;

/**
 * Facts ABOUT the namespace's entities whose name or alias matches the query words. With
 * `overGold` (the default), a match reaches every live Silver member of its Gold entity: a Silver
 * entity matched by name brings its Gold entity's other members, and a Gold entity matched by its
 * name or aliases (`gold_entity_name_ns_fulltext`, the best `maxEntities`) brings all of its
 * members. Still one statement: the Gold lookups are subqueries.
 *
 * A name says which entity the question is about, not which of its facts answer it: "What did
 * Caroline research?" matches Caroline, who has a fact for most of her turns. So with the query's
 * embedding (`similarTo`), the matched entities' facts are ordered by their similarity to the
 * query, and the channel's vote goes to the facts that are both about the named entity and close
 * to the question; without it, by the best name match's score. Entities with more than
 * `MAX_EXPANSION_DEGREE` facts are hubs ("the user") and match nothing, as in the expansion.
 */
export function entityNameSearch(
  tx: CypherRunner,
  scope: FactSearchScope,
  terms: string,
  maxEntities: number,
  k: number,
  overGold = true,
  similarTo: QuerySimilarity | null = null,
): Promise<ScoredId[]> {
  const silverMatches = `CALL db.index.fulltext.queryNodes('entity_name_ns_fulltext', $lucene, {limit: $candidates}) YIELD node AS e, score
     WITH e, score WHERE e.namespace = $ns AND e.retiredAt IS NULL
     WITH e, score ORDER BY score DESC LIMIT $maxEntities`;
  const matched = overGold
    ? `CALL () {
       ${silverMatches}
       ${WITH_GOLD_SIBLINGS}
       RETURN m, score
       UNION ALL
       CALL db.index.fulltext.queryNodes('gold_entity_name_ns_fulltext', $lucene, {limit: $candidates}) YIELD node AS g, score
       WITH g, score WHERE g.namespace = $ns AND g.retiredAt IS NULL
       WITH g, score ORDER BY score DESC LIMIT $maxEntities
       MATCH (g)-[:MERGED_FROM]->(m:Entity) WHERE m.namespace = $ns AND m.retiredAt IS NULL
       RETURN m, score
     }
     WITH m AS e, max(score) AS score`
    : silverMatches;
  // With the fact vector channel's scores, a fact's cosine is looked up, not computed again: a fact
  // it did not score has no vector of this model and length (it passes the filter, as all of these
  // do), so 0.0, as the CASE gives.
  const ranked = similarTo?.scores
    ? `WITH f, coalesce($scores[f.id], 0.0) AS score`
    : similarTo
      ? `WITH f, CASE WHEN f.embeddingModel = $model AND f.embeddingDims = size($vector)
                THEN vector.similarity.cosine(f.embedding, $vector) ELSE 0.0 END AS score`
      : `WITH f, score`;
  return ids(
    tx,
    `${matched}
     WITH e, score WHERE COUNT { (e)<-[:ABOUT]-() } <= $maxDegree
     MATCH (f:Fact)-[:ABOUT]->(e) WHERE ${FACT_FILTER}
     WITH f, max(score) AS score
     ${ranked}
     ${RETURN_FACT}`,
    {
      ...scopeParams(scope),
      lucene: scopedLucene(scope.namespace, ['name', 'aliases'], terms),
      candidates: neo4j.int(maxEntities * 2),
      maxEntities: neo4j.int(maxEntities),
      maxDegree: neo4j.int(MAX_EXPANSION_DEGREE),
      k: neo4j.int(k),
      ...(similarTo?.scores ? { scores: similarTo.scores } : { model: similarTo?.model ?? null, vector: similarTo?.vector ?? null }),
    },
  );
}

/**
 * The query's embedding, for ranking a named entity's facts by their similarity to it; with
 * `scores` (fact id → cosine to that embedding of every current fact of the namespace embedded by
 * `model` with its length, what the fact vector channel's exact search scored: `CountedExactHits.scores`),
 * the ranking reads them instead of computing the cosine of each fact again.
 */
export interface QuerySimilarity {
  model: string;
  vector: number[];
  scores?: Record<string, number> | null;
}

/** Entities with more facts than this are hubs: each of their facts would score under 1/this, so they are not expanded. */
export const MAX_EXPANSION_DEGREE = 500;

/**
 * Graph expansion: other facts ABOUT the entities the seed facts are ABOUT. Each shared entity
 * weighs 1/(its fact count), so a hub adds little; hubs above `MAX_EXPANSION_DEGREE` are skipped
 * rather than walked. The roles ("the user", "the assistant") are never expanded, whatever their
 * count: in a chat with an assistant nearly every fact is about the user, all of them tie, and the
 * expansion listed the same few facts first for every question. The degree comes from the node's
 * relationship counts (every ABOUT edge starts at a Fact), without visiting the facts.
 *
 * With `overGold` (the default), an entity that belongs to a live Gold entity is expanded as that
 * Gold entity: every live Silver member's facts, weighing 1/(the facts about all its members),
 * and the hub rule applies to that sum. An entity outside Gold is expanded as before.
 */
export function expandFromSeeds(tx: CypherRunner, scope: FactSearchScope, seedIds: string[], k: number, overGold = true): Promise<ScoredId[]> {
  const seedEntities = `UNWIND $seedIds AS sid
     MATCH (s:Fact {id: sid})-[:ABOUT]->(e:Entity)
     WHERE s.namespace = $ns AND e.namespace = $ns AND NOT e.name IN $roles
     WITH DISTINCT e`;
  const weighted = overGold
    ? `${seedEntities}
     OPTIONAL MATCH (g:GoldEntity)-[:MERGED_FROM]->(e) WHERE g.namespace = $ns AND g.retiredAt IS NULL
     WITH DISTINCT coalesce(g, e) AS unit
     CALL (unit) {
       WITH unit WHERE unit:GoldEntity
       MATCH (unit)-[:MERGED_FROM]->(m:Entity) WHERE m.namespace = $ns AND m.retiredAt IS NULL
       RETURN m
       UNION
       WITH unit WHERE unit:Entity
       RETURN unit AS m
     }
     WITH unit, m, COUNT { (m)<-[:ABOUT]-() } AS d
     WITH unit, collect(m) AS members, sum(d) AS degree
     WHERE degree > 0 AND degree <= $maxDegree
     UNWIND members AS e
     WITH unit, e, 1.0 / degree AS w
     MATCH (f:Fact)-[:ABOUT]->(e) WHERE NOT f.id IN $seedIds AND ${FACT_FILTER}
     WITH DISTINCT unit, w, f
     WITH f, sum(w) AS score`
    : `${seedEntities}
     WITH e, COUNT { (e)<-[:ABOUT]-() } AS degree
     WHERE degree <= $maxDegree
     WITH e, 1.0 / degree AS w
     MATCH (f:Fact)-[:ABOUT]->(e) WHERE NOT f.id IN $seedIds AND ${FACT_FILTER}
     WITH f, sum(w) AS score`;
  return ids(
    tx,
    `${weighted}
     ${RETURN_FACT}`,
    { ...scopeParams(scope), seedIds, maxDegree: neo4j.int(MAX_EXPANSION_DEGREE), k: neo4j.int(k), roles: [...ROLE_ENTITY_NAMES] },
  );
}

/** The roles whose names a question may use: the entities the extractor makes for a turn without an actor. */
export const ROLE_ENTITY_NAMES = ['the user', 'the assistant'] as const;

/**
 * The names the user and the assistant go by in a namespace (aliases of its "the user" and "the
 * assistant" entities, e.g. "Maya" from "I'm Maya btw"), lowercased, each mapped to its role.
 * Only name-like aliases: capitalised words, one or two.
 */
export async function roleNames(tx: CypherRunner, namespace: string): Promise<Map<string, string>> {
  const res = await tx.run(
    `MATCH (e:Entity) WHERE e.namespace = $ns AND e.name IN $roles AND e.retiredAt IS NULL
     RETURN e.name AS role, coalesce(e.aliases, []) AS aliases`,
    { ns: namespace, roles: [...ROLE_ENTITY_NAMES] },
  );
  const out = new Map<string, string>();
  for (const r of res.records) {
    const role = r.get('role') as string;
    for (const alias of r.get('aliases') as string[]) {
      if (NAME_LIKE.test(alias) && !(ROLE_ENTITY_NAMES as readonly string[]).includes(alias.toLowerCase())) out.set(alias.toLowerCase(), role);
    }
  }
  return out;
}

const NAME_LIKE = /^\p{Lu}[\p{L}'-]+(?: \p{Lu}[\p{L}'-]+)?$/u;
