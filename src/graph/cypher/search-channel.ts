import neo4j from 'neo4j-driver';
import { nodeVectorKey, NodeVectorCache, similarity } from '../node-vectors';
import { assertIdentifier, CypherRunner } from './cypher-runner';

/**
 * What the search channels share (search-facts.ts, search-events.ts): the hits they return, and the
 * vector channel, whose statements are one shape over a label (facts and events had each written
 * them out by hand). Every channel is scoped to the namespace inside Cypher: `$ns` in its filter.
 */

export interface ScoredId {
  id: string;
  score: number;
  /** The events a fact hit rests on (its DERIVED_FROM edges), so fusion can fold a raw-turn hit into the fact that carries it. */
  events?: string[];
  /** For an event hit: the facts that superseded facts derived from it (the event is a stale turn where one of them is a hit). */
  supersededBy?: string[];
}

export async function scoredIds(tx: CypherRunner, query: string, params: Record<string, unknown>): Promise<ScoredId[]> {
  const res = await tx.run(query, params);
  return res.records.map((r) => {
    const events = r.has('events') ? (r.get('events') as string[]) : undefined;
    const supersededBy = r.has('supersededBy') ? (r.get('supersededBy') as string[][]).flat() : undefined;
    return { id: r.get('id') as string, score: Number(r.get('score')), ...(events ? { events } : {}), ...(supersededBy ? { supersededBy } : {}) };
  });
}

/**
 * What tells the fact and the event vector channels apart. Their statements are one shape
 * (`vectorChannel`): exact cosine over the namespace, the same counted first, and the shared index
 * with a post-filter. `label`, `node` and `index` are interpolated, so they are checked.
 */
export interface VectorChannelShape {
  label: 'Fact' | 'Event';
  /** The variable `filter` and `returns` name the node by (not `n`, which the counted search uses). */
  node: string;
  /** The vector index over the label's `embedding`, shared by every namespace (no pre-filter). */
  index: string;
  /** The channel's WHERE body over `node`, `node.namespace = $ns` first. */
  filter: string;
  /** `RETURN … ORDER BY score DESC, id LIMIT $k` over `node` and `score`. */
  returns: string;
  /**
   * What a hit carries besides its id and score, as map entries over `n` (`events: [...]`), the
   * columns `returns` gives beyond `id, score`: the listing returns them for every node it lists.
   */
  payload: string;
  /**
   * The exact search also returns the cosine of every node it scored (`CountedExactHits.scores`),
   * so another statement of the same search can rank a subset of them without reading their vectors
   * (the fact channel: the entity-name channel ranks a named entity's facts by it).
   */
  allScores?: boolean;
}

/** A vector channel with its statements, built once (Neo4j caches a plan per statement text). */
export interface VectorChannel extends VectorChannelShape {
  statements: { exact: string; listing: string; vectors: string; hits: string; index: string; countEmbedded: string; countAll: string };
}

/** What an exact search that counts first returns: the namespace's embedded nodes, and the hits when there were at most `exactMax`. */
export interface CountedExactHits {
  /** Nodes of the namespace embedded by the model (what `countEmbeddedFacts` counts). */
  embedded: number;
  /** The exact top k when `embedded <= exactMax`; null above (the caller takes the index path). */
  hits: ScoredId[] | null;
  /**
   * With `allScores`, when `hits` is not null: node id → cosine of every node the exact search
   * scored (the namespace's nodes embedded by the model, of the query's length, passing the filter).
   */
  scores?: Record<string, number>;
}

/** One node a listing returns: its id and the stamp of its stored vector. */
export interface ListedNode {
  id: string;
  stamp: number | null;
}

/** What a listing returns: the namespace's embedded nodes, and those passing the filter when there were at most `exactMax`. */
export interface Listing {
  embedded: number;
  /** Null above `exactMax` (the caller takes the index path). */
  nodes: ListedNode[] | null;
}

/**
 * The exact search of one vector channel for one scope and model, split so that its Neo4j part
 * needs no query vector and runs while the query is embedded: `list` returns the namespace's nodes
 * that pass the filter (ids, vector stamps, hit payloads), `rank` scores them in process against
 * the query's vector with the vectors of `NodeVectorCache` (node-vectors.ts), reading from Neo4j
 * only those it does not hold at the listed stamp.
 */
export interface VectorListing {
  readonly label: VectorChannelShape['label'];
  readonly model: string;
  list(tx: CypherRunner, exactMax: number): Promise<Listing>;
  rank(tx: CypherRunner, listing: Listing, vectors: NodeVectorCache, query: readonly number[], k: number): Promise<CountedExactHits>;
}

