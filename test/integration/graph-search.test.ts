import { Client } from 'pg';
import { createLoaders } from '../../src/scope/request-scope';
import { searchLoaders } from '../../src/graph/evidence';
import { DEFAULT_SEARCH_SETTINGS, SearchService } from '../../src/graph/search.service';
import { applyNeo4jSchema } from '../../src/platform/neo4j/neo4j-client';
import { HashingEmbedder } from '../../src/models/offline/hashing-embedder';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`;
const PENDING = `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`;
const SEARCH = `query($ns: String!, $q: String!, $limit: Int, $asOf: DateTime, $filter: SearchFilter) {
  searchMemory(namespace: $ns, query: $q, limit: $limit, asOf: $asOf, filter: $filter) {
    kind score channels
    fact { id namespace statement factType validTo retiredAt importance
           sources { quote event { id content } } supersedes { statement } supersededBy { statement } }
    event { id namespace content }
    evidence { id content }
  }
}`;

/** For long result lists: what a page of 100 may select within the cost limit (nested lists are priced per hit). */
const SEARCH_LIGHT = `query($ns: String!, $q: String!, $limit: Int, $asOf: DateTime, $filter: SearchFilter) {
  searchMemory(namespace: $ns, query: $q, limit: $limit, asOf: $asOf, filter: $filter) {
    kind score channels
    fact { id namespace statement factType validTo retiredAt importance }
    event { id namespace content }
  }
}`;

interface AnyHit {
  kind: 'FACT' | 'EVENT';
  score: number;
  channels: string[];
  fact: Hit['fact'] | null;
  event: { id: string; namespace: string; content: string } | null;
  evidence: Array<{ id: string; content: string }>;
}

/** A FACT hit (what the fact-only searches below return). */
interface Hit {
  score: number;
  channels: string[];
  fact: {
    id: string;
    namespace: string;
    statement: string;
    factType: string;
    validTo: string | null;
    importance: number;
    sources: Array<{ quote: string | null; event: { id: string; content: string } }>;
    supersedes: Array<{ statement: string }>;
    supersededBy: { statement: string } | null;
  };
}

const NEIGHBOURS = 320;
const isVim = (s: string) => /\bvim\b/i.test(s) && !/neovim/i.test(s);

describe('searchMemory: hybrid (vector + keyword + graph) search over the projection', () => {
  let t: TestApp;
  let pg: Client;
  const ns = uniqueNamespace('search');
  const noisy = uniqueNamespace('search-noisy');
  let token: string;

  const ingest = (events: unknown[]) => gqlOk(t.url, token, INGEST, { input: events });
  const settled = async (namespace: string) => {
    await eventually(
      async () => (await gqlOk<{ pipelineStatus: { pending: number } }>(t.url, token, PENDING, { ns: namespace })).pipelineStatus.pending === 0,
      `derivation in ${namespace}`,
      120_000,
    );
    await eventually(
      async () => {
        const { rows } = await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM ops.outbox WHERE processed_at IS NULL AND namespace = $1`, [namespace]);
        return rows[0]?.n === 0;
      },
      `the outbox of ${namespace} to drain`,
      60_000,
    );
  };
  const searchAll = async (vars: Record<string, unknown>, as = token): Promise<AnyHit[]> =>
    (await gqlOk<{ searchMemory: AnyHit[] }>(t.url, as, Number(vars.limit ?? 10) > 10 ? SEARCH_LIGHT : SEARCH, { ns, ...vars })).searchMemory;
  // Fact semantics (filters, supersession, asOf) are checked on fact hits alone; the event channel has its own tests.
  const search = async (vars: Record<string, unknown>, as = token): Promise<Hit[]> => {
    const filter = { kinds: ['FACT'], ...((vars.filter as Record<string, unknown> | undefined) ?? {}) };
    const hits = await searchAll({ ...vars, filter }, as);
    expect(hits.every((h) => h.kind === 'FACT' && h.fact !== null)).toBe(true);
    return hits as unknown as Hit[];
  };

  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50', PROJECTOR_POLL_MS: '50' });
    pg = new Client({ connectionString: t.databaseUrl });
    await pg.connect();
    token = (await createToken(t, [{ namespacePattern: 'search-*', capabilities: ['INGEST', 'READ', 'LIST', 'SEARCH'] }])).token;
    await ingest([anEvent(ns).inConversation('c1', 1).by('USER').saying('I use vim for everything').at('2026-01-10T09:00:00.000Z').build()]);
    await settled(ns);
    await ingest([
      anEvent(ns).inConversation('c1', 2).by('USER').saying('I switched to neovim last week').at('2026-03-08T09:00:00.000Z').build(),
      anEvent(ns).inConversation('c1', 3).by('USER').saying('I live in Berlin').at('2026-03-09T09:00:00.000Z').build(),
      anEvent(ns).inConversation('c1', 4).by('USER').saying('We plan to migrate to PostgreSQL next month').at('2026-03-10T09:00:00.000Z').build(),
      anEvent(ns).inConversation('c1', 5).by('USER').saying('My favorite language is TypeScript').at('2026-03-11T09:00:00.000Z').build(),
      anEvent(ns).inConversation('c1', 6).by('USER').saying('I work at Acme with Bob').at('2026-03-12T09:00:00.000Z').build(),
    ]);
    // A big, noisy neighbour: hundreds of facts that look like the caller's editor facts.
    const noise = Array.from({ length: NEIGHBOURS }, (_, i) =>
      anEvent(noisy).inConversation(`n${i}`, 1).by('USER').saying(`Bob${i} uses neovim as his editor`).at('2026-03-10T09:00:00.000Z').build(),
    );
    await ingest(noise);
    await settled(ns);
    await settled(noisy);
  }, 240_000);
  afterAll(async () => {
    await pg?.end();
    await t?.stop();
  });

  it('projects embeddings onto (:Fact) nodes', async () => {
    const res = await t.app.neo4j.executeQuery(
      `MATCH (f:Fact) WHERE f.namespace = $ns RETURN f.statement AS s, size(f.embedding) AS size, f.embeddingDims AS dims, f.embeddingModel AS model`,
      { ns },
    );
    expect(res.records.length).toBeGreaterThanOrEqual(5);
    for (const r of res.records) expect([r.get('size'), r.get('dims'), r.get('model')]).toEqual([384, 384, 'hashing-ngrams-384@1']);
  });

  it('still finds facts and turns projected with 64-bit vectors by an earlier version, once the schema upgrade rewrites them', async () => {
    const old = uniqueNamespace('search-old-vectors');
    await ingest([anEvent(old).inConversation('c', 1).by('USER').saying('I keep my bicycle in the garden shed').at('2026-03-01T09:00:00.000Z').build()]);
    await settled(old);
    const vectorChannels = async () =>
      (await gqlOk<{ searchMemory: AnyHit[] }>(t.url, token, SEARCH, { ns: old, q: 'where is the bicycle kept?' })).searchMemory
        .flatMap((h) => h.channels)
        .filter((c) => c === 'vector' || c === 'event_vector')
        .sort();
    // The exact channels with the cosine computed in Neo4j (no vectors held in the API's process).
    const auth = await t.app.services.tokens.authenticate(`Bearer ${token}`);
    const inNeo4j = new SearchService(t.app.neo4j, async () => new HashingEmbedder(), { ...DEFAULT_SEARCH_SETTINGS, heldVectorsBytes: 0 });
    const neo4jChannels = async () => {
      const { lists } = await inNeo4j.channels(auth, { namespace: old, query: 'where is the bicycle kept?' });
      return (['event_vector', 'vector'] as const).filter((c) => lists[c].length > 0);
    };
    expect(await vectorChannels()).toEqual(['event_vector', 'vector']);
    expect(await neo4jChannels()).toEqual(['event_vector', 'vector']);
    // As an earlier version stored them: a list of 64-bit floats, and no embeddingDims.
    await t.app.neo4j.executeQuery(
      `MATCH (n) WHERE (n:Fact OR n:Event) AND n.namespace = $ns SET n.embedding = [x IN n.embedding | toFloat(x)] REMOVE n.embeddingDims`,
      { ns: old },
    );
    // Neo4j's exact statement filters on embeddingDims; vectors held in the API's process are read as any list of numbers.
    expect(await neo4jChannels()).toEqual([]);
    expect(await vectorChannels()).toEqual(['event_vector', 'vector']);
    await applyNeo4jSchema(t.app.neo4j);
    expect(await neo4jChannels()).toEqual(['event_vector', 'vector']);
    expect(await vectorChannels()).toEqual(['event_vector', 'vector']);
    const dims = await t.app.neo4j.executeQuery(`MATCH (n) WHERE (n:Fact OR n:Event) AND n.namespace = $ns RETURN n.embeddingDims AS dims`, { ns: old });
    expect(dims.records.map((r) => r.get('dims'))).toEqual([384, 384]);
  });

  it('finds the current editor fact first, above the stale turn it superseded; its own turn is folded into it', async () => {
    const t0 = Date.now();
    const mixed = await searchAll({ q: 'which editor: vim or neovim?' });
    process.stderr.write(`[graph-search] searchMemory took ${Date.now() - t0} ms (first call, loads the embedder)\n`);
    expect(mixed[0]?.kind).toBe('FACT');
    expect(mixed[0]?.fact?.statement).toMatch(/neovim/i);
    // The turn it rests on is its evidence, not a hit of its own.
    expect(mixed[0]?.evidence.map((e) => e.content)).toEqual(['I switched to neovim last week']);
    expect(mixed[0]?.channels).toEqual(expect.arrayContaining(['event_keyword', 'event_vector']));
    expect(mixed.some((h) => h.kind === 'EVENT' && /neovim/.test(h.event?.content ?? ''))).toBe(false);
    // The stale turn may be listed (it is what was said), but below the fact that replaced it, and no stale fact is.
    const staleTurn = mixed.findIndex((h) => h.kind === 'EVENT' && h.event?.content === 'I use vim for everything');
    expect(staleTurn === -1 || staleTurn > 0).toBe(true);
    expect(mixed.some((h) => h.kind === 'FACT' && isVim(h.fact?.statement ?? ''))).toBe(false);
    for (const h of mixed) {
      expect(h.kind === 'FACT' ? h.fact !== null && h.event === null : h.event !== null && h.fact === null).toBe(true);
      if (h.kind === 'EVENT') expect(h.evidence.map((e) => e.id)).toEqual([h.event?.id]);
      expect(h.fact?.namespace ?? h.event?.namespace).toBe(ns);
    }

    const hits = await search({ q: 'which editor: vim or neovim?' });
    expect(hits[0]?.fact.statement).toMatch(/neovim/i);
    expect(hits[0]?.channels).toEqual(expect.arrayContaining(['vector', 'keyword', 'graph']));
    expect(hits[0]?.fact.sources[0]?.event.content).toBe('I switched to neovim last week');
    expect(hits[0]?.fact.sources[0]?.quote).toBe('I switched to neovim last week');
    expect(hits[0]?.fact.supersedes.map((s) => s.statement).some(isVim)).toBe(true);
    expect(hits.some((h) => isVim(h.fact.statement))).toBe(false);
    expect(hits.every((h) => h.fact.namespace === ns && h.fact.validTo === null)).toBe(true);
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);

    const t1 = Date.now();
    await search({ q: 'where do I live' });
    process.stderr.write(`[graph-search] searchMemory took ${Date.now() - t1} ms (warm)\n`);
  });

  it('returns the superseded vim fact with includeSuperseded, or asOf a date before the switch', async () => {
    const all = await search({ q: 'which editor: vim or neovim?', filter: { includeSuperseded: true } });
    const vim = all.find((h) => isVim(h.fact.statement));
    expect(vim?.fact.supersededBy?.statement).toMatch(/neovim/i);
    expect(all.some((h) => /neovim/i.test(h.fact.statement))).toBe(true);

    const before = await search({ q: 'which editor: vim or neovim?', asOf: '2026-02-01T00:00:00.000Z' });
    expect(isVim(before[0]?.fact.statement ?? '')).toBe(true);
    expect(before.some((h) => /neovim/i.test(h.fact.statement))).toBe(false);
    // Only facts valid on 1 February: the later Berlin, PostgreSQL, ... facts had not started yet.
    expect(before.map((h) => h.fact.statement)).toEqual([vim?.fact.statement]);
  });

  it('applies the fact type, entity and importance filters', async () => {
    const plans = await search({ q: 'PostgreSQL Berlin neovim', filter: { factTypes: ['plan'] } });
    expect(plans.length).toBeGreaterThan(0);
    expect(plans.every((h) => h.fact.factType === 'plan')).toBe(true);
    expect(plans[0]?.fact.statement).toMatch(/PostgreSQL/);

    const facts = await gqlOk<{ facts: { edges: Array<{ node: { statement: string; objectEntity: { id: string } | null } }> } }>(
      t.url,
      token,
      `query($ns: String!) { facts(namespace: $ns) { edges { node { statement objectEntity { id } } } } }`,
      { ns },
    );
    const berlin = facts.facts.edges.find((e) => /Berlin/.test(e.node.statement))?.node.objectEntity?.id;
    expect(berlin).toBeDefined();
    const aboutBerlin = await search({ q: 'which editor: vim or neovim?', filter: { entityId: berlin } });
    expect(aboutBerlin.map((h) => h.fact.statement)).toEqual([expect.stringMatching(/Berlin/)]);

    const importances = (await search({ q: 'user', limit: 100 })).map((h) => h.fact.importance).sort((a, b) => a - b);
    const threshold = importances[Math.floor(importances.length / 2)] as number;
    const important = await search({ q: 'user', limit: 100, filter: { minImportance: threshold } });
    expect(important.length).toBeGreaterThan(0);
    expect(important.every((h) => h.fact.importance >= threshold)).toBe(true);
    expect(await search({ q: 'user', filter: { minImportance: 1.01 } })).toEqual([]);
  });

  it('never leaks the noisy neighbour and is not starved by it', async () => {
    const { rows } = await pg.query<{ n: number; current: number }>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE valid_to IS NULL AND retired_at IS NULL)::int AS current FROM silver.facts WHERE namespace = $1`,
      [noisy],
    );
    expect(rows[0]?.current).toBeGreaterThanOrEqual(300);
    const [own] = (
      await pg.query<{ current: number }>(
        `SELECT count(*) FILTER (WHERE valid_to IS NULL AND retired_at IS NULL)::int AS current FROM silver.facts WHERE namespace = $1`,
        [ns],
      )
    ).rows;
    const limit = Math.min(5, own?.current as number);
    expect(limit).toBe(5);

    // The query is far closer to the neighbour's facts than to most of the caller's.
    const q = 'Bob uses neovim as his editor';
    const hits = await search({ q, limit });
    expect(hits).toHaveLength(limit);
    expect(hits.every((h) => h.fact.namespace === ns)).toBe(true);
    const everything = await search({ q, limit: 100, filter: { includeSuperseded: true } });
    expect(everything.every((h) => h.fact.namespace === ns)).toBe(true);

    // The neighbour sees only its own facts too.
    const theirs = await search({ ns: noisy, q: 'which editor: vim or neovim?', limit: 100, filter: { includeSuperseded: true } });
    expect(theirs.length).toBeGreaterThan(0);
    expect(theirs.every((h) => h.fact.namespace === noisy)).toBe(true);

    // The index path (what a namespace above SEARCH exact size takes): oversampling, then the exact fallback.
    const auth = await t.app.services.tokens.authenticate(`Bearer ${token}`);
    const load = searchLoaders(createLoaders(t.app.services));
    const embedder = async () => new HashingEmbedder();
    for (const settings of [
      { ...DEFAULT_SEARCH_SETTINGS, exactMaxFacts: 0, maxIndexCandidates: 10_000 },
      { ...DEFAULT_SEARCH_SETTINGS, exactMaxFacts: 0, maxIndexCandidates: 20 },
    ]) {
      const viaIndex = await new SearchService(t.app.neo4j, embedder, settings).search(
        auth,
        { namespace: ns, query: q, limit, filter: { kinds: ['FACT'] } },
        load,
      );
      expect(viaIndex).toHaveLength(limit);
      expect(viaIndex.every((h) => h.fact?.namespace === ns)).toBe(true);
      expect(new Set(viaIndex.map((h) => h.fact?.id))).toEqual(new Set(hits.map((h) => h.fact.id)));
      // Both kinds through the index path: the event channel is scoped the same way.
      const mixed = await new SearchService(t.app.neo4j, embedder, settings).search(auth, { namespace: ns, query: q, limit: 20 }, load);
      expect(mixed.some((h) => h.kind === 'EVENT')).toBe(true);
      expect(mixed.every((h) => (h.fact ?? h.event)?.namespace === ns)).toBe(true);
    }
  });

  it('refuses a token without "search", and bad arguments, with stable codes', async () => {
    const readOnly = (await createToken(t, [{ namespacePattern: 'search-*', capabilities: ['READ', 'LIST'] }], 'no-search')).token;
    const denied = await gql(t.url, readOnly, SEARCH, { ns, q: 'neovim' });
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const other = (await createToken(t, [{ namespacePattern: noisy, capabilities: ['SEARCH', 'READ'] }], 'other-ns')).token;
    expect((await gql(t.url, other, SEARCH, { ns, q: 'neovim' })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    for (const vars of [{ q: 'neovim', limit: 0 }, { q: 'neovim', limit: 101 }, { q: '   ' }, { q: 'x'.repeat(2001) }]) {
      const r = await gql(t.url, token, SEARCH_LIGHT, { ns, ...vars });
      expect(r.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
    // Lucene syntax in the query is text, not operators.
    const odd = await search({ q: 'neovim" AND (vim OR ~* :\\ [Berlin TO Z] NOT' });
    expect(odd.some((h) => /neovim/i.test(h.fact.statement))).toBe(true);
  });
});
