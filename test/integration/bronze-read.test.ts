import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';
import { collect, wsClient } from '../support/ws-client';

const INGEST_MANY = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status code event { id } } }`;
const LIST = `query($ns: String!, $filter: EventFilter, $first: Int, $after: String) {
  events(namespace: $ns, filter: $filter, first: $first, after: $after) { edges { cursor node { id namespace content occurredAt kind source } } pageInfo { hasNextPage endCursor } } }`;
type Page = {
  events: {
    edges: Array<{ cursor: string; node: { id: string; namespace: string; content: string; occurredAt: string; kind: string; source: string } }>;
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
};

describe('Bronze reads: pages, filters, conversations, watermarks, and the namespace firewall', () => {
  let t: TestApp;
  const nsA = uniqueNamespace('team-a');
  const nsB = uniqueNamespace('team-b');
  let tokenA: string;
  let adminB: string;
  const idsB: string[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    tokenA = (await createToken(t, [{ namespacePattern: nsA, capabilities: ['INGEST', 'READ', 'LIST'] }], 'a')).token;
    adminB = (await createToken(t, [{ namespacePattern: nsB, capabilities: ['INGEST', 'READ', 'LIST'] }], 'b')).token;
    const a = Array.from({ length: 25 }, (_, i) =>
      anEvent(nsA)
        .withKey(i % 2 ? 'slack' : 'email', `a-${i}`)
        .saying(i === 7 ? 'We moved the DATABASE to PostgreSQL 16' : `message ${i}`)
        .at(new Date(Date.UTC(2026, 0, 1 + i)).toISOString())
        .inConversation(i < 10 ? 'conv-a' : 'conv-a2', i < 10 ? 10 - i : i)
        .inSession(i < 5 ? 'sess-1' : 'sess-2')
        .build(),
    );
    await gqlOk(t.url, tokenA, INGEST_MANY, { input: a });
    // B uses the same conversation id, sources and similar content: nothing of it may show up for A.
    const b = Array.from({ length: 10 }, (_, i) =>
      anEvent(nsB)
        .withKey('slack', `b-${i}`)
        .saying(`B secret ${i} DATABASE`)
        .at(new Date(Date.UTC(2026, 0, 1 + i, 12)).toISOString())
        .inConversation('conv-a', i)
        .build(),
    );
    const res = await gqlOk<{ ingestEvents: Array<{ event: { id: string } }> }>(t.url, adminB, INGEST_MANY, { input: b });
    idsB.push(...res.ingestEvents.map((r) => r.event.id));
  });
  afterAll(async () => t?.stop());

  const page = (token: string, vars: Record<string, unknown>) => gqlOk<Page>(t.url, token, LIST, vars);

  it('pages through every event once, in (occurredAt, id) order', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const p: Page = await page(tokenA, { ns: nsA, first: 7, after });
      seen.push(...p.events.edges.map((e) => e.node.occurredAt));
      after = p.events.pageInfo.hasNextPage ? p.events.pageInfo.endCursor : null;
      pages += 1;
    } while (after);
    expect(pages).toBe(4);
    expect(seen).toHaveLength(25);
    expect([...seen].sort()).toEqual(seen);
  });

  it('filters by source, kind, conversation, session, time range and text', async () => {
    const count = async (filter: Record<string, unknown>) => (await page(tokenA, { ns: nsA, filter, first: 100 })).events.edges.length;
    expect(await count({ sources: ['slack'] })).toBe(12);
    expect(await count({ kinds: ['MESSAGE'] })).toBe(25);
    expect(await count({ kinds: ['NOTE'] })).toBe(0);
    expect(await count({ conversationId: 'conv-a' })).toBe(10);
    expect(await count({ sessionId: 'sess-1' })).toBe(5);
    expect(await count({ from: '2026-01-05T00:00:00Z', to: '2026-01-10T00:00:00Z' })).toBe(5);
    expect(await count({ contains: 'database' })).toBe(1);
    expect(await count({ contains: '%' })).toBe(0);
    expect(await count({ sources: ['slack'], conversationId: 'conv-a', contains: 'message' })).toBe(4); // i = 1, 3, 5, 9 (7 talks about the database)
  });

  it('rejects bad page arguments with BAD_USER_INPUT', async () => {
    expect((await gql(t.url, tokenA, LIST, { ns: nsA, first: 0 })).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await gql(t.url, tokenA, LIST, { ns: nsA, after: 'garbage' })).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(
      (await gql(t.url, tokenA, LIST, { ns: nsA, filter: { from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' } })).errors?.[0]?.extensions?.code,
    ).toBe('BAD_USER_INPUT');
  });

  it('returns a conversation by sequenceNum and links tool calls to their results', async () => {
    const conv = await gqlOk<{ conversation: Array<{ sequenceNum: number }> }>(
      t.url,
      tokenA,
      `query($ns: String!) { conversation(namespace: $ns, conversationId: "conv-a") { sequenceNum } }`,
      { ns: nsA },
    );
    expect(conv.conversation.map((e) => e.sequenceNum)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

    const tools = [
      anEvent(nsA).inConversation('tools', 1).by('USER').saying('what is in /tmp?').build(),
      anEvent(nsA)
        .inConversation('tools', 2)
        .by('ASSISTANT')
        .ofKind('TOOL_CALL')
        .saying('')
        .withPayload({ id: 'call_1', name: 'ls', arguments: { path: '/tmp' } })
        .build(),
      anEvent(nsA)
        .inConversation('tools', 3)
        .by('TOOL')
        .ofKind('TOOL_RESULT')
        .saying('a.txt b.txt')
        .withPayload({ tool_call_id: 'call_1', exitCode: 0 })
        .build(),
      anEvent(nsA).inConversation('tools', 4).by('ASSISTANT').saying('Two files.').build(),
    ];
    await gqlOk(t.url, tokenA, INGEST_MANY, { input: tools });
    const res = await gqlOk<{
      conversation: Array<{
        kind: string;
        toolCallId: string | null;
        rawPayload: unknown;
        toolCall: { kind: string } | null;
        toolResults: Array<{ content: string }>;
      }>;
    }>(
      t.url,
      tokenA,
      `query($ns: String!) { conversation(namespace: $ns, conversationId: "tools", limit: 20) { kind toolCallId rawPayload toolCall { kind } toolResults { content } } }`,
      { ns: nsA },
    );
    expect(res.conversation.map((e) => e.kind)).toEqual(['MESSAGE', 'TOOL_CALL', 'TOOL_RESULT', 'MESSAGE']);
    expect(res.conversation[1]).toMatchObject({
      toolCallId: 'call_1',
      rawPayload: { id: 'call_1', name: 'ls', arguments: { path: '/tmp' } },
      toolResults: [{ content: 'a.txt b.txt' }],
    });
    expect(res.conversation[2]).toMatchObject({ toolCallId: 'call_1', toolCall: { kind: 'TOOL_CALL' } });
  });

  it('advances the watermark per (namespace, source) to the latest event', async () => {
    const w = await gqlOk<{ watermark: { lastSourceEventId: string; lastOccurredAt: string; eventCount: number } }>(
      t.url,
      tokenA,
      `query($ns: String!) { watermark(namespace: $ns, source: "slack") { lastSourceEventId lastOccurredAt eventCount } }`,
      { ns: nsA },
    );
    expect(w.watermark).toEqual({ lastSourceEventId: 'a-23', lastOccurredAt: '2026-01-24T00:00:00.000Z', eventCount: 12 });
    // An older event arriving late counts but does not move the mark back.
    await gqlOk(t.url, tokenA, INGEST_MANY, { input: [anEvent(nsA).withKey('slack', 'late').at('2020-01-01T00:00:00Z').build()] });
    const after = await gqlOk<{ watermark: { lastSourceEventId: string; eventCount: number } }>(
      t.url,
      tokenA,
      `query($ns: String!) { watermark(namespace: $ns, source: "slack") { lastSourceEventId eventCount } }`,
      { ns: nsA },
    );
    expect(after.watermark).toEqual({ lastSourceEventId: 'a-23', eventCount: 13 });
    const none = await gqlOk<{ watermark: null }>(t.url, tokenA, `query($ns: String!) { watermark(namespace: $ns, source: "never") { eventCount } }`, {
      ns: nsA,
    });
    expect(none.watermark).toBeNull();
  });

  describe('namespace firewall', () => {
    it('refuses to list, read a conversation of, or watermark another namespace', async () => {
      for (const [query, vars] of [
        [LIST, { ns: nsB }],
        [`query($ns: String!) { conversation(namespace: $ns, conversationId: "conv-a") { id } }`, { ns: nsB }],
        [`query($ns: String!) { watermark(namespace: $ns, source: "slack") { eventCount } }`, { ns: nsB }],
      ] as const) {
        const res = await gql(t.url, tokenA, query, vars);
        expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
        expect(Object.values(res.data ?? {}).every((v) => v === null)).toBe(true);
      }
    });

    it("never returns B's events through ids, filters, or B's cursors", async () => {
      for (const id of idsB) {
        expect((await gqlOk<{ event: unknown }>(t.url, tokenA, `query($id: ID!) { event(id: $id) { id } }`, { id })).event).toBeNull();
      }
      const all = await page(tokenA, { ns: nsA, first: 500, filter: { conversationId: 'conv-a', contains: 'secret' } });
      expect(all.events.edges).toEqual([]);
      // A cursor taken from B's listing only positions A's own listing.
      const bPage = await page(adminB, { ns: nsB, first: 3 });
      const viaCursor = await page(tokenA, { ns: nsA, first: 500, after: bPage.events.pageInfo.endCursor });
      expect(viaCursor.events.edges.every((e) => e.node.namespace === nsA)).toBe(true);
      expect(viaCursor.events.edges.some((e) => e.node.content.includes('B secret'))).toBe(false);
    });

    it('does not let a prefix grant reach a namespace that merely starts with the same letters', async () => {
      const prefixToken = (await createToken(t, [{ namespacePattern: `${nsA}/*`, capabilities: ['READ', 'LIST'] }], 'prefix')).token;
      expect((await gql(t.url, prefixToken, LIST, { ns: nsA })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect((await gql(t.url, prefixToken, LIST, { ns: `${nsA}x` })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect((await gql(t.url, prefixToken, LIST, { ns: `${nsA}/sub` })).errors).toBeUndefined();
    });

    it("refuses a subscription to B's events and delivers none of them to A", async () => {
      const client = wsClient(t.url, tokenA);
      const forbidden = collect(client, `subscription($ns: String!) { eventIngested(namespace: $ns) { id } }`, { ns: nsB });
      const own = collect<{ eventIngested: { id: string; namespace: string } }>(
        client,
        `subscription($ns: String!) { eventIngested(namespace: $ns) { id namespace } }`,
        { ns: nsA },
      );
      await own.ready;
      await new Promise((r) => setTimeout(r, 300));
      await gqlOk(t.url, adminB, INGEST_MANY, { input: [anEvent(nsB).saying('B after subscribe').build()] });
      await gqlOk(t.url, tokenA, INGEST_MANY, { input: [anEvent(nsA).saying('A after subscribe').build()] });
      const deadline = Date.now() + 5000;
      while (own.received.next.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(JSON.stringify(forbidden.received.errors)).toContain('FORBIDDEN');
      expect(own.received.next.length).toBeGreaterThan(0);
      expect(own.received.next.every((m) => m.eventIngested.namespace === nsA)).toBe(true);
      forbidden.stop();
      own.stop();
      await client.dispose();
    });
  });
});
