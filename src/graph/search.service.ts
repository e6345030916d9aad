import { AsyncLocalStorage } from 'node:async_hooks';
import { Driver } from 'neo4j-driver';
import { readTransaction } from '../platform/neo4j/neo4j-client';
import { pipelineMetrics, secondsSince } from '../platform/telemetry/metrics';
import { ATTR, namespaceHash, traced } from '../platform/telemetry/tracing';
import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { BronzeEvent } from '../bronze/event.types';
import { ComposeSpan, composeText } from '../common/compose-text';
import { Embedder } from '../silver/model-ports';
import { Fact } from '../silver/silver.types';
import { CypherRunner } from './cypher/cypher-runner';
import { countsDiverged, GraphCounts, graphCounts, Replan, withReplan } from './cypher/replan';
import type { Stage } from '../platform/stages';
import { GraphException, GraphExceptionCode } from './graph.exception';
import { WARM_UP_NAMESPACE, WARM_UP_QUESTIONS } from './graph-warm-up';
import { HeldScan, ScoredId, VectorSearch } from './cypher/search-channel';
import { HeldCandidate, HeldVectors } from './held-vectors';
import { FactUses, NO_USES } from '../silver/usage-recorder';
import { entityNameSearch, expandFromSeeds, FactSearchScope, factVectorSearch, keywordSearch, roleNames } from './cypher/search-facts';
import { EVENT_SPEAKER_BOOST, eventKeywordSearch, EventSearchScope, eventVectorSearch } from './cypher/search-events';
import {
  ChannelLists,
  ChannelWeights,
  DEFAULT_CHANNEL_WEIGHTS,
  fusedCandidates,
  fuseByReciprocalRank,
  matchesSearchFilter,
  MemoryCandidate,
  newerFirst,
  rankingPriors,
  rankMemoryHits,
  SearchChannel,
  SearchFilterInput,
  toLuceneQuery,
  warmRanking,
  withRoleNames,
} from './search-ranking';

/** How a background warm-up (`SearchService.keepWarm`) ended: searches run, time taken, and why it stopped. */
export interface WarmUpOutcome {
  readonly searches: number;
  readonly ms: number;
  readonly reason: 'budget' | 'real search' | 'stopped' | 'failed';
}

/** A query's embedding and the model that made it (vectors of another model are never compared). */
type QueryVector = { model: string; vector: number[] };

export interface SearchMemoryArgs {
  namespace: string;
  query: string;
  limit?: number | null;
  asOf?: Date | null;
  filter?: SearchFilterInput | null;
}

/** One hit: a Silver fact, or a raw Bronze event that no fact hit carries. */
export type MemoryHitRow =
  | { kind: 'FACT'; fact: Fact; event?: undefined; score: number; channels: SearchChannel[]; updatedBy: string[] }
  | { kind: 'EVENT'; event: BronzeEvent; fact?: undefined; score: number; channels: SearchChannel[]; updatedBy: string[] };

/** The request's loaders (DataLoaders): null or an Error for misses. */
export interface SearchLoaders {
  facts(ids: string[]): Promise<Array<Fact | null | Error>>;
  events(ids: string[]): Promise<Array<BronzeEvent | null | Error>>;
  /**
   * The active redactions of each event's content. Ranking reads an event's text as Neo4j holds it
   * (redactions applied, for every caller), so a hidden word cannot change the order of hits.
   */
  redactions(ids: string[]): Promise<Array<readonly ComposeSpan[] | Error>>;
  /**
   * Called with the candidates as they are hydrated, in the same tick: the caller may load what a
   * page of these hits reads next (`facts`: the candidate facts; `events`: the candidate events and
   * the events the candidate facts rest on in the graph), so it comes in the same round of queries.
   */
  prefetch?(ids: { facts: string[]; events: string[] }): void;
}

export interface SearchSettings {
  /** Up to this many embedded facts in a namespace, the vector channel computes exact cosine; above it, the index with oversampling. */
  exactMaxFacts: number;
  /** Largest k asked of the vector index before falling back to exact cosine. */
  maxIndexCandidates: number;
  /** How long a namespace's embedded-fact count (which only picks exact vs. index) is reused. */
  countTtlMs: number;
  /** Weight of each channel in the fusion (search-ranking.ts). */
  channelWeights: ChannelWeights;
  /**
   * The graph channel expands over Gold entities (SEARCH_GRAPH_GOLD, default true): an entity
   * matched by name, or a seed's entity, stands for every live Silver member of its Gold entity.
   * False: over Silver entities alone, as before Gold existed (bench/recall compares both).
   */
  graphOverGold: boolean;
  /** Weight of a turn's speaker (`speaker`, a field of its own) in the event keyword channel, against what the turn says (1). */
  speakerBoost: number;
  /**
   * Searches never wait for Neo4j to plan a statement again (`refreshPlans` does it in the
   * background, `plansStage`): they are sent with `CYPHER replan=skip`. False: Neo4j plans a
   * statement again inside whichever search meets its statistics moved (0.4-1.3 s each under
   * load), as it does for every other statement.
   */
  replanInBackground: boolean;
  /**
   * Up to this many bytes of small namespaces' vectors are held in this process (held-vectors.ts):
   * the exact vector channels ask Neo4j only which nodes pass their filters, sent before the query
   * is embedded, and score them here. 0: Neo4j computes the cosine of every node.
   */
  heldVectorsBytes: number;
}