/** One vector channel for one scope and query vector: what `SearchService.vectorChannel` chooses between. */
export interface VectorSearch {
  readonly label: VectorChannelShape['label'];
  readonly model: string;
  index(tx: CypherRunner, candidates: number, k: number): Promise<ScoredId[]>;
  /** Exact cosine in Cypher (the index path's last resort, and what the in-process ranking is checked against). */
  exact(tx: CypherRunner, k: number): Promise<ScoredId[]>;
  /** The listing and the in-process ranking one after the other (`VectorListing`). */
  countedExact(tx: CypherRunner, k: number, exactMax: number, vectors: NodeVectorCache): Promise<CountedExactHits>;
  /** The label's nodes in every namespace (label count store): sizes the index path's oversampling. */
  countAll(tx: CypherRunner): Promise<number>;
}

/**
 * The statements of a vector channel:
 * - `exact`: cosine over the namespace's nodes embedded by `$model`, no index, so no oversampling and no starvation;
 * - `listing`: counts the namespace's nodes embedded by `$model` and, when there are at most
 *   `$exactMax`, returns those passing the filter (vectors stored as `exact` reads them: with
 *   `embeddingDims`) with their vector's stamp, in the same statement (the namespace is scanned
 *   once, no vector and no payload is read: the payload of all of them cost as much again as the
 *   scan, bench/results/search-profile-*.json, `statementsAlone`);
 * - `vectors`: the stored vectors of given nodes of the namespace, with their stamps;
 * - `hits`: the payload of the first k, in their order (a node gone since the listing is dropped);
 * - `index`: `$candidates` neighbours from the shared index, then the namespace and filters (the caller oversamples);
 * - `countEmbedded`, `countAll`: the namespace's embedded nodes, and all nodes of the label.
 */
export function vectorChannel(shape: VectorChannelShape): VectorChannel {
  const [label, v, index] = [assertIdentifier(shape.label), assertIdentifier(shape.node), assertIdentifier(shape.index)];
  if (v === 'n') throw new Error('vectorChannel: the node variable n is taken by the listing');
  const { filter, returns, payload } = shape;
  return {
    ...shape,
    statements: {
      exact: `MATCH (${v}:${label}) WHERE ${v}.embeddingModel = $model AND ${v}.embeddingDims = size($vector) AND ${filter}
     WITH ${v}, vector.similarity.cosine(${v}.embedding, $vector) AS score
     ${returns}`,
      listing: `MATCH (n:${label}) WHERE n.namespace = $ns AND n.embeddingModel = $model
     WITH collect(n) AS embedded
     CALL (embedded) {
       UNWIND CASE WHEN size(embedded) <= $exactMax THEN embedded ELSE [] END AS n
       WITH n AS ${v} WHERE ${v}.embeddingDims IS NOT NULL AND ${filter}
       WITH ${v} AS n
       RETURN collect({id: n.id, stamp: n.embeddingStamp}) AS listed
     }
     RETURN size(embedded) AS embedded, listed`,
      hits: `UNWIND range(0, size($ids) - 1) AS i
     MATCH (n:${label} {id: $ids[i]}) WHERE n.namespace = $ns
     RETURN n.id AS id, {${payload}} AS hit ORDER BY i`,
      vectors: `UNWIND $ids AS id
     MATCH (n:${label} {id: id}) WHERE n.namespace = $ns AND n.embeddingModel = $model AND n.embedding IS NOT NULL
     RETURN n.id AS id, n.embeddingStamp AS stamp, n.embedding AS embedding`,
      index: `CALL db.index.vector.queryNodes('${index}', $candidates, $vector) YIELD node AS ${v}, score
     WITH ${v}, score WHERE ${v}.embeddingModel = $model AND ${filter}
     ${returns}`,
      countEmbedded: `MATCH (${v}:${label}) WHERE ${v}.namespace = $ns AND ${v}.embeddingModel = $model RETURN count(${v}) AS n`,
      countAll: `MATCH (${v}:${label}) RETURN count(${v}) AS n`,
    },
  };
}

/** What a hit carries, from the `hits` statement's map (`supersededBy` flattened, as `scoredIds` does). */
function carriedHit(m: Record<string, unknown>): Omit<ScoredId, 'id' | 'score'> {
  const hit: Omit<ScoredId, 'id' | 'score'> = {};
  if (Array.isArray(m.events)) hit.events = m.events as string[];
  if (Array.isArray(m.supersededBy)) hit.supersededBy = (m.supersededBy as string[][]).flat();
  return hit;
}

