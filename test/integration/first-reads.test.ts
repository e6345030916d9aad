import { Client } from 'pg';
import { outboxDrained, runPromotion } from '../support/gold';
import { eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';
import { testStores, uniqueNamespace } from '../support/stores';
import { createNeo4jDriver } from '../../src/platform/neo4j/neo4j-client';

/** The reads a person or an agent starts with, as the README shows them (literals, not variables). */
const readsOf = (ns: string, factId: string) => [
  `query { provenance(factId: "${factId}") { steps { via quote event { id content } } } }`,
  `query { graphEntities(where: { namespace: { eq: "${ns}" }, name: { eq: "Bob" } }) { name facts(limit: 10) { statement derivedFrom { occurredAt } } } }`,
  `query { about(namespace: "${ns}", name: "bob") { name aliases mergedFrom { name } facts { statement confidence sources { event { id } } } } }`,
  `query { conversation(namespace: "${ns}", conversationId: "c1") { id content occurredAt } }`,
];

/**
 * A fresh Neo4j plans each statement on first use in a cold JVM: the first provenance after a start
 * took 2-9 s, the first graphEntities and about 1-3 s, the next ones a tenth of that. The start runs
 * their statements once over the warm-up rows (graph-warm-up.ts, explore.warm-up.ts), so the first
 * real ones meet plans the start made (docs/explore.md "First reads").
 */
describe('the first reads after a start', () => {
  let seeded: TestApp;
  const ns = uniqueNamespace('first-reads');
  let factId = '';

  beforeAll(async () => {
    seeded = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_QUIET_MS: '0', GOLD_PROMOTE_EVERY_SECONDS: '0' });
    const said = ['Bob Smith is my manager', 'Bob lives in Berlin', 'Bob plays the cello'];
    await gqlOk(seeded.url, seeded.adminToken, `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`, {
      input: said.map((content, i) => ({
        namespace: ns,
        source: 'chat',
        sourceEventId: `m-${i}`,
        kind: 'MESSAGE',
        role: 'USER',
        content,
        conversationId: 'c1',
        sequenceNum: i + 1,
      })),
    });
    factId = await eventually(async () => {
      const r = await gqlOk<{ pipelineStatus: { pending: number }; facts: { edges: Array<{ node: { id: string; statement: string } }> } }>(
        seeded.url,
        seeded.adminToken,
        `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } facts(namespace: $ns) { edges { node { id statement } } } }`,
        { ns },
      );
      return r.pipelineStatus.pending === 0 ? r.facts.edges.find((e) => e.node.statement.includes('Berlin'))?.node.id : undefined;
    }, 'the messages to be derived');
    expect((await runPromotion(seeded, ns)).status).toBe('succeeded');
    const db = new Client({ connectionString: seeded.databaseUrl });
    await db.connect();
    await outboxDrained(db, ns).finally(() => db.end());
    await seeded.app.stop();
  });
  afterAll(() => seeded?.stop().catch(() => undefined));

  it('provenance, graphEntities, about and conversation run on plans the start made: Neo4j plans nothing for them', async () => {
    /** Empties Neo4j's query caches and says how many plans they held. */
    const driver = createNeo4jDriver(testStores().neo4j);
    const clearPlans = async (): Promise<number> => {
      const res = await driver.executeQuery('CALL db.clearQueryCaches()');
      const message = String(res.records[0]?.get(0) ?? '');
      return /already empty/.test(message) ? 0 : Number(/of (\d+) quer/.exec(message)?.[1] ?? NaN);
    };
    const restart = () => startTestApp({ OFFLINE_EMBEDDER: 'hashing' }, { api: true, worker: false }, seeded);
    // What a start plans (a Neo4j of its own, the tests' is shared: counted on an empty cache).
    await clearPlans().catch(() => undefined);
    const first = await restart();
    await first.app.stop();
    const startPlans = await clearPlans();
    expect(startPlans).toBeGreaterThan(10);

    const t = await restart();
    try {
      for (const query of readsOf(ns, factId)) {
        const data = await gqlOk<Record<string, unknown>>(t.url, t.adminToken, query);
        // Each read finds what the namespace holds.
        expect(JSON.stringify(data)).toMatch(/Bob|Berlin/);
      }
      expect(await clearPlans()).toBe(startPlans);
    } finally {
      await t.stop();
      await driver.close();
    }
  });
});