/**
 * Exact cosine in Cypher costs ~28 µs per fact here (bench/search: 282 ms p50 for 10k facts) while
 * the index path costs ~40 ms whatever the namespace size, so exact pays off below ~1,500 facts.
 */
export const DEFAULT_SEARCH_SETTINGS: SearchSettings = {
  exactMaxFacts: 1_500,
  maxIndexCandidates: 10_000,
  countTtlMs: 30_000,
  channelWeights: DEFAULT_CHANNEL_WEIGHTS,
  graphOverGold: true,
  speakerBoost: EVENT_SPEAKER_BOOST,
  replanInBackground: false,
  heldVectorsBytes: 256 * 1024 * 1024,
};
/** `refreshPlans` plans the search statements again once a count of the graph moved by more than this share since their last plan. */
export const REPLAN_DIVERGENCE = 0.5;
/** What the warm-up searches (and `refreshPlans` before any real search). */
const WARM_UP_ARGS: SearchMemoryArgs = { namespace: WARM_UP_NAMESPACE, query: WARM_UP_QUESTIONS[0] as string };
export const MAX_SEARCH_LIMIT = 100;
export const MAX_QUERY_CHARS = 2_000;
const MAX_FACT_TYPES = 50;
/** Graph seeds: the best few vector/keyword hits whose entities are expanded. */
const GRAPH_SEEDS = 5;
const MAX_NAME_MATCHED_ENTITIES = 10;
/** Up to this many vectors new to the process (or a tenth of the candidates) are read inside a search; more, in the background. */
const MAX_INLINE_VECTOR_READS = 32;

const NO_HITS: ScoredId[] = [];
const FACT_LISTS = ['vector', 'keyword', 'graph'] as const;

/**
 * The vector index path: the index has no namespace pre-filter, so ask it for enough neighbours
 * that `k` of this namespace's should survive the post-filter — k × (all nodes ÷ the namespace's
 * nodes) × 1.5, at least max(10 k, 100) — and double while short, up to `maxIndexCandidates`;
 * then exact cosine. Sizing the first call by the namespace's share saves the doubling round in
 * the common case (bench/search: 1.83 index calls per query before, with a fixed 10 k start).
 */
export async function oversampledIndexSearch(
  read: <T>(work: (tx: CypherRunner) => Promise<T>) => Promise<T>,
  search: VectorSearch,
  k: number,
  sizes: { namespaceFacts: number; allFacts: number },
  settings: Pick<SearchSettings, 'maxIndexCandidates'>,
): Promise<{ hits: ScoredId[]; indexCalls: number; fellBack: boolean }> {
  const share = sizes.namespaceFacts / Math.max(sizes.allFacts, sizes.namespaceFacts, 1);
  let indexCalls = 0;
  for (let candidates = Math.max(k * 10, 100, Math.ceil((1.5 * k) / share)); ; candidates *= 2) {
    const n = Math.min(candidates, settings.maxIndexCandidates);
    indexCalls += 1;
    const hits = await read((tx) => search.index(tx, n, k));
    if (hits.length >= Math.min(k, sizes.namespaceFacts)) return { hits, indexCalls, fellBack: false };
    if (n >= settings.maxIndexCandidates) break;
  }
  return { hits: await read((tx) => search.exact(tx, k)), indexCalls, fellBack: true };
}

/** An embedder loaded on first use; `close` releases it when the process shuts down. */
export interface LazyEmbedder {
  (): Promise<Embedder>;
  /** Closes the embedder if it was loaded (its worker threads stop); a later call loads it again. */
  close(): Promise<void>;
}

/** Loads the embedder once, on first use, shared by concurrent callers; a failed load is retried next time. */
export function lazyEmbedder(load: () => Promise<Embedder>): LazyEmbedder {
  let pending: Promise<Embedder> | undefined;
  const get = (): Promise<Embedder> => {
    pending ??= load().catch((err: unknown) => {
      pending = undefined;
      throw err;
    });
    return pending;
  };
  const close = async (): Promise<void> => {
    const loaded = pending;
    pending = undefined;
    const embedder = await loaded?.catch(() => undefined);
    await embedder?.close?.();
  };
  return Object.assign(get, { close });
}

/** An event as ranking reads it: its content with its redactions applied (what Neo4j holds). */
type ShownEvent = Pick<BronzeEvent, 'id' | 'actor' | 'occurredAt'> & { readonly content: string };

