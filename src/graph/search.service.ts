import neo4j, { Driver } from 'neo4j-driver';
import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { BronzeException, BronzeExceptionCode } from '../bronze/bronze.exception';
import { Embedder } from '../silver/model-ports';
import { Fact } from '../silver/silver.types';
import { CypherRunner } from './cypher/cypher-runner';
import {
  countAllFacts,
  countEmbeddedFacts,
  entityNameSearch,
  exactVectorSearch,
  expandFromSeeds,
  FactSearchScope,
  indexVectorSearch,
  keywordSearch,
  ScoredId,
} from './cypher/search-facts';
import { fuseByReciprocalRank, matchesSearchFilter, SearchChannel, SearchFilterInput, toLuceneQuery } from './search-ranking';

export interface SearchMemoryArgs {
  namespace: string;
  query: string;
  limit?: number | null;
  asOf?: Date | null;
  filter?: SearchFilterInput | null;
}

export interface MemoryHitRow {
  fact: Fact;
  score: number;
  channels: SearchChannel[];
}

export interface SearchSettings {
  /** Up to this many embedded facts in a namespace, the vector channel computes exact cosine; above it, the index with oversampling. */
  exactMaxFacts: number;
  /** Largest k asked of the vector index before falling back to exact cosine. */
  maxIndexCandidates: number;
  /** How long a namespace's embedded-fact count (which only picks exact vs. index) is reused. */
  countTtlMs: number;
}

/**
 * Exact cosine in Cypher costs ~28 µs per fact here (bench/search: 282 ms p50 for 10k facts) while
 * the index path costs ~40 ms whatever the namespace size, so exact pays off below ~1,500 facts.
 */
export const DEFAULT_SEARCH_SETTINGS: SearchSettings = { exactMaxFacts: 1_500, maxIndexCandidates: 10_000, countTtlMs: 30_000 };
export const MAX_SEARCH_LIMIT = 100;
export const MAX_QUERY_CHARS = 2_000;
const MAX_FACT_TYPES = 50;
/** Graph seeds: the best few vector/keyword hits whose entities are expanded. */
const GRAPH_SEEDS = 5;
const MAX_NAME_MATCHED_ENTITIES = 10;

/** Loads facts by id (the request's factById DataLoader), null for misses. */
export type FactLoader = (ids: string[]) => Promise<Array<Fact | null | Error>>;

/**
 * The vector index path: the index has no namespace pre-filter, so ask it for enough neighbours
 * that `k` of this namespace's should survive the post-filter — k × (all facts ÷ the namespace's
 * facts) × 1.5, at least max(10 k, 100) — and double while short, up to `maxIndexCandidates`;
 * then exact cosine. Sizing the first call by the namespace's share saves the doubling round in
 * the common case (bench/search: 1.83 index calls per query before, with a fixed 10 k start).
 */
export async function oversampledIndexSearch(
  read: <T>(work: (tx: CypherRunner) => Promise<T>) => Promise<T>,
  scope: FactSearchScope,
  model: string,
  vector: number[],
  k: number,
  sizes: { namespaceFacts: number; allFacts: number },
  settings: Pick<SearchSettings, 'maxIndexCandidates'>,
): Promise<{ hits: ScoredId[]; indexCalls: number; fellBack: boolean }> {
  const share = sizes.namespaceFacts / Math.max(sizes.allFacts, sizes.namespaceFacts, 1);
  let indexCalls = 0;
  for (let candidates = Math.max(k * 10, 100, Math.ceil((1.5 * k) / share)); ; candidates *= 2) {
    const n = Math.min(candidates, settings.maxIndexCandidates);
    indexCalls += 1;
    const hits = await read((tx) => indexVectorSearch(tx, scope, model, vector, n, k));
    if (hits.length >= Math.min(k, sizes.namespaceFacts)) return { hits, indexCalls, fellBack: false };
    if (n >= settings.maxIndexCandidates) break;
  }
  return { hits: await read((tx) => exactVectorSearch(tx, scope, model, vector, k)), indexCalls, fellBack: true };
}

/** Loads the embedder once, on first use, shared by concurrent callers; a failed load is retried next time. */
export function lazyEmbedder(load: () => Promise<Embedder>): () => Promise<Embedder> {
  let pending: Promise<Embedder> | undefined;
  return () => {
    pending ??= load().catch((err: unknown) => {
      pending = undefined;
      throw err;
    });
    return pending;
  };
}

function invalid(message: string): BronzeException {
  return new BronzeException(BronzeExceptionCode.INVALID_ARGUMENT, message);
}

/**
 * Hybrid memory search over the Neo4j projection (docs/search.md): vector similarity, keyword
 * (fulltext) and graph expansion, each scoped to the namespace and filtered inside Cypher, fused by
 * reciprocal rank, then re-checked against Silver through the caller's loader.
 */
export class SearchService {
  constructor(
    private readonly driver: Driver,
    private readonly embedder: () => Promise<Embedder>,
    private readonly settings: SearchSettings = DEFAULT_SEARCH_SETTINGS,
    private readonly warn: (msg: string) => void = () => undefined,
  ) {}

