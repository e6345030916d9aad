import { Client } from 'pg';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { eventually, gqlOk, startTestApp, TestApp, settledNamespace } from '../support/test-app';
import { collect, wsClient } from '../support/ws-client';

/**
 * Every path that hands fact text to a caller reads it through the one FactReader (where human
 * overlays and redactions will apply). The app runs with a view that marks each statement and
 * quote it shows; a path that read text any other way (straight from SQL, or from Neo4j's copy)
 * would return it unmarked.
 */
const SHOWN = '[shown] ';
const QUOTED = '[quoted] ';
const shown = (s: unknown) => typeof s === 'string' && s.startsWith(SHOWN) && !s.slice(SHOWN.length).startsWith(SHOWN);
const quoted = (s: unknown) => s === null || (typeof s === 'string' && s.startsWith(QUOTED));

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status event { id } } }`;
const FACT_FIELDS = `id statement sources { quote event { id } }`;

describe('FactReader: one reader for every fact text a caller receives', () => {
  let t: TestApp;
  let pg: Client;
  const ns = uniqueNamespace('reader');

  const settled = () => settledNamespace(t, pg, ns);

  beforeAll(async () => {
    t = await startTestApp(
      { OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50', EXPLORE_TIMEOUT_MS: '120000' },
      { api: true, worker: true, factTextView: (text, site) => (site.field === 'quote' ? QUOTED : SHOWN) + text },
    );
    pg = new Client({ connectionString: t.databaseUrl });
    await pg.connect();
  }, 240_000);
  afterAll(async () => {
    await pg?.end();
    await t?.stop();
  });

  it('marks statements and quotes on every path: reads, nested fields, search, provenance, changes, exploration and subscriptions', async () => {
    const ws = wsClient(t.url, t.adminToken);
    const added = collect<{ factAdded: { statement: string } }>(ws, `subscription($ns: String!) { factAdded(namespace: $ns) { statement } }`, { ns });
    const superseded = collect<{ factSuperseded: { old: { statement: string }; new: { statement: string } } }>(
      ws,
      `subscription($ns: String!) { factSuperseded(namespace: $ns) { old { statement } new { statement } } }`,
      { ns },
    );
    await Promise.all([added.ready, superseded.ready]);
    await new Promise((r) => setTimeout(r, 300));
    try {
      const [first] = (
        await gqlOk<{ ingestEvents: Array<{ event: { id: string } }> }>(t.url, t.adminToken, INGEST, {
          input: [anEvent(ns).inConversation('c1', 1).by('USER').saying('I use vim for everything').at('2026-01-10T09:00:00.000Z').build()],
        })
      ).ingestEvents;
      await settled();
      await gqlOk(t.url, t.adminToken, INGEST, {
        input: [anEvent(ns).inConversation('c1', 2).by('USER').saying('I switched to neovim last week').at('2026-03-08T09:00:00.000Z').build()],
      });
      await settled();
      const texts: unknown[] = [];
      const quotes: unknown[] = [];

      // Listings, lookups and every nested field that returns facts.
      const listed = await gqlOk<{ facts: { edges: Array<{ node: { id: string; statement: string; sources: Array<{ quote: string | null }> } }> } }>(
        t.url,
        t.adminToken,
        `query($ns: String!) { facts(namespace: $ns, includeRetired: true, asOf: "2026-02-01T00:00:00Z") { edges { node { ${FACT_FIELDS}
           supersededBy { statement } subject { facts { statement } } } } } }`,
        { ns },
      );
      const vim = listed.facts.edges.map((e) => e.node).find((f) => /vim/i.test(f.statement));
      expect(vim).toBeDefined();
      const factId = (vim as { id: string }).id;
      walk(listed, texts, quotes);
      const one = await gqlOk(
        t.url,
        t.adminToken,
        `query($id: ID!, $e: ID!) { fact(id: $id) { ${FACT_FIELDS} supersedes { statement } decisions { statement candidates { statement } } }
           event(id: $e) { facts { statement } } }`,
        { id: factId, e: first?.event.id },
      );
      walk(one, texts, quotes);
      // Search hydration.
      walk(
        await gqlOk(t.url, t.adminToken, `query($ns: String!) { searchMemory(namespace: $ns, query: "vim editor") { fact { statement } } }`, { ns }),
        texts,
        quotes,
      );
      // Provenance traversals and the change log.
      walk(
        await gqlOk(
          t.url,
          t.adminToken,
          `query($id: ID!, $e: ID!, $ns: String!) {
             provenance(factId: $id) { fact { statement } steps { quote fact { statement } } }
             derivedFrom(eventId: $e) { facts { quote fact { statement } } }
             changes(namespace: $ns, since: "2000-01-01T00:00:00Z") { fact { statement } } }`,
          { id: factId, e: first?.event.id, ns },
        ),
        texts,
        quotes,
      );
      // Graph exploration: Neo4j finds the nodes (and filters on its copy of the text), Postgres serves the text.
      const explored = await gqlOk<{ graphFacts: Array<{ statement: string; derivedFromConnection: { edges: Array<{ properties: { quote: string } }> } }> }>(
        t.url,
        t.adminToken,
        `query($ns: String!) {
           graphFacts(where: { namespace: { eq: $ns }, statement: { contains: "Vim" } }) {
             statement supersededBy { statement } derivedFromConnection { edges { properties { quote } } } }
           graphEvents(where: { namespace: { eq: $ns } }) { factsConnection { edges { properties { spanStart quote } node { statement } } } } }`,
        { ns },
      );
      expect(explored.graphFacts.length).toBeGreaterThan(0);
      expect(explored.graphFacts[0]?.derivedFromConnection.edges[0]?.properties.quote).toBe(`${QUOTED}I use vim for everything`);
      walk(explored, texts, quotes);
      // Subscriptions.
      await eventually(async () => added.received.next.length > 0 && superseded.received.next.length > 0, 'factAdded and factSuperseded').catch(
        (err: Error) => {
          throw new Error(`${err.message}: received ${JSON.stringify({ added: added.received, superseded: superseded.received })}`);
        },
      );
      walk(added.received.next, texts, quotes);
      walk(superseded.received.next, texts, quotes);
      expect(added.received.errors).toEqual([]);
      expect(superseded.received.errors).toEqual([]);

      expect(texts.length).toBeGreaterThan(15);
      expect(texts.filter((s) => !shown(s))).toEqual([]);
      expect(quotes.filter((q) => q !== null).length).toBeGreaterThan(3);
      expect(quotes.filter((q) => !quoted(q))).toEqual([]);
    } finally {
      added.stop();
      superseded.stop();
      await ws.dispose();
    }
  }, 180_000);
});

/** Every `statement` and `quote` anywhere in a response. */
function walk(value: unknown, texts: unknown[], quotes: unknown[]): void {
  if (Array.isArray(value)) return value.forEach((v) => walk(v, texts, quotes));
  if (value === null || typeof value !== 'object') return;
  for (const [k, v] of Object.entries(value)) {
    if (k === 'statement') texts.push(v);
    else if (k === 'quote') quotes.push(v);
    else walk(v, texts, quotes);
  }
}
