import neo4j from 'neo4j-driver';
import { assertIdentifier, CypherRunner } from './cypher-runner';
import { HeldCandidate, StoredVector, textHash } from '../held-vectors';

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

/** A channel's hits returned as one list of maps (`hits`), e.g. from a subquery: the same shape as `scoredIds`. */
export function scoredIdList(value: unknown): ScoredId[] {
  return (value as Array<{ id: string; score: unknown; events?: string[]; supersededBy?: string[][] }>).map((h) => ({
    id: h.id,
    score: Number(h.score),
    ...(h.events ? { events: h.events } : {}),
    ...(h.supersededBy ? { supersededBy: h.supersededBy.flat() } : {}),
  }));
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
   * The counted exact search also returns the cosine of every node it scored (`CountedExactHits.scores`),
   * so another statement of the same search can rank a subset of them without reading their vectors
   * again (the fact channel: the entity-name channel ranks a named entity's facts by it).
   */
  allScores?: boolean;
  /** The property holding the text the node's vector embeds (held-vectors.ts keys a held vector by it). */
  text: string;
  /**
   * What a hit carries besides its id and score (one of the columns `returns` gives), as a name and
   * an expression over `n`: the counted search collects hits as maps of the three, the held-vectors
   * scan collects it for every candidate.
   */
  extra: { name: 'events' | 'supersededBy'; expression: string };
}

/** A vector channel with its statements, built once (Neo4j caches a plan per statement text). */
export interface VectorChannel extends VectorChannelShape {
  statements: { exact: string; countedExact: string; index: string; countEmbedded: string; countAll: string; heldScan: string; heldVectors: string };
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

/** What the held-vectors scan returns: the namespace's embedded nodes, and the candidates when there were at most `exactMax`. */
export interface HeldScan {
  embedded: number;
  /** Every node of the namespace embedded by the model that passes the filter, when `embedded <= exactMax`; null above. */
  candidates: HeldCandidate[] | null;
}

/** One vector channel for one scope and query vector: what `SearchService.vectorChannel` chooses between. */
export interface VectorSearch {
  readonly label: VectorChannelShape['label'];
  index(tx: CypherRunner, candidates: number, k: number): Promise<ScoredId[]>;
  exact(tx: CypherRunner, k: number): Promise<ScoredId[]>;
  /** The namespace's embedded count, with the exact hits when it is at most `exactMax` (one statement). */
  countedExact(tx: CypherRunner, k: number, exactMax: number): Promise<CountedExactHits>;
  /** The label's nodes in every namespace (label count store): sizes the index path's oversampling. */
  countAll(tx: CypherRunner): Promise<number>;
  /** The namespace's embedded count, with its candidates (no vectors) when it is at most `exactMax`: needs no query vector. */
  heldScan(tx: CypherRunner, exactMax: number): Promise<HeldScan>;
  /** The vectors of `ids` (of the namespace and model), with the text each embeds. */
  heldVectors(tx: CypherRunner, ids: string[]): Promise<StoredVector[]>;
}

/**
 * The statements of a vector channel:
 * - `exact`: cosine over the namespace's nodes embedded by `$model`, no index, so no oversampling and no starvation;
 * - `countedExact` (`countedExact` below): counts the namespace's embedded nodes and, when there are at
 *   most `$exactMax`, scores them the same way in the same statement, so the namespace is scanned once;
 * - `index`: `$candidates` neighbours from the shared index, then the namespace and filters (the caller oversamples);
 * - `countEmbedded`, `countAll`: the namespace's embedded nodes, and all nodes of the label.
 */
export function vectorChannel(shape: VectorChannelShape): VectorChannel {
  const [label, v, index] = [assertIdentifier(shape.label), assertIdentifier(shape.node), assertIdentifier(shape.index)];
  if (v === 'n') throw new Error('vectorChannel: the node variable n is taken by the counted search');
  const { filter, returns, extra } = shape;
  const hit = `{id: n.id, score: score, ${assertIdentifier(extra.name)}: ${extra.expression}}`;
  return {
    ...shape,
    statements: {
      exact: `MATCH (${v}:${label}) WHERE ${v}.embeddingModel = $model AND ${v}.embeddingDims = size($vector) AND ${filter}
     WITH ${v}, vector.similarity.cosine(${v}.embedding, $vector) AS score
     ${returns}`,
      countedExact: countedExact(
        label,
        `WITH n AS ${v} WHERE ${v}.embeddingDims = size($vector) AND ${filter}
     WITH ${v} AS n, vector.similarity.cosine(${v}.embedding, $vector) AS score`,
        hit,
        shape.allScores ?? false,
      ),
      index: `CALL db.index.vector.queryNodes('${index}', $candidates, $vector) YIELD node AS ${v}, score
     WITH ${v}, score WHERE ${v}.embeddingModel = $model AND ${filter}
     ${returns}`,
      countEmbedded: `MATCH (${v}:${label}) WHERE ${v}.namespace = $ns AND ${v}.embeddingModel = $model RETURN count(${v}) AS n`,
      countAll: `MATCH (${v}:${label}) RETURN count(${v}) AS n`,
      // The exact search's filter without the vector: sent before the query is embedded.
      heldScan: `MATCH (n:${label}) WHERE n.namespace = $ns AND n.embeddingModel = $model
     WITH collect(n) AS embedded
     CALL (embedded) {
       UNWIND CASE WHEN size(embedded) <= $exactMax THEN embedded ELSE [] END AS n
       WITH n AS ${v} WHERE ${filter}
       WITH ${v} AS n
       RETURN collect(n.id) AS ids, collect(n.${assertIdentifier(shape.text)}) AS texts, collect(${shape.extra.expression}) AS extras
     }
     RETURN size(embedded) AS embedded, ids, texts, extras`,
      heldVectors: `MATCH (n:${label}) WHERE n.id IN $ids AND n.namespace = $ns AND n.embeddingModel = $model AND n.embedding IS NOT NULL
     RETURN n.id AS id, n.${assertIdentifier(shape.text)} AS text, n.embedding AS vector`,
    },
  };
}

/**
 * Counts the namespace's `label` nodes embedded by `$model` and, when there are at most `$exactMax`,
 * scores them by exact cosine in the same statement: `filterAndScore` turns `n` (one of them)
 * into rows `n, score` (its filters applied), `hit` is the map of one hit. One statement instead
 * of a count and then a search, and the namespace is scanned once.
 */
function countedExact(label: string, filterAndScore: string, hit: string, allScores: boolean): string {
  if (!allScores)
    return `MATCH (n:${label}) WHERE n.namespace = $ns AND n.embeddingModel = $model
     WITH collect(n) AS embedded
     CALL (embedded) {
       UNWIND CASE WHEN size(embedded) <= $exactMax THEN embedded ELSE [] END AS n
       ${filterAndScore}
       WITH n, score ORDER BY score DESC, n.id LIMIT $k
       RETURN collect(${hit}) AS hits
     }
     RETURN size(embedded) AS embedded, hits`;
  // Every scored node in order (the same order as above: score, then id), the first k of them as hits.
  return `MATCH (n:${label}) WHERE n.namespace = $ns AND n.embeddingModel = $model
     WITH collect(n) AS embedded
     CALL (embedded) {
       UNWIND CASE WHEN size(embedded) <= $exactMax THEN embedded ELSE [] END AS n
       ${filterAndScore}
       WITH n, score ORDER BY score DESC, n.id
       RETURN collect(n.id) AS scoredIds, collect(score) AS scores, collect(n)[0..$k] AS topNodes
     }
     CALL (topNodes, scores) {
       UNWIND range(0, size(topNodes) - 1) AS i
       WITH topNodes[i] AS n, scores[i] AS score ORDER BY i
       RETURN collect(${hit}) AS hits
     }
     RETURN size(embedded) AS embedded, hits, scoredIds, scores`;
}

/** `channel` for `vector` of `model`, scoped by `scope` (the parameters its filter names, `ns` among them). */
export function vectorSearch(channel: VectorChannel, scope: Record<string, unknown>, model: string, vector: number[]): VectorSearch {
  const s = channel.statements;
  const params = { ...scope, model, vector };
  return {
    label: channel.label,
    exact: (tx, k) => scoredIds(tx, s.exact, { ...params, k: neo4j.int(k) }),
    index: (tx, candidates, k) => scoredIds(tx, s.index, { ...params, candidates: neo4j.int(candidates), k: neo4j.int(k) }),
    countedExact: async (tx, k, exactMax) => {
      const res = await tx.run(s.countedExact, { ...params, k: neo4j.int(k), exactMax: neo4j.int(exactMax) });
      const row = res.records[0];
      const embedded = Number(row?.get('embedded') ?? 0);
      if (embedded > exactMax) return { embedded, hits: null };
      const hits = scoredIdList(row?.get('hits') ?? []);
      if (!channel.allScores || !row?.has('scoredIds')) return { embedded, hits };
      const ids = row.get('scoredIds') as string[];
      const values = row.get('scores') as unknown[];
      const scores: Record<string, number> = {};
      ids.forEach((id, i) => (scores[id] = Number(values[i])));
      return { embedded, hits, scores };
    },
    countAll: (tx) => countAll(tx, channel),
    heldScan: async (tx, exactMax) => {
      const res = await tx.run(s.heldScan, { ...scope, model, exactMax: neo4j.int(exactMax) });
      const row = res.records[0];
      const embedded = Number(row?.get('embedded') ?? 0);
      if (embedded > exactMax) return { embedded, candidates: null };
      // Parallel lists rather than a map per node: the driver decodes them at a fraction of the cost.
      const ids = (row?.get('ids') ?? []) as string[];
      const texts = (row?.get('texts') ?? []) as Array<string | null>;
      const extras = (row?.get('extras') ?? []) as unknown[];
      const name = channel.extra.name;
      return {
        embedded,
        candidates: ids.map((id, i) => {
          const extra = extras[i] as string[] | string[][];
          return { id, key: textHash(texts[i] ?? ''), [name]: name === 'supersededBy' ? (extra as string[][]).flat() : extra };
        }),
      };
    },
    heldVectors: async (tx, ids) => {
      const res = await tx.run(s.heldVectors, { ns: scope.ns, model, ids });
      return res.records.map((r) => ({
        id: r.get('id') as string,
        key: textHash((r.get('text') as string | null) ?? ''),
        vector: r.get('vector') as number[],
      }));
    },
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
