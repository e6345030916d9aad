import neo4j from 'neo4j-driver';
import { loadEmbedder } from '../../src/app/models';
import { graphCounts, Replan, withReplan } from '../../src/graph/cypher/replan';
import { DEFAULT_SEARCH_SETTINGS, lazyEmbedder, SearchService } from '../../src/graph/search.service';
import { anEvent } from '../builders/event-input';
import { scrape, total } from '../support/prometheus';
import { countNeo4jRoundTrips } from '../support/neo4j-round-trips';
import { testStores, uniqueNamespace } from '../support/stores';
import { createToken, eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`;
const SEARCH = `query($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q, limit: 5) { fact { statement } event { content } } }`;
const REPLANS = 'medallion_search_replans_total';

interface PlanNode {
  arguments: Record<string, unknown>;
  children: PlanNode[];
}

/**
 * Searches read their plans with `CYPHER replan=skip`, so none of them waits while Neo4j plans a
 * statement again (0.4-1.3 s each while an import was derived, bench/search-under-load); the API
 * plans them again itself, in the background, once the graph has grown (SearchService.refreshPlans).
 */
describe('Search plans are made again in the background, never inside a search', () => {
  let t: TestApp;
  const noise = uniqueNamespace('replan-noise');
  /** The conversation the first test ingests and the last one searches. */
  const chat = { ns: uniqueNamespace('replan-chat'), token: '' };

  beforeAll(async () => {
    // A period of one second, so the API's own round comes within the test (default 30 s).
    t = await startTestApp({ SEARCH_REPLAN_SECONDS: '1' });
  }, 120_000);
  afterAll(async () => {
    const s = t?.app.neo4j.session();
    await s?.run('MATCH (n:Entity {namespace: $ns}) DETACH DELETE n', { ns: noise });
    await s?.close();
    await t?.stop();
  });

  /** More than doubles the graph's entities, in a namespace no one searches. */
  const growEntities = async (): Promise<void> => {
    const s = t.app.neo4j.session();
    try {
      const { entities } = await s.executeRead(graphCounts);
      await s.run('UNWIND range(1, $n) AS i CREATE (:Entity {id: randomUUID(), namespace: $ns, name: "noise " + i, type: "concept"})', {
        n: Math.max(2_000, entities + 1),
        ns: noise,
      });
    } finally {
      await s.close();
    }
  };

  it('the API plans the search statements again on its own once the graph has grown, and searches answer', async () => {
    const token = (await createToken(t, [{ namespacePattern: 'replan-*', capabilities: ['INGEST', 'SEARCH'] }])).token;
    const ns = chat.ns;
    chat.token = token;
    const events = Array.from({ length: 6 }, (_, i) =>
      anEvent(ns)
        .inConversation('c', i + 1)
        .by('USER')
        .saying(`I use Tool${i} every day.`)
        .build(),
    );
    await gqlOk(t.url, token, INGEST, { input: events });
    const answers = async () =>
      (await gqlOk<{ searchMemory: unknown[] }>(t.url, token, SEARCH, { ns, q: 'which tools does the user use?' })).searchMemory.length > 0;
    await eventually(answers, 'the conversation to be searchable', 60_000);
    // The process's first round plans whatever the counts (a cached plan may be an earlier run's).
    await eventually(async () => total(await scrape(t.url), REPLANS) >= 1, 'the first background round', 30_000);
    const before = total(await scrape(t.url), REPLANS);
    await growEntities();
    await eventually(async () => total(await scrape(t.url), REPLANS) > before, 'a background replan after the graph grew', 30_000);
    expect(await answers()).toBe(true);
  });

  it("Neo4j's replan option: a plan read with skip stays as the statistics move, until force plans it again", async () => {
    // What the design rests on, checked on this Neo4j: a label of this test's own, with no index,
    // whose plan estimates its rows from the label's count.
    const label = `ReplanProbe${Date.now()}`;
    const session = t.app.neo4j.session();
    const estimate = async (replan: Replan): Promise<number> => {
      const r = await withReplan(session, replan).run(`EXPLAIN MATCH (n:${label}) WHERE n.k = $k RETURN count(n) AS n`, { k: 1 });
      const scan = (p: PlanNode): PlanNode => (p.children.length > 0 ? scan(p.children[0] as PlanNode) : p);
      return Number(scan(r.summary.plan as PlanNode).arguments.EstimatedRows);
    };
    try {
      const empty = await estimate('skip');
      await session.run(`UNWIND range(1, 5000) AS i CREATE (:${label} {k: i % 10})`);
      expect(await estimate('skip')).toBe(empty);
      const grown = await estimate('force');
      expect(grown).toBeGreaterThan(empty);
      expect(await estimate('skip')).toBe(grown);
    } finally {
      await session.run(`MATCH (n:${label}) DETACH DELETE n`);
      await session.close();
    }
  });

  it('searches send every statement with replan=skip; refreshPlans sends the same statements with force once the graph grew', async () => {
    // This test's service alone plans from here on, over a driver of its own whose statements are recorded.
    await t.app.stages.get('search-plans')?.stop();
    const stores = testStores().neo4j;
    const driver = neo4j.driver(stores.uri, neo4j.auth.basic(stores.user, stores.password));
    const { counter } = countNeo4jRoundTrips(driver);
    const embedder = lazyEmbedder(() => loadEmbedder(t.app.config, () => undefined));
    const search = new SearchService(driver, embedder, { ...DEFAULT_SEARCH_SETTINGS, replanInBackground: true });
    const auth = await t.app.services.tokens.authenticate(`Bearer ${chat.token}`);
    const options = (prefix: string) => counter.texts.every((q) => q.startsWith(prefix));
    const statements = (prefix: string) => new Set(counter.texts.filter((q) => q.startsWith(prefix)).map((q) => q.slice(prefix.length)));
    try {
      // A process's first round always plans: a cached plan may be an earlier run's.
      expect(await search.refreshPlans()).toBe(true);
      expect(await search.refreshPlans()).toBe(false);

      counter.reset();
      const { lists } = await search.channels(auth, { namespace: chat.ns, query: 'which tools does the user use?' });
      expect(Object.values(lists).some((l) => l.length > 0)).toBe(true);
      expect(counter.texts.length).toBeGreaterThan(3);
      expect(options('CYPHER replan=skip ')).toBe(true);
      const searched = statements('CYPHER replan=skip ');

      await growEntities();
      counter.reset();
      expect(await search.refreshPlans()).toBe(true);
      const forced = statements('CYPHER replan=force ');
      // Every statement the search ran (its namespace's shapes), planned again.
      expect([...searched].filter((q) => !forced.has(q))).toEqual([]);
      expect(await search.refreshPlans()).toBe(false);
    } finally {
      await embedder.close();
      await driver.close();
    }
  });
});
