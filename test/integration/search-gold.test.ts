import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { AuthContext } from '../../src/access/auth-context';
import { CypherRunner } from '../../src/graph/cypher/cypher-runner';
import { entityNameSearch, FactSearchScope, factVectorSearch, MAX_EXPANSION_DEGREE, QuerySimilarity } from '../../src/graph/cypher/search-facts';
import { toLuceneQuery } from '../../src/graph/search-ranking';
import { DEFAULT_SEARCH_SETTINGS, SearchMemoryArgs, SearchService } from '../../src/graph/search.service';
import { HashingEmbedder } from '../../src/models/offline/hashing-embedder';
import { countNeo4jRoundTrips } from '../support/neo4j-round-trips';
import { seedSilver, SeededSilver } from '../support/silver-seed';
import { uniqueNamespace } from '../support/stores';
import { gqlOk, startTestApp, TestApp } from '../support/test-app';
import { outboxDrained, runPromotion } from '../support/gold';

const SEARCH = `query($ns: String!, $q: String!, $asOf: DateTime) {
  searchMemory(namespace: $ns, query: $q, limit: 20, asOf: $asOf) { kind channels fact { id namespace statement } } }`;

interface Hit {
  kind: 'FACT' | 'EVENT';
  channels: string[];
  fact: { id: string; namespace: string; statement: string } | null;
}

/** "Bob" (two conversations) and "Bob Smith" (in one of them): promotion merges them by co-occurrence. */
const bobs = () => ({
  entities: [
    { key: 'bob', name: 'Bob', type: 'person' },
    { key: 'bobSmith', name: 'Bob Smith', type: 'person' },
    // Its facts are near "rock climbing", so the seeds of expansion (the best 5 vector/keyword hits) are not every fact.
    { key: 'radio', name: 'Radio Gorge', type: 'organization' },
  ],
  mentions: [
    { entity: 'bob', conversation: 'c1' },
    { entity: 'bob', conversation: 'c2' },
    { entity: 'bobSmith', conversation: 'c1' },
  ],
});

/** The facts each namespace gets beside the seed's: what was said about "Bob" and about "Bob Smith". */
interface Said {
  /** About "Bob", current. */
  climbing: string;
  /** About "Bob", true in 2019 only. */
  sailing: string;
  /** About "Bob", retired. */
  stamps: string;
  /** About "Bob Smith", current. */
  carpenter: string;
}

