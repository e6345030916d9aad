import { Client } from 'pg';
import { AuthContext } from '../../src/access/auth-context';
import { ScoredId } from '../../src/graph/cypher/search-channel';
import { DEFAULT_SEARCH_SETTINGS, SearchService } from '../../src/graph/search.service';
import { HashingEmbedder } from '../../src/models/offline/hashing-embedder';
import { anEvent } from '../builders/event-input';
import { scrape, total } from '../support/prometheus';
import { uniqueNamespace } from '../support/stores';
import { eventually, gqlOk, startTestApp, TestApp, settledNamespace } from '../support/test-app';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { event { id } } }`;
const ADD = `mutation($input: OverlayInput!) { addOverlay(input: $input) { id } }`;
const SEARCH = `query($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q, limit: 20) { kind channels event { id } fact { id } } }`;

/**
 * The exact vector channels over vectors held in the API's process (graph/held-vectors.ts) answer
 * what Neo4j's own exact cosine answers — the same hits in the same order, the same scores — on a
 * namespace that changes under them: new facts and turns written after the vectors were first held,
 * and a turn whose text a redaction changed (its vector re-embedded from the composed text).
 */
describe('vectors held in the API process', () => {
  let t: TestApp;
  let pg: Client;
  let auth: AuthContext;
  const ns = uniqueNamespace('held-vectors');
  const embedder = async () => new HashingEmbedder();
  /** Held vectors, as the service's default. */
  const held = () => heldService;
  let heldService: SearchService;
  /** The cosine computed by Neo4j over every candidate (nothing held). */
  let inNeo4j: SearchService;

  const settled = () => settledNamespace(t, pg, ns);
  const ingest = async (lines: string[], from: number): Promise<string[]> =>
    (
      await gqlOk<{ ingestEvents: Array<{ event: { id: string } }> }>(t.url, t.adminToken, INGEST, {
        input: lines.map((content, i) =>
          anEvent(ns)
            .inConversation('c1', from + i)
            .by(i % 2 === 0 ? 'USER' : 'ASSISTANT')
            .saying(content)
            .at(`2026-05-0${1 + ((from + i) % 9)}T09:00:00.000Z`)
            .build(),
        ),
      })
    ).ingestEvents.map((r) => r.event.id);

  /** The two vector lists of both services for `query`: [id, score] in order. */
  const vectorLists = async (query: string) => {
    const shape = (l: ScoredId[]) => l.map((h) => [h.id, h.score] as const);
    const [a, b] = await Promise.all([held().channels(auth, { namespace: ns, query }), inNeo4j.channels(auth, { namespace: ns, query })]);
    return {
      held: { vector: shape(a.lists.vector), event_vector: shape(a.lists.event_vector) },
      neo4j: { vector: shape(b.lists.vector), event_vector: shape(b.lists.event_vector) },
    };
  };
  /**
   * The same hits in the same order, each score within 1e-5 (Neo4j computes the cosine in 32-bit
   * floats, this process in 64-bit: they differ in the 7th place, so two hits closer than that may
   * swap, and one at the k-th place may be another of the same score).
   */
  const expectSameList = (held: ReadonlyArray<readonly [string, number]>, neo4j: ReadonlyArray<readonly [string, number]>) => {
    expect(held.length).toBe(neo4j.length);
    held.forEach(([id, score], i) => {
      const [otherId, otherScore] = neo4j[i] ?? ['', NaN];
      expect(Math.abs(score - otherScore)).toBeLessThan(1e-5);
      if (id !== otherId) expect(Math.abs(score - (neo4j.find(([x]) => x === id)?.[1] ?? score))).toBeLessThan(1e-5);
    });
  };
  const expectSame = (lists: Awaited<ReturnType<typeof vectorLists>>) => {
    for (const channel of ['vector', 'event_vector'] as const) expectSameList(lists.held[channel], lists.neo4j[channel]);
  };

  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50' });
    pg = new Client({ connectionString: t.databaseUrl });
    await pg.connect();
    auth = await t.app.services.tokens.authenticate(`Bearer ${t.adminToken}`);
    heldService = new SearchService(t.app.neo4j, embedder, DEFAULT_SEARCH_SETTINGS);
    inNeo4j = new SearchService(t.app.neo4j, embedder, { ...DEFAULT_SEARCH_SETTINGS, heldVectorsBytes: 0 });
    await ingest(
      [
        'I adopted a grey cat called Miso last spring',
        'That is lovely, how is Miso settling in?',
        'I moved to Lisbon for a new job at a bakery',
        'Lisbon is beautiful in May.',
        'My sister Ana plays the cello in an orchestra',
        'Does she perform often?',
      ],
      1,
    );
    await settled();
    // A namespace's first search is answered by Neo4j while its vectors are read apart (the third
    // test): the comparisons below run once the service holds them.
    const reads = async () => total(await scrape(t.url), 'medallion_search_held_vector_reads_total');
    const before = await reads();
    await heldService.channels(auth, { namespace: ns, query: 'where does the user live?' });
    await eventually(async () => (await reads()) > before, 'the namespace held', 10_000);
  }, 240_000);
  afterAll(async () => {
    await pg?.end();
    await t?.stop();
  });

  it('scores what Neo4j scores, and sees facts and turns written after it first held the namespace', async () => {
    for (const q of ['where does the user live?', 'what pet does the user have?', 'who plays music?']) {
      const lists = await vectorLists(q);
      expect(lists.held.vector.length).toBeGreaterThan(0);
      expect(lists.held.event_vector.length).toBeGreaterThan(0);
      expectSame(lists);
    }
    const [later] = await ingest(['I started learning the trumpet at a jazz school'], 7);
    await settled();
    const lists = await vectorLists('which instrument is the user learning?');
    expectSame(lists);
    expect(lists.held.event_vector.map(([id]) => id)).toContain(later);
    // The service's own search over HTTP (held vectors, its default) finds the new turn by its vector.
    const http = await gqlOk<{ searchMemory: Array<{ kind: string; channels: string[]; event: { id: string } | null }> }>(t.url, t.adminToken, SEARCH, {
      ns,
      q: 'which instrument is the user learning?',
    });
    expect(http.searchMemory.some((h) => h.channels.includes('event_vector') || h.channels.includes('vector'))).toBe(true);
    // An operator sees what the service holds, and what it read from Neo4j.
    const metrics = await scrape(t.url);
    expect(total(metrics, 'medallion_search_held_vector_bytes')).toBeGreaterThan(0);
    expect(total(metrics, 'medallion_search_held_vector_reads_total')).toBeGreaterThan(0);
  });

  it('re-reads a vector whose text a redaction changed: the hidden words no longer score it', async () => {
    const [secret] = await ingest(['My locker code at the gym is QUIXOTIC-PELICAN-77'], 8);
    await settled();
    const q = 'QUIXOTIC PELICAN locker code';
    const before = await vectorLists(q);
    expectSame(before);
    expect(before.held.event_vector[0]?.[0]).toBe(secret);
    const scoreBefore = before.held.event_vector[0]?.[1] as number;

    await gqlOk(t.url, t.adminToken, ADD, { input: { eventId: secret, kind: 'REDACTION', exact: 'QUIXOTIC-PELICAN-77' } });
    await settled();
    await eventually(
      async () =>
        (await t.app.neo4j.executeQuery(`MATCH (e:Event {id: $id}) RETURN e.content AS c`, { id: secret })).records[0]?.get('c') !==
        'My locker code at the gym is QUIXOTIC-PELICAN-77',
      'the redacted turn projected',
      30_000,
    );
    const after = await vectorLists(q);
    expectSame(after);
    const redacted = after.held.event_vector.find(([id]) => id === secret);
    expect(redacted === undefined || (redacted[1] as number) < scoreBefore).toBe(true);
  });
  it('answers a namespace new to the process from Neo4j once, reads its vectors apart, and holds them for the next search', async () => {
    const fresh = uniqueNamespace('held-fill');
    await gqlOk(t.url, t.adminToken, INGEST, {
      input: Array.from({ length: 40 }, (_, i) =>
        anEvent(fresh)
          .inConversation('c1', i + 1)
          .by(i % 2 === 0 ? 'USER' : 'ASSISTANT')
          .saying(`Day ${i + 1} of the walking tour went through village number ${i + 1}`)
          .at('2026-05-01T09:00:00.000Z')
          .build(),
      ),
    });
    await settledNamespace(t, pg, fresh);
    const service = new SearchService(t.app.neo4j, embedder, DEFAULT_SEARCH_SETTINGS);
    const reads = async () => total(await scrape(t.url), 'medallion_search_held_vector_reads_total');
    const lists = async () => {
      const [a, b] = await Promise.all([
        service.channels(auth, { namespace: fresh, query: 'which village on day 12?' }),
        inNeo4j.channels(auth, { namespace: fresh, query: 'which village on day 12?' }),
      ]);
      const shape = (l: ScoredId[]) => l.map((h) => [h.id, h.score] as const);
      expectSameList(shape(a.lists.event_vector), shape(b.lists.event_vector));
      expect(a.lists.event_vector.length).toBeGreaterThan(0);
    };
    const before = await reads();
    await lists();
    // The 40 turns' vectors are read in a transaction of their own, after the search answered.
    await eventually(async () => (await reads()) >= before + 40, 'the vectors held', 10_000);
    const held = await reads();
    await lists();
    expect(await reads()).toBe(held);
  });
});