/** The events with their content as ranking may read it (one loader call, usually served from the prefetch). */
async function shownContent(events: ReadonlyMap<string, BronzeEvent>, load: SearchLoaders): Promise<Map<string, ShownEvent>> {
  const ids = [...events.keys()];
  const spans = ids.length > 0 ? await load.redactions(ids) : [];
  return new Map(
    ids.map((id, i) => {
      const e = events.get(id) as BronzeEvent;
      const s = spans[i];
      // A failed redaction read hides the whole text from ranking rather than risk the words.
      const content = s instanceof Error ? '' : s === undefined || s.length === 0 ? e.content : composeText(e.content, s);
      return [id, { id: e.id, actor: e.actor, occurredAt: e.occurredAt, content }];
    }),
  );
}

/** Where a channel's held vectors of a namespace are kept: one space per label, model and namespace. */
function heldSpace(label: string, model: string, namespace: string): string {
  return `${label}\u0000${model}\u0000${namespace}`;
}

/** A fact scope that filters nothing but the namespace and what is current now. */
function unfilteredFacts(s: FactSearchScope): boolean {
  return s.factTypes === null && s.entityId === null && s.minImportance === null && s.asOf === null && !s.includeSuperseded;
}

function invalid(message: string): GraphException {
  return new GraphException(GraphExceptionCode.INVALID_ARGUMENT, message);
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
    /** Facts a search returns count as used (decay, docs/lifecycle.md). */
    private readonly uses: FactUses = NO_USES,
    /** Called at each search: background stages pause while searches are served (platform/foreground.ts). */
    private readonly reading: () => void = () => undefined,
  ) {
    this.held = new HeldVectors(settings.heldVectorsBytes);
  }

  /** Small namespaces' vectors, held for the exact vector channels (`heldVectorsBytes`). */
  private readonly held: HeldVectors;

  /** One `search_memory` span (tracing on) and `medallion_search_seconds` per search; no query text in either. */
  async search(auth: AuthContext, args: SearchMemoryArgs, load: SearchLoaders): Promise<MemoryHitRow[]> {
    const started = process.hrtime.bigint();
    this.reading();
    const hits = await traced(
      'search_memory',
      { [ATTR.operation]: 'search_memory', [ATTR.store]: namespaceHash(args.namespace), 'medallion.search.limit': args.limit ?? 10 },
      async (span) => {
        const found = await this.searchUntraced(auth, args, load);
        span?.setAttribute('medallion.search.hits', found.length);
        return found;
      },
    );
    pipelineMetrics.searchSeconds.observe(secondsSince(started));
    return hits;
  }

  private async searchUntraced(auth: AuthContext, args: SearchMemoryArgs, load: SearchLoaders): Promise<MemoryHitRow[]> {
    const { limit, lists } = await this.channels(auth, args);
    // Postgres is the truth: drop hits the projection has not caught up with (moved out of the filter, gone).
    const { facts: factCandidates, events: eventCandidates } = fusedCandidates(lists, limit * 3, this.settings.channelWeights);
    const factIds = factCandidates.map((h) => h.id);
    const eventIds = eventCandidates.map((h) => h.id);
    const hydrated = Promise.all([load.facts(factIds), load.events(eventIds)]);
    // The events the graph says the candidate facts rest on (their fact channels' `events`).
    const restsOn = new Map(FACT_LISTS.flatMap((c) => lists[c].map((h) => [h.id, h.events ?? []] as const)));
    load.prefetch?.({ facts: factIds, events: [...new Set([...eventIds, ...factIds.flatMap((id) => restsOn.get(id) ?? [])])] });
    const [facts, events] = await hydrated;
    const visibleFacts = new Map<string, Fact>();
    factCandidates.forEach((h, i) => {
      const f = facts[i];
      if (f && !(f instanceof Error) && matchesSearchFilter(f, args.namespace, args.filter ?? {}, args.asOf ?? null)) visibleFacts.set(h.id, f);
    });
    const visibleEvents = new Map<string, BronzeEvent>();
    eventCandidates.forEach((h, i) => {
      const e = events[i];
      if (
        e &&
        !(e instanceof Error) &&
        e.namespace === args.namespace &&
        e.destroyedAt === null &&
        (!args.asOf || e.occurredAt.getTime() <= args.asOf.getTime())
      )
        visibleEvents.set(h.id, e);
    });
    const shownEvents = await shownContent(visibleEvents, load);
    const priors = rankingPriors(
      args.query,
      (id) => shownEvents.get(id),
      (id) => visibleFacts.get(id),
    );
    const ranked = rankMemoryHits(lists, (id) => visibleFacts.has(id) || visibleEvents.has(id), this.settings.channelWeights, priors);
    const top = await this.newestFirst(ranked.slice(0, limit), args, visibleFacts, shownEvents, restsOn, load);
    this.uses.record(top.filter((h) => h.kind === 'FACT').map((h) => h.id));
    return top.map((h): MemoryHitRow =>
      h.kind === 'FACT'
        ? { kind: 'FACT', fact: visibleFacts.get(h.id) as Fact, score: h.score, channels: h.channels, updatedBy: h.updatedBy ?? [] }
        : { kind: 'EVENT', event: visibleEvents.get(h.id) as BronzeEvent, score: h.score, channels: h.channels, updatedBy: h.updatedBy ?? [] },
    );
  }

  /**
   * The page with later statements first among hits about the same thing (`newerFirst`): a fact is
   * dated by the latest of the turns it rests on (already prefetched), an event by its time.
   */
  private async newestFirst(
    page: MemoryCandidate[],
    { namespace, query }: SearchMemoryArgs,
    facts: ReadonlyMap<string, Fact>,
    events: ReadonlyMap<string, ShownEvent>,
    restsOn: ReadonlyMap<string, readonly string[]>,
    load: SearchLoaders,
  ): Promise<MemoryCandidate[]> {
    const factIds = page.filter((h) => h.kind === 'FACT').map((h) => h.id);
    const turnIds = [...new Set(factIds.flatMap((id) => restsOn.get(id) ?? []))];
    const loaded = turnIds.length > 0 ? await load.events(turnIds) : [];
    const inNamespace = new Map<string, BronzeEvent>();
    loaded.forEach((e, i) => {
      if (e && !(e instanceof Error) && e.namespace === namespace && e.destroyedAt === null) inNamespace.set(turnIds[i] as string, e);
    });
    const turns = await shownContent(inNamespace, load);
    return newerFirst(
      page,
      (hit) => {
        if (hit.kind === 'EVENT') {
          const e = events.get(hit.id);
          return e ? { text: e.content, at: e.occurredAt.getTime() } : undefined;
        }
        const f = facts.get(hit.id);
        const said = (restsOn.get(hit.id) ?? []).map((id) => turns.get(id)).filter((e): e is ShownEvent => e !== undefined);
        if (!f || said.length === 0) return undefined;
        return { text: [f.statement, ...said.map((e) => e.content)].join(' '), at: Math.max(...said.map((e) => e.occurredAt.getTime())) };
      },
      query,
    );
  }

  /**
   * The ranked lists of every channel for a query (needs "search"), each scoped to the namespace
   * inside its index query: what `search` fuses. Benchmarks read them to study the fusion.
   */
  async channels(auth: AuthContext, args: SearchMemoryArgs): Promise<{ limit: number; lists: ChannelLists }> {
    auth.require(Capability.SEARCH, args.namespace);
    return this.channelLists(args);
  }

  /**
   * Runs every statement of a search once, before the API serves, over the rows `warmUpGraph`
   * projects into `WARM_UP_NAMESPACE` (no one's namespace), plus the graph expansion from a seed
   * that does not exist. The first searchMemory after a start took 1.9-5 s in a cold Neo4j
   * (bench/results/start-stop-before.json), the next ones under 0.1 s.
   */
  async warmUp(): Promise<void> {
    warmRanking(WARM_UP_QUESTIONS);
    await this.runEveryStatement(WARM_UP_ARGS);
  }

  /**
   * Every statement of a search for `args`: the role-name lookup however recently it ran, the
   * channels, and the graph expansion from a seed that does not exist (a real search expands only
   * when it has seeds). Nothing is returned or counted.
   */
  private async runEveryStatement(args: SearchMemoryArgs): Promise<void> {
    const { scope } = this.validate(args);
    this.roles.delete(args.namespace);
    await this.channelLists(args);
    await this.read((tx) => expandFromSeeds(tx, scope, ['warm-up'], 30, this.settings.graphOverGold));
    // Which vector statements a search sends depends on what this process holds (held-vectors.ts):
    // every one of them is planned here, whichever this round's search took.
    const model = this.held.enabled ? await this.embedderModel() : null;
    if (model !== null) {
      const channels = [factVectorSearch(scope, model, [0]), eventVectorSearch({ namespace: scope.namespace, asOf: scope.asOf }, model, [0])];
      await this.read((tx) =>
        Promise.all(
          // The vector read with a list of ids, as a search sends it (Neo4j keys a plan by its parameters' types too).
          channels.flatMap((c) => [
            c.heldScan(tx, this.settings.exactMaxFacts),
            c.heldVectors(tx, ['warm-up']),
            c.countedExact(tx, 1, this.settings.exactMaxFacts),
          ]),
        ),
      );
    }
  }

  /**
   * After the start, while no one searches: warm-up searches over `WARM_UP_NAMESPACE`, one after
   * another, for at most `budgetMs`. A fresh Neo4j JVM runs the search statements about three times
   * slower than it does once they are compiled: on a LoCoMo conversation its first 40 searches took
   * p50 71 ms in process, those after 160 searches 27-29 ms, every statement alike
   * (bench/results/search-profile-s18-cold.json; docs/search.md, "Tail latency"). The start's own
   * warm-up (`warmUp`) runs each statement once or twice, which plans them but does not compile them. It stops at once when a real search begins
   * (from then on real searches warm the path, and none of them waits behind a warm-up search for
   * long) or when `stopped()` says the process is stopping. Never throws: a failed warm-up search
   * ends it.
   */
  async keepWarm(budgetMs: number, stopped: () => boolean): Promise<WarmUpOutcome> {
    const t0 = Date.now();
    const begun = this.realSearchesBegun;
    let searches = 0;
    const outcome = (reason: WarmUpOutcome['reason']): WarmUpOutcome => ({ searches, ms: Date.now() - t0, reason });
    // Each question is embedded once (a remote embedder is called 4 times, not once per search):
    // what needs compiling is Neo4j's side.
    const vectors: Array<QueryVector | null> = [];
    for (const q of WARM_UP_QUESTIONS) {
      if (this.realSearchesBegun !== begun || stopped()) break;
      vectors.push(await this.queryVector(q));
    }
    while (Date.now() - t0 < budgetMs) {
      if (this.realSearchesBegun !== begun) return outcome('real search');
      if (stopped()) return outcome('stopped');
      const i = searches % WARM_UP_QUESTIONS.length;
      try {
        await this.channelLists({ namespace: WARM_UP_NAMESPACE, query: WARM_UP_QUESTIONS[i] as string }, vectors[i] ?? null);
      } catch {
        return outcome('failed');
      }
      searches++;
    }
    return outcome('budget');
  }

  /** `embedded`: the query's vector when the caller has it already (the warm-up), null for none; unset: embed the query. */
  private async channelLists(args: SearchMemoryArgs, embedded?: QueryVector | null): Promise<{ limit: number; lists: ChannelLists }> {
    const { limit, query: asked, scope, withEvents, withFacts } = this.validate(args);
    // Neither a warm-up nor `refreshPlans` is a search: no metrics, and `keepWarm` goes on.
    const replanning = this.replanning.getStore() === 'force';
    const warmingUp = scope.namespace === WARM_UP_NAMESPACE || replanning;
    if (!warmingUp) {
      this.realSearchesBegun++;
      this.lastAsked = args;
    }
    const depth = Math.max(limit * 3, 30);
    // "Maya" in a question about the user who said "I'm Maya" is "the user" of her facts.
    const query = withRoleNames(asked, await this.roleNames(scope.namespace));
    const terms = toLuceneQuery(query);
    const eventScope: EventSearchScope = { namespace: scope.namespace, asOf: scope.asOf };

    // The query is embedded while the keyword statements already run. Three read transactions,
    // run concurrently (a transaction's statements run one after another on the server, separate
    // transactions on separate cores): the fact channels (keyword; vector once the query is
    // embedded; then the graph expansion from their seeds), the entity names (ordered by similarity
    // to the query, so after its embedding), and the event channels (keyword, vector). Inside each,
    // statements are sent without waiting for one another (the driver pipelines them).
    // medallion_search_channel_seconds: each channel from when it can start (the vector channels
    // once the query is embedded) to its list; the graph channel is the expansion plus name matches.
    const timed = <T>(channel: string, work: () => Promise<T>): Promise<T> => {
      const t0 = process.hrtime.bigint();
      return work().then((r) => {
        if (!warmingUp) pipelineMetrics.searchChannelSeconds.observe({ channel }, secondsSince(t0));
        return r;
      });
    };
    const vectors = embedded !== undefined ? Promise.resolve(embedded) : timed('embed', () => this.queryVector(query));
    // The model's name, known before the query is embedded: the held-vectors scans start at once.
    const model = embedded !== undefined ? Promise.resolve(embedded?.model ?? null) : this.embedderModel();
    // The fact vector channel's exact search also gives every scored fact's cosine, which the entity
    // names then rank by instead of reading those facts' vectors again; settled (null: no scores) when
    // that channel does not run or fails, so the names never wait on a rejection of their own.
    let factScores: (scores: Record<string, number> | null) => void = () => undefined;
    const scored = new Promise<Record<string, number> | null>((resolve) => (factScores = resolve));
    const [facts, named, events] = await Promise.all([
      withFacts
        ? this.read(async (tx) => {
            const scan = this.heldScan(tx, 'Fact', scope.namespace, model, (m) => factVectorSearch(scope, m, []));
            const keywordHits = terms ? timed('keyword', () => keywordSearch(tx, scope, terms, depth)) : Promise.resolve(NO_HITS);
            const vectorHits = vectors
              .then(async (v) => {
                if (!v) return NO_HITS;
                const found = await timed('vector', () =>
                  this.vectorChannel(tx, scope.namespace, v, factVectorSearch(scope, v.model, v.vector), depth, scan, unfilteredFacts(scope)),
                );
                factScores(found.scores ?? null);
                return found.hits;
              })
              .finally(() => factScores(null));
            const [vector, keyword] = await Promise.all([vectorHits, keywordHits]);
            const seeds = fuseByReciprocalRank({ vector, keyword })
              .slice(0, GRAPH_SEEDS)
              .map((h) => h.id);
            const expanded = seeds.length > 0 ? await timed('graph', () => expandFromSeeds(tx, scope, seeds, depth, this.settings.graphOverGold)) : NO_HITS;
            return { vector, keyword, expanded };
          }).finally(() => factScores(null)) // the transaction failed before the vector statement ran: the names need not wait
        : { vector: NO_HITS, keyword: NO_HITS, expanded: NO_HITS },
      withFacts && terms
        ? vectors.then(async (v) => {
            // A namespace known to take the index path gets no scores: the names need not wait for them.
            const scores = v && withFacts && this.largeCount('Fact', scope.namespace, v.model) === undefined ? await scored : null;
            const similarTo = v ? { ...v, scores } : null;
            return timed('graph_names', () =>
              this.read((tx) => entityNameSearch(tx, scope, terms, MAX_NAME_MATCHED_ENTITIES, depth, this.settings.graphOverGold, similarTo)),
            );
          })
        : NO_HITS,
      withEvents
        ? this.read(async (tx) => {
            const scan = this.heldScan(tx, 'Event', scope.namespace, model, (m) => eventVectorSearch(eventScope, m, []));
            const keywordHits = terms
              ? timed('event_keyword', () => eventKeywordSearch(tx, eventScope, terms, depth, this.settings.speakerBoost))
              : Promise.resolve(NO_HITS);
            const vectorHits = vectors.then(async (v) =>
              v
                ? (
                    await timed('event_vector', () =>
                      this.vectorChannel(tx, scope.namespace, v, eventVectorSearch(eventScope, v.model, v.vector), depth, scan, eventScope.asOf === null),
                    )
                  ).hits
                : NO_HITS,
            );
            const [vector, keyword] = await Promise.all([vectorHits, keywordHits]);
            return { vector, keyword };
          })
        : { vector: NO_HITS, keyword: NO_HITS },
    ]);
    const graph = [...named, ...facts.expanded.filter((e) => !named.some((n) => n.id === e.id))];
    return { limit, lists: { vector: facts.vector, keyword: facts.keyword, graph, event_vector: events.vector, event_keyword: events.keyword } };
  }

  private validate(args: SearchMemoryArgs): { limit: number; query: string; scope: FactSearchScope; withFacts: boolean; withEvents: boolean } {
    const limit = args.limit ?? 10;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) throw invalid(`limit must be between 1 and ${MAX_SEARCH_LIMIT}`);
    const query = args.query.trim();
    if (query.length === 0) throw invalid('query must not be empty');
    if (query.length > MAX_QUERY_CHARS) throw invalid(`query is ${query.length} characters; the maximum is ${MAX_QUERY_CHARS}`);
    const f = args.filter ?? {};
    if (f.factTypes && f.factTypes.length > MAX_FACT_TYPES) throw invalid(`filter.factTypes takes at most ${MAX_FACT_TYPES} types`);
    if (f.minImportance !== null && f.minImportance !== undefined && !Number.isFinite(f.minImportance))
      throw invalid('filter.minImportance must be a finite number');
    if (args.asOf && Number.isNaN(args.asOf.getTime())) throw invalid('asOf is not a valid date-time');
    const kinds = f.kinds && f.kinds.length > 0 ? f.kinds : ['FACT', 'EVENT'];
    // A fact-only filter (type, entity, importance) asks for facts: raw events have none of these.
    const factOnly = Boolean((f.factTypes && f.factTypes.length > 0) || f.entityId || (f.minImportance !== null && f.minImportance !== undefined));
    return {
      limit,
      query,
      withFacts: kinds.includes('FACT'),
      withEvents: kinds.includes('EVENT') && !factOnly,
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

  /** Embeds the query once for both vector channels; null (channels skipped, loudly) when the embedder fails. */
  private async queryVector(query: string): Promise<QueryVector | null> {
    try {
      const embedder = await this.embedder();
      const [vector = []] = await embedder.embedQuery([query]);
      return vector.length > 0 ? { model: embedder.model, vector } : null;
    } catch (err) {
      // Keyword and graph still answer; the vector channels are skipped, loudly.
      this.warn(`searchMemory: embedding the query failed, vector channels skipped: ${err instanceof Error ? err.message : String(err)}`);
      return null;
    }
  }

  /**
   * Exact cosine within the namespace when it is small enough (cheap, exact, cannot starve),
   * counted in the same statement; otherwise the shared vector index, oversampling until `k` hits
   * of this namespace pass the filters, and exact cosine when even the largest k does not yield them.
   */
  private async vectorChannel(
    tx: CypherRunner,
    namespace: string,
    { model, vector }: QueryVector,
    search: VectorSearch,
    k: number,
    scan: Promise<{ model: string; found: HeldScan } | null>,
    /** The scope filters nothing but the namespace and what is current: its candidates are all the held vectors may keep. */
    unfiltered: boolean,
  ): Promise<{ hits: ScoredId[]; scores?: Record<string, number> }> {
    let n = this.largeCount(search.label, namespace, model);
    if (n === undefined) {
      const held = await scan;
      const found = held && held.model === model ? held.found : null;
      const space = heldSpace(search.label, model, namespace);
      if (found?.candidates && !this.fillFirst(space, found.candidates, search)) {
        const top = await this.held.topK(space, found.candidates, vector, k, (ids) => search.heldVectors(tx, ids), unfiltered);
        this.heldMetrics(top.read);
        return top;
      }
      if (found && !found.candidates) n = found.embedded;
      else {
        // Not held (disabled, another model, or being read for the next search): Neo4j's exact cosine.
        const counted = await search.countedExact(tx, k, this.settings.exactMaxFacts);
        if (counted.hits) return { hits: counted.hits, ...(counted.scores ? { scores: counted.scores } : {}) };
        n = counted.embedded;
      }
      this.rememberLargeCount(search.label, namespace, model, n);
    }
    const all = await search.countAll(tx);
    const inTx = <T>(work: (t: CypherRunner) => Promise<T>): Promise<T> => work(tx);
    return { hits: (await oversampledIndexSearch(inTx, search, k, { namespaceFacts: n, allFacts: all }, this.settings)).hits };
  }

  /**
   * True when many of a held namespace's candidates are new to this process (a large batch just
   * projected): reading their vectors would be one more statement, dependent on the scan, inside
   * this search (bench/scenarios, one question per fresh namespace: p50/p95 34/65 -> 71/171 ms
   * when every first search read them inline). Neo4j's exact cosine answers this search instead,
   * and the vectors are read apart for the next one (`fill`; a failed read is tried again by a
   * later search). A few new nodes (an active conversation) are read inline.
   */
  private fillFirst(space: string, candidates: readonly HeldCandidate[], search: VectorSearch): boolean {
    const missing = this.held.missing(space, candidates);
    if (missing.length <= Math.max(MAX_INLINE_VECTOR_READS, candidates.length / 10)) return false;
    this.fill(space, search);
    return true;
  }

  /** Reads the vectors of `space` this process does not hold, in a read transaction of its own; one at a time per space. */
  private fill(space: string, search: VectorSearch): void {
    if (this.filling.has(space)) return;
    this.filling.add(space);
    // Outside a plans refresh's context (its statements are sent with replan=force): a read like any search's.
    this.replanning
      .exit(() =>
        this.read(async (tx) => {
          const { candidates } = await search.heldScan(tx, this.settings.exactMaxFacts);
          const missing = candidates ? this.held.missing(space, candidates) : [];
          return missing.length > 0 ? search.heldVectors(tx, missing) : [];
        }),
      )
      .then((vectors) => {
        this.held.hold(space, vectors);
        this.heldMetrics(vectors.length);
      })
      .catch((err: unknown) => this.warn(`searchMemory: reading vectors to hold failed: ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => this.filling.delete(space));
  }

  /** `medallion_search_held_vector_bytes` now, and `read` more vectors read from Neo4j. */
  private heldMetrics(read: number): void {
    pipelineMetrics.searchHeldVectorBytes.set(this.held.bytes);
    if (read > 0) pipelineMetrics.searchHeldVectorReads.inc(read);
  }

  /** The embedder's model name without embedding anything; null when the embedder does not load. */
  private embedderModel(): Promise<string | null> {
    return this.embedder().then(
      (e) => e.model,
      () => null,
    );
  }

  /** Namespaces (label, model) whose vectors are being read in the background. */
  private readonly filling = new Set<string>();

  /**
   * The held-vectors scan of a vector channel (`heldVectorsBytes`), sent as soon as the embedder's
   * model is known, before the query is embedded; null when vectors are not held, the embedder is
   * unavailable, or the namespace is known to take the index path. Never rejects unobserved: a
   * failure surfaces where `vectorChannel` awaits it, as a failed statement would.
   */
  private heldScan(
    tx: CypherRunner,
    label: 'Fact' | 'Event',
    namespace: string,
    model: Promise<string | null>,
    search: (model: string) => VectorSearch,
  ): Promise<{ model: string; found: HeldScan } | null> {
    if (!this.held.enabled) return Promise.resolve(null);
    const scan = model.then(async (m) => {
      if (m === null || this.largeCount(label, namespace, m) !== undefined) return null;
      const space = heldSpace(label, m, namespace);
      // A namespace new to this process: Neo4j's exact cosine answers this search, as with nothing
      // held, and the namespace's vectors are read apart for the next one (`fill`).
      if (!this.held.holds(space)) {
        this.fill(space, search(m));
        return null;
      }
      return { model: m, found: await search(m).heldScan(tx, this.settings.exactMaxFacts) };
    });
    scan.catch(() => undefined);
    return scan;
  }

  private readonly counts = new Map<string, { n: number; at: number }>();
  private readonly roles = new Map<string, { names: Map<string, string>; at: number }>();
  /** Searches begun outside `WARM_UP_NAMESPACE`: `keepWarm` stops when it moves. */
  private realSearchesBegun = 0;

  /**
   * The names the namespace's user and assistant go by (`roleNames`), reused for `countTtlMs`:
   * one more read per namespace and period, and a name said just now is used by searches that
   * start after its reuse ends.
   */
  private async roleNames(namespace: string): Promise<Map<string, string>> {
    const hit = this.roles.get(namespace);
    if (hit && Date.now() - hit.at < this.settings.countTtlMs) return hit.names;
    const names = await this.read((tx) => roleNames(tx, namespace));
    if (this.roles.size >= 10_000) this.roles.clear();
    this.roles.set(namespace, { names, at: Date.now() });
    return names;
  }

  /**
   * Counting a large namespace's nodes is a scan of all of them, and the answer only picks the
   * index path, so a count above `exactMaxFacts` is reused for `countTtlMs` (a namespace does not
   * shrink below the threshold in seconds). Small counts are never reused: they come with the
   * exact search itself (`countedExact`), so a new namespace's first facts and events are
   * searchable at once.
   */
  private largeCount(label: 'Fact' | 'Event', namespace: string, model: string): number | undefined {
    const hit = this.counts.get(`${label}\u0000${model}\u0000${namespace}`);
    return hit && Date.now() - hit.at < this.settings.countTtlMs ? hit.n : undefined;
  }

  private rememberLargeCount(label: 'Fact' | 'Event', namespace: string, model: string, n: number): void {
    if (this.counts.size >= 10_000) this.counts.clear();
    this.counts.set(`${label}\u0000${model}\u0000${namespace}`, { n, at: Date.now() });
  }

  /**
   * Plans the search statements again, in the background, when the graph has moved since they were
   * last planned (any count of facts, events, entities or relationships by more than `threshold`,
   * and always on the first call of a process: a plan cached by an earlier run has unknown
   * statistics): the last real search this process served (so the plans of its parameters'
   * shapes), else the warm-up's, is run once with `CYPHER replan=force`, which puts the new plans
   * in the cache the searches read with `replan=skip`. Neo4j would otherwise plan a statement again
   * inside the first search that meets its statistics moved by 75 % two minutes after its last plan
   * (LocalNeo4j.java): 0.4-1.3 s per statement while an import is derived
   * (bench/results/search-under-load-*.json). True when it planned.
   */
  async refreshPlans(threshold = REPLAN_DIVERGENCE): Promise<boolean> {
    const now = await this.read(graphCounts);
    if (this.plannedOn && !countsDiverged(this.plannedOn, now, threshold)) return false;
    const args = this.lastAsked ?? WARM_UP_ARGS;
    await this.replanning.run('force', () => this.runEveryStatement(args));
    this.plannedOn = now;
    pipelineMetrics.searchReplans.inc();
    return true;
  }

  /**
   * `refreshPlans` every `everyMs` (once Neo4j answers: `startWhen`), as a stage of the process
   * that serves searches; the first round one period after the start, whose warm-up has just run
   * every search statement.
   */
  plansStage(everyMs: number, startWhen?: Promise<boolean>): Stage {
    let first = true;
    return {
      name: 'search-plans',
      wakeOn: [],
      pollMs: everyMs,
      ...(startWhen ? { startWhen } : {}),
      step: async () => {
        if (first) first = false;
        else await this.refreshPlans();
        return false; // at most one round per period, whatever it did
      },
    };
  }

  /** `force` while `refreshPlans` runs a search; unset: `skip` (replanInBackground) or Neo4j's default. */
  private readonly replanning = new AsyncLocalStorage<Replan>();
  /** The graph's counts when `refreshPlans` last planned; unset before its first run. */
  private plannedOn: GraphCounts | undefined;
  /** The last real search's arguments: what `refreshPlans` runs (in memory only, never logged). */
  private lastAsked: SearchMemoryArgs | undefined;

  private read<T>(work: (tx: CypherRunner) => Promise<T>): Promise<T> {
    const replan = this.replanning.getStore() ?? (this.settings.replanInBackground ? 'skip' : 'default');
    return readTransaction(this.driver, (tx) => work(withReplan(tx, replan)));
  }
}