describe('searchMemory over Gold: the graph channel expands over resolved entities', () => {
  let t: TestApp;
  let db: Client;
  let auth: AuthContext;
  /** Promoted: "Bob" and "Bob Smith" are one Gold entity. */
  const ns = uniqueNamespace('sgold');
  /** The same Silver state, never promoted: no Gold entity (while `ns` has one with the same names). */
  const bare = uniqueNamespace('sgold-bare');
  const said: Record<string, Said> = {};
  const seeded: Record<string, SeededSilver> = {};

  const addFact = async (namespace: string, entityId: string, statement: string, opts: { from: string; to?: string; retired?: boolean }) => {
    const id = randomUUID();
    const run = (await db.query(`SELECT derivation_run_id::text AS id FROM silver.entities WHERE id = $1`, [entityId])).rows[0].id as string;
    await db.query(
      `INSERT INTO silver.facts (id, namespace, statement, fact_type, subject_entity_id, confidence, importance, valid_from, valid_to, retired_at, extraction_model, derivation_run_id)
       VALUES ($1, $2, $3, 'attribute', $4, 0.9, 0.5, $5, $6, $7, 'seed', $8)`,
      [id, namespace, statement, entityId, opts.from, opts.to ?? null, opts.retired ? new Date() : null, run],
    );
    await db.query(`INSERT INTO silver.fact_sources (fact_id, event_id, span_start, span_end, quote) VALUES ($1, $2, 0, 2, 'ok')`, [
      id,
      seeded[namespace]?.eventIds[0],
    ]);
    await db.query(`INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload) VALUES ($1, 'fact', $2, 'upsert', $3)`, [
      namespace,
      id,
      { id },
    ]);
    return id;
  };
  const settled = (namespace: string) => outboxDrained(db, namespace);
  /** Gives seeded facts the vectors derivation would (their statements, the hashing embedder) and projects them again. */
  const embedAndProject = async (namespace: string, ids: readonly string[], statements: readonly string[]): Promise<HashingEmbedder> => {
    const embedder = new HashingEmbedder();
    const vectors = await embedder.embed([...statements]);
    for (const [i, id] of ids.entries())
      await db.query(`UPDATE silver.facts SET embedding = $2, embedding_model = $3 WHERE id = $1`, [id, vectors[i], embedder.model]);
    await db.query(
      `INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload) SELECT $1, 'fact', id, 'upsert', jsonb_build_object('id', id) FROM unnest($2::text[]) id`,
      [namespace, ids],
    );
    await settled(namespace);
    return embedder;
  };
  const promoteAndWait = async (namespace: string) => expect((await runPromotion(t, namespace)).status).toBe('succeeded');
  const search = async (namespace: string, q: string, asOf: string | null = null) =>
    (await gqlOk<{ searchMemory: Hit[] }>(t.url, t.adminToken, SEARCH, { ns: namespace, q, asOf })).searchMemory;
  const hitOf = (hits: Hit[], factId: string) => hits.find((h) => h.fact?.id === factId);
  /** The graph channel's raw list (before the Postgres re-check) of a search service. */
  const graphList = async (service: SearchService, args: SearchMemoryArgs) => (await service.channels(auth, args)).lists.graph.map((h) => h.id);
  const service = (graphOverGold: boolean) => new SearchService(t.app.neo4j, async () => new HashingEmbedder(), { ...DEFAULT_SEARCH_SETTINGS, graphOverGold });
  const factIdsOf = async (namespace: string) =>
    new Set((await db.query<{ id: string }>(`SELECT id::text AS id FROM silver.facts WHERE namespace = $1`, [namespace])).rows.map((r) => r.id));

  beforeAll(async () => {
    t = await startTestApp({
      OFFLINE_EMBEDDER: 'hashing',
      DERIVE_MAX_WAIT_MS: '0',
      DERIVE_POLL_MS: '50',
      PROJECTOR_POLL_MS: '50',
      GOLD_PROMOTE_EVERY_SECONDS: '0',
    });
    db = new Client({ connectionString: t.databaseUrl });
    await db.connect();
    auth = await t.app.services.tokens.authenticate(`Bearer ${t.adminToken}`);
    for (const namespace of [ns, bare]) {
      const s = await seedSilver(t, namespace, bobs());
      seeded[namespace] = s;
      said[namespace] = {
        climbing: await addFact(namespace, s.ids.bob as string, 'Enjoys rock climbing at weekends', { from: '2021-01-01T00:00:00Z' }),
        sailing: await addFact(namespace, s.ids.bob as string, 'Went sailing every summer', { from: '2019-01-01T00:00:00Z', to: '2020-01-01T00:00:00Z' }),
        stamps: await addFact(namespace, s.ids.bob as string, 'Collects stamps', { from: '2021-01-01T00:00:00Z', retired: true }),
        carpenter: await addFact(namespace, s.ids.bobSmith as string, 'Works as a carpenter', { from: '2021-01-01T00:00:00Z' }),
      };
      for (const n of [1, 2, 3, 4]) await addFact(namespace, s.ids.radio as string, `Rock climbing chart number ${n}`, { from: '2021-01-01T00:00:00Z' });
    }
    await promoteAndWait(ns);
    await settled(ns);
    await settled(bare);
    // The premise: one live Gold entity in `ns` merged from both Silver entities, and none in `bare`.
    const { rows } = await db.query<{ namespace: string; members: number }>(
      `SELECT g.namespace, count(m.*)::int AS members FROM gold.entities g JOIN gold.entity_members m ON m.gold_entity_id = g.id AND m.removed_at IS NULL
        WHERE g.namespace = ANY($1) AND g.retired_at IS NULL GROUP BY g.id, g.namespace`,
      [[ns, bare]],
    );
    expect(rows).toEqual([{ namespace: ns, members: 2 }]);
  }, 240_000);
  afterAll(async () => {
    await db?.end();
    await t?.stop();
  });

  it('"Smith" finds what was said about "Bob" through the graph channel once promotion merged them', async () => {
    const hits = await search(ns, 'what does Smith like?');
    const climbing = hitOf(hits, said[ns]?.climbing as string);
    expect(climbing?.channels).toContain('graph');
    expect(hitOf(hits, said[ns]?.carpenter as string)?.channels).toContain('graph');
    // Not current, or retired: never, through Gold or otherwise.
    expect(hitOf(hits, said[ns]?.sailing as string)).toBeUndefined();
    expect(hitOf(hits, said[ns]?.stamps as string)).toBeUndefined();
    expect(hits.every((h) => h.fact === null || h.fact.namespace === ns)).toBe(true);
    // The same in the raw graph list, and the brief's own question reaches Bob's fact too.
    expect(await graphList(t.app.services.search, { namespace: ns, query: 'what does Smith like?' })).toContain(said[ns]?.climbing);
    expect(hitOf(await search(ns, 'what does Bob Smith like?'), said[ns]?.climbing as string)?.channels).toContain('graph');
  });

  it('respects asOf through Gold: the fact about "Bob" true in 2019 is reached as of 2019, the current one is not', async () => {
    const hits = await search(ns, 'what does Smith like?', '2019-06-01T00:00:00Z');
    expect(hitOf(hits, said[ns]?.sailing as string)?.channels).toContain('graph');
    expect(hitOf(hits, said[ns]?.climbing as string)).toBeUndefined();
    expect(hitOf(hits, said[ns]?.stamps as string)).toBeUndefined();
  });

  it('without Gold in the namespace (another namespace has a Gold "Bob Smith"), "Smith" reaches only "Bob Smith"', async () => {
    const hits = await search(bare, 'what does Smith like?');
    expect(hitOf(hits, said[bare]?.carpenter as string)?.channels).toContain('graph');
    expect(hitOf(hits, said[bare]?.climbing as string)?.channels ?? []).not.toContain('graph');
    // The raw list, before the Postgres re-check: only this namespace's facts, and not Bob's.
    const graph = await graphList(t.app.services.search, { namespace: bare, query: 'what does Smith like?' });
    const own = await factIdsOf(bare);
    expect(graph.length).toBeGreaterThan(0);
    expect(graph.every((id) => own.has(id))).toBe(true);
    expect(graph).not.toContain(said[bare]?.climbing);
    expect(graph).not.toContain(said[ns]?.climbing);
  });

  it('the other way round: the promoted namespace never gets the bare namespace’s facts', async () => {
    const own = await factIdsOf(ns);
    for (const q of ['what does Smith like?', 'rock climbing', 'Bob']) {
      const graph = await graphList(t.app.services.search, { namespace: ns, query: q });
      expect(graph.length).toBeGreaterThan(0);
      expect(graph.every((id) => own.has(id))).toBe(true);
    }
  });

  it('SEARCH_GRAPH_GOLD=false: the graph channel over Silver alone, as before Gold', async () => {
    const args = { namespace: ns, query: 'what does Smith like?' };
    expect(await graphList(service(true), args)).toContain(said[ns]?.climbing);
    const silverOnly = await graphList(service(false), args);
    expect(silverOnly).toContain(said[ns]?.carpenter);
    expect(silverOnly).not.toContain(said[ns]?.climbing);
  });

  it('expansion from seeds goes through Gold: a hit about "Bob" brings the facts about "Bob Smith"', async () => {
    const args = { namespace: ns, query: 'rock climbing' };
    // "rock climbing" names no entity: whatever the graph channel holds comes from expanding the seeds.
    expect(await graphList(service(true), args)).toContain(said[ns]?.carpenter);
    const silverOnly = await graphList(service(false), args);
    expect(silverOnly).not.toContain(said[ns]?.carpenter);
    expect(silverOnly.length).toBeGreaterThan(0); // Bob's own other facts
    // Without Gold in the namespace the expansion stays on "Bob".
    expect(await graphList(service(true), { namespace: bare, query: 'rock climbing' })).not.toContain(said[bare]?.carpenter);
  });

  it("orders a named entity's facts by their similarity to the question, not by id", async () => {
    // "Bob" has a fact for each topic: the name says whose facts, the question says which.
    const named = uniqueNamespace('sgold-named');
    const s = await seedSilver(t, named, bobs());
    seeded[named] = s;
    const topics = [
      'Plays the cello in an orchestra',
      'Grows tomatoes in the garden',
      'Repairs old bicycles',
      'Bakes sourdough bread',
      'Runs marathons in the spring',
    ];
    const ids: string[] = [];
    for (const statement of topics) ids.push(await addFact(named, s.ids.bob as string, statement, { from: '2021-01-01T00:00:00Z' }));
    // Embedded as derivation embeds them (the seeded facts carry no vector).
    await embedAndProject(named, ids, topics);
    for (const [i, topic] of topics.entries()) {
      const graph = await graphList(t.app.services.search, { namespace: named, query: `Bob ${topic.toLowerCase()}?` });
      expect({ topic, first: graph[0] }).toEqual({ topic, first: ids[i] });
    }
  });

  it("ranks a named entity's facts by the cosines the fact vector channel already computed: the same list, no vector read in the names statement", async () => {
    const named = uniqueNamespace('sgold-scores');
    const s = await seedSilver(t, named, bobs());
    seeded[named] = s;
    const topics = ['Plays the cello in an orchestra', 'Grows tomatoes in the garden', 'Repairs old bicycles', 'Bakes sourdough bread'];
    const ids: string[] = [];
    for (const statement of topics) ids.push(await addFact(named, s.ids.bob as string, statement, { from: '2021-01-01T00:00:00Z' }));
    // One fact of Bob's stays without a vector: it must still rank, at 0, as the cosine path ranks it.
    const unembedded = await addFact(named, s.ids.bob as string, 'Keeps bees on the roof', { from: '2021-01-01T00:00:00Z' });
    const embedder = await embedAndProject(named, ids, topics);
    const scope: FactSearchScope = { namespace: named, factTypes: null, entityId: null, minImportance: null, asOf: null, includeSuperseded: false };
    const [vector = []] = await embedder.embedQuery(['Bob repairs bicycles?']);
    const terms = toLuceneQuery('Bob repairs bicycles?') as string;
    const session = t.app.neo4j.session({ defaultAccessMode: 'READ' });
    try {
      const counted = await session.executeRead((tx) => factVectorSearch(scope, embedder.model, vector).countedExact(tx, 30, 1_500));
      // Every embedded current fact of the namespace is scored, the unembedded one is not.
      expect(Object.keys(counted.scores ?? {}).sort()).toEqual([...ids].sort());
      expect(counted.hits?.map((h) => h.id)).toEqual(
        Object.entries(counted.scores ?? {})
          .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
          .map(([id]) => id),
      );
      const profiled = async (similarTo: QuerySimilarity) => {
        const plans: unknown[] = [];
        const profiling = {
          run: async (query: string, params?: Record<string, unknown>) => {
            const res = await session.run(`PROFILE ${query}`, params);
            plans.push(res.summary.profile);
            return res;
          },
        } as unknown as CypherRunner;
        const list = await entityNameSearch(profiling, scope, terms, 10, 30, true, similarTo);
        const ops: Array<{ dbHits: number; details: string }> = [];
        const walk = (p: { dbHits: number; arguments?: { Details?: unknown }; children: unknown[] }) => {
          ops.push({ dbHits: Number(p.dbHits), details: String(p.arguments?.Details ?? '') });
          for (const c of p.children) walk(c as typeof p);
        };
        walk(plans[0] as Parameters<typeof walk>[0]);
        // The db hits of the operators that read a fact's vector (or its model and length): the work the lookup saves.
        return {
          list,
          vectorReads: ops.filter((o) => /embedding/.test(o.details)).reduce((a, o) => a + o.dbHits, 0),
          cosine: ops.some((o) => o.details.includes('cosine')),
        };
      };
      const computed = await profiled({ model: embedder.model, vector });
      const looked = await profiled({ model: embedder.model, vector, scores: counted.scores ?? null });
      expect(looked.list).toEqual(computed.list);
      expect(computed.list.map((h) => h.id)).toContain(unembedded);
      expect(computed.list[0]?.id).toBe(ids[2]);
      expect({ computedCosine: computed.cosine, lookedUpCosine: looked.cosine }).toEqual({ computedCosine: true, lookedUpCosine: false });
      expect(computed.vectorReads).toBeGreaterThan(0);
      expect(looked.vectorReads).toBe(0);
    } finally {
      await session.close();
    }
    // Through the service: the names statement it sends looks the scores up.
    const sent: string[] = [];
    const driver = new Proxy(t.app.neo4j, {
      get(target, prop, receiver) {
        if (prop !== 'session') return Reflect.get(target, prop, receiver) as unknown;
        return (...args: Parameters<typeof target.session>) => {
          const sess = target.session(...args);
          const executeRead = sess.executeRead.bind(sess);
          sess.executeRead = ((work: (tx: CypherRunner) => Promise<unknown>) =>
            executeRead((tx) =>
              work({
                run: (query: string, params?: Record<string, unknown>) => {
                  sent.push(query);
                  return tx.run(query, params);
                },
              } as CypherRunner),
            )) as typeof sess.executeRead;
          return sess;
        };
      },
    });
    const withScores = new SearchService(driver, async () => embedder, DEFAULT_SEARCH_SETTINGS);
    const graph = (await withScores.channels(auth, { namespace: named, query: 'Bob repairs bicycles?' })).lists.graph.map((h) => h.id);
    expect(graph[0]).toBe(ids[2]);
    const names = sent.filter((q) => q.includes('entity_name_ns_fulltext'));
    expect(names).toHaveLength(1);
    expect(names[0]).toContain('$scores[f.id]');
    expect(names[0]).not.toContain('cosine');
  });

  it("a name matching a hub (over 500 facts) brings none of the hub's facts, while a smaller namesake's still come", async () => {
    const hubNs = uniqueNamespace('sgold-hub');
    const s = await seedSilver(t, hubNs, bobs());
    seeded[hubNs] = s;
    const hubFacts = new Set<string>();
    for (let i = 0; i <= MAX_EXPANSION_DEGREE; i++)
      hubFacts.add(await addFact(hubNs, s.ids.bob as string, `Said thing number ${i}`, { from: '2021-01-01T00:00:00Z' }));
    const carpenter = await addFact(hubNs, s.ids.bobSmith as string, 'Works as a carpenter', { from: '2021-01-01T00:00:00Z' });
    await settled(hubNs);
    // "Bob" matches the hub "Bob" and "Bob Smith"; "thing" gives the hub's facts as seeds, which are not expanded either.
    const graph = await graphList(service(false), { namespace: hubNs, query: 'Bob thing' });
    expect(graph).toContain(carpenter);
    expect(graph.filter((id) => hubFacts.has(id))).toEqual([]);
  }, 120_000);

  it('costs no extra round trip: 3 Neo4j transactions and 6 statements, as without Gold', async () => {
    // Embedder loaded, and each namespace's role names read (once per namespace and 30 s: "Maya" in a question is the user who said "I'm Maya").
    for (const namespace of [ns, bare]) await search(namespace, 'rock climbing');
    const { counter, restore } = countNeo4jRoundTrips(t.app.neo4j);
    try {
      // A query with keyword hits, so the expansion from seeds runs too (no seeds, no expansion statement).
      for (const namespace of [ns, bare]) {
        counter.reset();
        const hits = await search(namespace, 'rock climbing');
        expect(hits.some((h) => h.channels.includes('graph'))).toBe(true);
        expect({ namespace, transactions: counter.transactions, statements: counter.statements }).toEqual({ namespace, transactions: 3, statements: 6 });
      }
    } finally {
      restore();
    }
  });
});