/** `channel`'s listing for `model`, scoped by `scope` (the parameters its filter names, `ns` among them). */
export function vectorListing(channel: VectorChannel, scope: Record<string, unknown>, model: string): VectorListing {
  const s = channel.statements;
  const params = { ...scope, model };
  const namespace = String(scope.ns);
  return {
    label: channel.label,
    model,
    list: async (tx, exactMax) => {
      const res = await tx.run(s.listing, { ...params, exactMax: neo4j.int(exactMax) });
      const row = res.records[0];
      const embedded = Number(row?.get('embedded') ?? 0);
      if (embedded > exactMax) return { embedded, nodes: null };
      const listed = (row?.get('listed') ?? []) as Array<Record<string, unknown>>;
      return { embedded, nodes: listed.map((m) => ({ id: String(m.id), stamp: typeof m.stamp === 'number' ? m.stamp : null })) };
    },
    rank: async (tx, listing, vectors, query, k) => {
      if (!listing.nodes) return { embedded: listing.embedded, hits: null };
      const held = await vectors.vectors(nodeVectorKey(channel.label, model, namespace), listing.nodes, listing.embedded, async (ids) => {
        const res = await tx.run(s.vectors, { ...params, ids });
        return res.records.map((r) => ({
          id: r.get('id') as string,
          stamp: typeof r.get('stamp') === 'number' ? (r.get('stamp') as number) : null,
          vector: r.get('embedding') as number[],
        }));
      });
      // The query as Neo4j compares it: 32-bit values.
      const q = Float64Array.from(Float32Array.from(query));
      const qNorm = Math.sqrt(q.reduce((a, x) => a + x * x, 0));
      const scored: ScoredId[] = [];
      for (const n of listing.nodes) {
        const v = held.get(n.id);
        const score = v ? similarity(v, q, qNorm) : null;
        if (score !== null) scored.push({ id: n.id, score });
      }
      // As the exact statement orders them: score, then id.
      scored.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      // What the first k carry (their payload), read for them alone; a node gone meanwhile is dropped.
      const top = scored.slice(0, k);
      const carried = new Map<string, Record<string, unknown>>();
      if (top.length > 0) {
        const res = await tx.run(s.hits, { ...params, ids: top.map((h) => h.id) });
        for (const r of res.records) carried.set(r.get('id') as string, r.get('hit') as Record<string, unknown>);
      }
      const hits = top.flatMap((h) => {
        const m = carried.get(h.id);
        return m ? [{ ...h, ...carriedHit(m) }] : [];
      });
      if (!channel.allScores) return { embedded: listing.embedded, hits };
      const scores: Record<string, number> = {};
      for (const h of scored) scores[h.id] = h.score;
      return { embedded: listing.embedded, hits, scores };
    },
  };
}

/** `channel` for `vector` of `model`, scoped by `scope` (the parameters its filter names, `ns` among them). */
export function vectorSearch(channel: VectorChannel, scope: Record<string, unknown>, model: string, vector: number[]): VectorSearch {
  const s = channel.statements;
  const params = { ...scope, model, vector };
  const listing = vectorListing(channel, scope, model);
  return {
    label: channel.label,
    model,
    exact: (tx, k) => scoredIds(tx, s.exact, { ...params, k: neo4j.int(k) }),
    index: (tx, candidates, k) => scoredIds(tx, s.index, { ...params, candidates: neo4j.int(candidates), k: neo4j.int(k) }),
    countedExact: async (tx, k, exactMax, vectors) => listing.rank(tx, await listing.list(tx, exactMax), vectors, vector, k),
    countAll: (tx) => countAll(tx, channel),
  };
}

/** How many of the namespace's nodes carry an embedding of `model` (decides exact vs. index search). */
export async function countEmbedded(tx: CypherRunner, channel: VectorChannel, namespace: string, model: string): Promise<number> {
  const res = await tx.run(channel.statements.countEmbedded, { ns: namespace, model });
  return Number(res.records[0]?.get('n') ?? 0);
}

/** All nodes of the channel's label, every namespace: from the label count store, without a scan. */
export async function countAll(tx: CypherRunner, channel: VectorChannel): Promise<number> {
  const res = await tx.run(channel.statements.countAll);
  return Number(res.records[0]?.get('n') ?? 0);
}
