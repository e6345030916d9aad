import { Client } from '@modelcontextprotocol/client';
import { Client as Pg } from 'pg';
import { uniqueNamespace } from '../support/stores';
import { dataOf, errorOf, mcpClient, textOf } from '../support/mcp-client';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

interface Fact {
  id: string;
  statement: string;
  namespace: string;
  validTo: string | null;
  supersededById: string | null;
}
interface Event {
  id: string;
  content: string;
  namespace: string;
}
interface Hit {
  kind: 'FACT' | 'EVENT';
  fact: Fact | null;
  event: Event | null;
  evidence: Event[];
  channels: string[];
}

/** The message a GraphQL query answers with, and its code: the MCP tools must answer the same. */
async function graphqlError(t: TestApp, token: string, query: string, variables: Record<string, unknown>) {
  const r = await gql(t.url, token, query, variables);
  const e = r.errors?.[0];
  if (!e) throw new Error(`expected a GraphQL error for ${query}`);
  return { code: e.extensions?.code, message: e.message };
}

describe('MCP tools over Streamable HTTP: the same services, limits and errors as GraphQL', () => {
  let t: TestApp;
  let pg: Pg;
  let token: string;
  let client: Client;
  const ns = uniqueNamespace('mcp');
  const startedAt = new Date(Date.now() - 1000).toISOString();

  const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });
  const settled = async () => {
    await eventually(
      async () =>
        (
          await gqlOk<{ pipelineStatus: { pending: number } }>(t.url, t.adminToken, `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`, {
            ns,
          })
        ).pipelineStatus.pending === 0,
      'derivation',
      90_000,
    );
    await eventually(
      async () =>
        (await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM ops.outbox WHERE processed_at IS NULL AND namespace = $1`, [ns])).rows[0]?.n === 0,
      'the outbox to drain',
      90_000,
    );
  };

  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50', MAX_BATCH_SIZE: '20', MAX_PAGE_SIZE: '60' });
    pg = new Pg({ connectionString: t.databaseUrl });
    await pg.connect();
    token = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'SEARCH', 'READ', 'LIST'] }], 'mcp-agent')).token;
    client = await mcpClient(t.url, token);
  });

  afterAll(async () => {
    await client?.close();
    await pg?.end();
    await t?.stop();
  });

  it('lists the tools with schemas an LLM can follow', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name)).toEqual([
      'search_memory',
      'add_memory',
      'get_fact',
      'get_provenance',
      'list_facts',
      'list_entities',
      'what_changed',
      'about',
      'related_context',
    ]);
    const search = tools.find((x) => x.name === 'search_memory');
    expect(search?.description).toMatch(/"search" capability/);
    const props = search?.inputSchema.properties as Record<string, { description?: string; maximum?: number }>;
    expect(props.query?.description).toBeTruthy();
    expect(props.limit).toMatchObject({ minimum: 1, maximum: 100 });
    expect(search?.inputSchema.required).toEqual(['namespace', 'query']);
    // The page-size bound is the service's configured MAX_PAGE_SIZE, as in GraphQL.
    const listFacts = tools.find((x) => x.name === 'list_facts');
    expect((listFacts?.inputSchema.properties as Record<string, { maximum?: number }>).first?.maximum).toBe(60);
    expect(tools.every((x) => x.outputSchema?.type === 'object')).toBe(true);
    expect(client.getInstructions()).toMatch(/search_memory/);
  });

  it('add_memory stores messages as events, idempotently by the caller key', async () => {
    const messages = [
      { role: 'user', actor: 'Alice', content: 'I use vim for everything', occurredAt: '2026-01-10T09:00:00Z' },
      { role: 'assistant', content: 'Noted.', occurredAt: '2026-01-10T09:00:05Z' },
    ];
    const first = await call('add_memory', { namespace: ns, key: 'conv-1:turn-1', conversationId: 'conv-1', messages });
    expect(first.isError).toBeFalsy();
    const created = dataOf<{ results: Array<{ status: string; eventId: string; sourceEventId: string }> }>(first).results;
    expect(created.map((r) => r.status)).toEqual(['CREATED', 'CREATED']);
    expect(created.map((r) => r.sourceEventId)).toEqual(['conv-1:turn-1#0', 'conv-1:turn-1#1']);
    expect(textOf(first)).toMatch(/2 created, 0 duplicate, 0 rejected/);

    // A retry with the same key stores nothing new and points at the originals.
    const again = dataOf<{ results: Array<{ status: string; eventId: string }> }>(
      await call('add_memory', { namespace: ns, key: 'conv-1:turn-1', conversationId: 'conv-1', messages }),
    ).results;
    expect(again.map((r) => r.status)).toEqual(['DUPLICATE', 'DUPLICATE']);
    expect(again.map((r) => r.eventId)).toEqual(created.map((r) => r.eventId));
    const stored = await pg.query(`SELECT count(*)::int AS n FROM bronze.events WHERE namespace = $1`, [ns]);
    expect(stored.rows[0].n).toBe(2);

    // Same key, other content: refused per message, as ingestEvents does (Bronze never overwrites).
    const conflict = dataOf<{ results: Array<{ status: string; code: string; reason: string }> }>(
      await call('add_memory', { namespace: ns, key: 'conv-1:turn-1', messages: [{ content: 'I use emacs' }] }),
    ).results;
    expect(conflict[0]).toMatchObject({ status: 'REJECTED', code: 'CONFLICT' });

    await call('add_memory', {
      namespace: ns,
      key: 'conv-1:turn-2',
      conversationId: 'conv-1',
      messages: [
        { role: 'user', actor: 'Alice', content: 'I switched to neovim last week', occurredAt: '2026-03-08T09:00:00Z' },
        { role: 'user', actor: 'Alice', content: 'I live in Berlin', occurredAt: '2026-03-09T09:00:00Z' },
      ],
    });
    await settled();
  });

  it('add_memory answers the batch limits like ingestEvents', async () => {
    const tooMany = await call('add_memory', { namespace: ns, key: 'big', messages: Array.from({ length: 21 }, (_, i) => ({ content: `m${i}` })) });
    expect(errorOf(tooMany)).toMatchObject({ code: 'LIMIT_EXCEEDED', message: expect.stringMatching(/limit is 20 \(MAX_BATCH_SIZE\)/) });
    const empty = await call('add_memory', { namespace: ns, key: 'none', messages: [] });
    expect(errorOf(empty)).toMatchObject({ code: 'BAD_USER_INPUT', message: 'the batch is empty: send at least one event' });
    const badTime = dataOf<{ results: Array<{ status: string; code: string }> }>(
      await call('add_memory', { namespace: ns, key: 'old', messages: [{ content: 'ancient', occurredAt: '1900-01-01T00:00:00Z' }] }),
    ).results;
    expect(badTime[0]).toMatchObject({ status: 'REJECTED', code: 'INVALID_TIMESTAMP' });
  });

  it('search_memory recalls the current fact with its evidence, and raw messages', async () => {
    const r = await call('search_memory', { namespace: ns, query: 'which editor does Alice use?' });
    expect(r.isError).toBeFalsy();
    const hits = dataOf<{ hits: Hit[] }>(r).hits;
    const neovim = hits.find((h) => h.kind === 'FACT' && /neovim/i.test(h.fact?.statement ?? ''));
    expect(neovim?.evidence.map((e) => e.content)).toContain('I switched to neovim last week');
    expect(hits.every((h) => (h.fact ?? h.event)?.namespace === ns)).toBe(true);
    expect(textOf(r)).toMatch(/FACT .*neovim/i);

    const events = dataOf<{ hits: Hit[] }>(await call('search_memory', { namespace: ns, query: 'Noted', kinds: ['EVENT'] })).hits;
    expect(events.some((h) => h.event?.content === 'Noted.')).toBe(true);
    expect(events.every((h) => h.kind === 'EVENT')).toBe(true);
  });

  it('list_facts, get_fact, get_provenance and what_changed read the same Silver as GraphQL', async () => {
    const listed = dataOf<{ facts: Fact[]; hasNextPage: boolean }>(await call('list_facts', { namespace: ns, includeRetired: true, first: 60 }));
    const viaGraphql = await gqlOk<{ facts: { edges: Array<{ node: { id: string } }> } }>(
      t.url,
      token,
      `query($ns: String!) { facts(namespace: $ns, includeRetired: true, first: 60) { edges { node { id } } } }`,
      { ns },
    );
    expect(listed.facts.map((f) => f.id)).toEqual(viaGraphql.facts.edges.map((e) => e.node.id));
    const neovim = listed.facts.find((f) => /neovim/i.test(f.statement) && f.validTo === null);
    const vim = listed.facts.find((f) => /\bvim\b/i.test(f.statement) && f.supersededById !== null);
    expect(neovim).toBeDefined();
    expect(vim?.supersededById).toBe(neovim?.id);

    const paged = dataOf<{ facts: Fact[]; hasNextPage: boolean; endCursor: string }>(
      await call('list_facts', { namespace: ns, includeRetired: true, first: 1 }),
    );
    expect(paged.hasNextPage).toBe(true);
    const next = dataOf<{ facts: Fact[] }>(await call('list_facts', { namespace: ns, includeRetired: true, first: 1, after: paged.endCursor }));
    expect(next.facts[0]?.id).toBe(listed.facts[1]?.id);

    const got = await call('get_fact', { id: neovim?.id });
    const fact = dataOf<{ fact: Fact; subject: { name: string } | null; sources: Array<{ eventId: string; quote: string }> }>(got);
    expect(fact.fact.statement).toBe(neovim?.statement);
    expect(fact.sources.length).toBeGreaterThan(0);

    const prov = dataOf<{ steps: Array<{ via: string; event: Event }> }>(await call('get_provenance', { factId: neovim?.id }));
    expect(prov.steps.find((s) => s.via === 'DIRECT')?.event.content).toBe('I switched to neovim last week');
    expect(prov.steps.find((s) => s.via === 'SUPERSEDED')?.event.content).toBe('I use vim for everything');

    const entities = dataOf<{ entities: Array<{ name: string; id: string }> }>(await call('list_entities', { namespace: ns }));
    expect(entities.entities.length).toBeGreaterThan(0);

    const changes = dataOf<{ changes: Array<{ kind: string; fact: Fact }> }>(await call('what_changed', { namespace: ns, since: startedAt }));
    expect(changes.changes.map((c) => c.kind)).toEqual(expect.arrayContaining(['ADDED', 'SUPERSEDED']));
    expect(changes.changes.find((c) => c.kind === 'SUPERSEDED')?.fact.id).toBe(vim?.id);
  });

  it('answers bad arguments as tool errors with the GraphQL API codes and messages', async () => {
    const same = async (tool: string, args: Record<string, unknown>, query: string, variables: Record<string, unknown>) => {
      const mcp = errorOf(await call(tool, args));
      expect(mcp).toMatchObject(await graphqlError(t, token, query, variables));
      return mcp;
    };
    await same(
      'search_memory',
      { namespace: ns, query: 'vim', limit: 0 },
      `query($ns: String!) { searchMemory(namespace: $ns, query: "vim", limit: 0) { score } }`,
      { ns },
    );
    await same('search_memory', { namespace: ns, query: '   ' }, `query($ns: String!) { searchMemory(namespace: $ns, query: "   ") { score } }`, { ns });
    await same('get_fact', { id: 'not-a-uuid' }, `query { fact(id: "not-a-uuid") { id } }`, {});
    await same('list_facts', { namespace: ns, first: 61 }, `query($ns: String!) { facts(namespace: $ns, first: 61) { edges { cursor } } }`, { ns });
    await same(
      'list_facts',
      { namespace: ns, minImportance: 2 },
      `query($ns: String!) { facts(namespace: $ns, filter: { minImportance: 2 }) { edges { cursor } } }`,
      { ns },
    );
    await same(
      'list_entities',
      { namespace: ns, after: 'garbage' },
      `query($ns: String!) { entities(namespace: $ns, after: "garbage") { edges { cursor } } }`,
      { ns },
    );
    await same(
      'what_changed',
      { namespace: ns, since: startedAt, first: 501 },
      `query($ns: String!, $s: DateTime!) { changes(namespace: $ns, since: $s, first: 501) { kind } }`,
      {
        ns,
        s: startedAt,
      },
    );
    expect(errorOf(await call('get_provenance', { factId: 'x' }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: expect.stringMatching(/^factId must be a UUID/),
    });

    // Text that Postgres cannot store is refused by name, as the GraphQL middleware does.
    expect(errorOf(await call('search_memory', { namespace: ns, query: 'a\u0000b' }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: expect.stringMatching(/^argument query contains a NUL/),
    });
    // Wrong JSON types never reach a service: BAD_USER_INPUT naming the argument.
    const typed = errorOf(await call('search_memory', { namespace: ns, query: 'vim', limit: 'ten' }));
    expect(typed).toMatchObject({ code: 'BAD_USER_INPUT', message: expect.stringMatching(/^invalid arguments for search_memory: limit:/) });
    expect(errorOf(await call('what_changed', { namespace: ns, since: 'yesterday' }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: expect.stringMatching(/since/),
    });
    // A missing fact, or one outside the grants, looks the same (GraphQL: null).
    expect(errorOf(await call('get_fact', { id: '0b5c7a4e-1f6d-4c1a-9a51-2f1e0c9d8b7a' }))).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('serves 2025-era clients (initialize handshake, stateless) from the same tools', async () => {
    const legacy = await mcpClient(t.url, token, 'legacy');
    try {
      expect((await legacy.listTools()).tools).toHaveLength(9);
      const hits = dataOf<{ hits: Hit[] }>(await legacy.callTool({ name: 'search_memory', arguments: { namespace: ns, query: 'Berlin' } })).hits;
      expect(hits.some((h) => /Berlin/.test(h.fact?.statement ?? h.event?.content ?? ''))).toBe(true);
    } finally {
      await legacy.close();
    }
  });
});