  async search(auth: AuthContext, args: SearchMemoryArgs, loadFacts: FactLoader): Promise<MemoryHitRow[]> {
    auth.require(Capability.SEARCH, args.namespace);
    const { limit, query, scope } = this.validate(args);
    const depth = Math.max(limit * 3, 30);
    const lucene = toLuceneQuery(query);

    const [vector, keyword, named] = await Promise.all([
      this.vectorChannel(scope, query, depth),
      lucene ? this.read((tx) => keywordSearch(tx, scope, lucene, depth)) : Promise.resolve([]),
      lucene ? this.read((tx) => entityNameSearch(tx, scope, lucene, MAX_NAME_MATCHED_ENTITIES, depth)) : Promise.resolve([]),
    ]);
    const seeds = fuseByReciprocalRank({ vector, keyword }).slice(0, GRAPH_SEEDS).map((h) => h.id);
    const expanded = seeds.length > 0 ? await this.read((tx) => expandFromSeeds(tx, scope, seeds, depth)) : [];
    const graph = [...named, ...expanded.filter((e) => !named.some((n) => n.id === e.id))];

    const fused = fuseByReciprocalRank({ vector, keyword, graph });
    // Silver is the truth: drop hits the projection has not caught up with (moved out of the filter, gone).
    const candidates = fused.slice(0, limit * 2);
    const facts = await loadFacts(candidates.map((h) => h.id));
    const hits: MemoryHitRow[] = [];
    candidates.forEach((h, i) => {
      const f = facts[i];
      if (f && !(f instanceof Error) && matchesSearchFilter(f, scope.namespace, args.filter ?? {}, args.asOf ?? null)) hits.push({ fact: f, score: h.score, channels: h.channels });
    });
    return hits.slice(0, limit);
  }

  private validate(args: SearchMemoryArgs): { limit: number; query: string; scope: FactSearchScope } {
    const limit = args.limit ?? 10;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) throw invalid(`limit must be between 1 and ${MAX_SEARCH_LIMIT}`);
    const query = args.query.trim();
    if (query.length === 0) throw invalid('query must not be empty');
    if (query.length > MAX_QUERY_CHARS) throw invalid(`query is ${query.length} characters; the maximum is ${MAX_QUERY_CHARS}`);
    const f = args.filter ?? {};
    if (f.factTypes && f.factTypes.length > MAX_FACT_TYPES) throw invalid(`filter.factTypes takes at most ${MAX_FACT_TYPES} types`);
    if (f.minImportance !== null && f.minImportance !== undefined && !Number.isFinite(f.minImportance)) throw invalid('filter.minImportance must be a finite number');
    if (args.asOf && Number.isNaN(args.asOf.getTime())) throw invalid('asOf is not a valid date-time');
    return {
      limit,
      query,
      scope: {
        namespace: args.namespace,
        factTypes: f.factTypes && f.factTypes.length > 0 ? [...f.factTypes] : null,
        entityId: f.entityId ?? null,
        minImportance: f.minImportance ?? null,
        asOf: args.asOf ? args.asOf.toISOString() : null,
        includeSuperseded: f.includeSuperseded ?? false,
      },
    };
  }

  /**
   * Exact cosine within the namespace when it is small enough (cheap, exact, cannot starve);
   * otherwise the shared vector index, oversampling (doubling k) until `k` hits of this namespace
   * pass the filters, and exact cosine when even the largest k does not yield them.
   */
  private async vectorChannel(scope: FactSearchScope, query: string, k: number): Promise<ScoredId[]> {
    let embedder: Embedder;
    let vector: number[];
    try {
      embedder = await this.embedder();
      [vector = []] = await embedder.embedQuery([query]);
    } catch (err) {
      // Keyword and graph still answer; the vector channel is skipped, loudly.
      this.warn(`searchMemory: embedding the query failed, vector channel skipped: ${err instanceof Error ? err.message : String(err)}`);
      return [];
    }
    if (vector.length === 0) return [];
    const model = embedder.model;
    const count = await this.embeddedFactCount(scope.namespace, model);
    if (count === 0) return [];
    if (count <= this.settings.exactMaxFacts) return this.read((tx) => exactVectorSearch(tx, scope, model, vector, k));
    const total = await this.read(countAllFacts);
    return (await oversampledIndexSearch((work) => this.read(work), scope, model, vector, k, { namespaceFacts: count, allFacts: total }, this.settings)).hits;
  }

  private readonly counts = new Map<string, { n: number; at: number }>();

  /**
   * Counting a large namespace's facts is a scan of all of them, and the answer only picks the
   * index path, so a count above `exactMaxFacts` is reused for `countTtlMs` (a namespace does not
   * shrink below the threshold in seconds). Small counts are cheap and always fresh, so a new
   * namespace's first facts are searchable at once.
   */
  private async embeddedFactCount(namespace: string, model: string): Promise<number> {
    const key = `${model}\u0000${namespace}`;
    const hit = this.counts.get(key);
    if (hit && Date.now() - hit.at < this.settings.countTtlMs) return hit.n;
    const n = await this.read((tx) => countEmbeddedFacts(tx, namespace, model));
    if (n > this.settings.exactMaxFacts) {
      if (this.counts.size >= 10_000) this.counts.clear();
      this.counts.set(key, { n, at: Date.now() });
    }
    return n;
  }

  private async read<T>(work: (tx: CypherRunner) => Promise<T>): Promise<T> {
    const session = this.driver.session({ defaultAccessMode: neo4j.session.READ });
    try {
      return await session.executeRead(work);
    } finally {
      await session.close();
    }
  }
}
