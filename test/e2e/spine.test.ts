import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';
import { uniqueNamespace } from '../support/stores';
import { collect, wsClient } from '../support/ws-client';

const INGEST = `mutation($input: EventInput!) { ingestEvent(input: $input) { index status code reason event { id namespace content checksum derivationStatus } } }`;
const EVENT = `query($id: ID!) { event(id: $id) { id namespace source sourceEventId kind role content rawPayload occurredAt ingestedAt } }`;
const EVENT_NODE = `query($id: ID!) { eventNode(id: $id) { id namespace kind source projectedAt } }`;
const SUBSCRIBE = `subscription($ns: String!) { eventIngested(namespace: $ns) { id namespace content } }`;

describe('the spine, end to end over HTTP and graphql-ws', () => {
  let t: TestApp;
  const nsA = uniqueNamespace('a');
  const nsB = uniqueNamespace('b');
  let tokenA: string;
  let tokenB: string;

  beforeAll(async () => {
    t = await startTestApp();
    tokenA = (await createToken(t, [{ namespacePattern: nsA, capabilities: ['INGEST', 'READ', 'LIST'] }], 'agent-a')).token;
    tokenB = (await createToken(t, [{ namespacePattern: nsB, capabilities: ['INGEST', 'READ', 'LIST'] }], 'agent-b')).token;
  });
  afterAll(async () => t?.stop());

  it('reports both stores healthy and exposes Prometheus metrics', async () => {
    const health = await fetch(`${t.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', postgres: { ok: true }, neo4j: { ok: true } });
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toContain('medallion_outbox_pending');
    expect(metrics).toContain('medallion_process_cpu_seconds_total');
  });

  it('ingests, reads back from Postgres and Neo4j, and pushes to a subscriber', async () => {
    const client = wsClient(t.url, tokenA);
    const sub = collect<{ eventIngested: { id: string; content: string } }>(client, SUBSCRIBE, { ns: nsA });
    await sub.ready;
    try {
      const sent: string[] = [];
      // A subscription is live once the server has run its subscribe step; keep sending until one arrives.
      const firstDelivered = await eventually(
        async () => {
          const content = `I use vim for everything (${sent.length})`;
          const res = await gqlOk<{ ingestEvent: { status: string; event: { id: string; content: string; checksum: string; derivationStatus: string } } }>(
            t.url,
            tokenA,
            INGEST,
            {
              input: {
                namespace: nsA,
                source: 'e2e',
                sourceEventId: `evt-${sent.length}`,
                kind: 'MESSAGE',
                role: 'USER',
                content,
                rawPayload: { client: 'e2e', n: sent.length },
              },
            },
          );
          expect(res.ingestEvent.status).toBe('CREATED');
          expect(res.ingestEvent.event.checksum).toMatch(/^[0-9a-f]{64}$/);
          expect(res.ingestEvent.event.derivationStatus).toBe('PENDING');
          sent.push(res.ingestEvent.event.id);
          await new Promise((r) => setTimeout(r, 200));
          return sub.received.next[0];
        },
        'the subscription to deliver an event',
        10_000,
      );
      expect(sent).toContain(firstDelivered.eventIngested.id);
      expect(sub.received.errors).toEqual([]);

      const id = sent[sent.length - 1] as string;
      const read = await gqlOk<{ event: { id: string; namespace: string; content: string; kind: string; role: string; rawPayload: unknown } }>(
        t.url,
        tokenA,
        EVENT,
        { id },
      );
      expect(read.event).toMatchObject({ id, namespace: nsA, kind: 'MESSAGE', role: 'USER', content: `I use vim for everything (${sent.length - 1})` });
      expect(read.event.rawPayload).toEqual({ client: 'e2e', n: sent.length - 1 });

      const node = await eventually(
        async () => (await gqlOk<{ eventNode: { id: string; namespace: string } | null }>(t.url, tokenA, EVENT_NODE, { id })).eventNode,
        'the projector to write the Neo4j node',
      );
      expect(node).toMatchObject({ id, namespace: nsA, kind: 'message', source: 'e2e' });
    } finally {
      sub.stop();
      await client.dispose();
    }
  });

  it("refuses another namespace's token everywhere", async () => {
    const res = await gqlOk<{ ingestEvent: { event: { id: string } } }>(t.url, tokenA, INGEST, {
      input: { namespace: nsA, source: 'e2e', sourceEventId: 'secret-1', kind: 'NOTE', content: 'A-only secret' },
    });
    const id = res.ingestEvent.event.id;
    await eventually(async () => (await gqlOk<{ eventNode: unknown }>(t.url, tokenA, EVENT_NODE, { id })).eventNode, 'projection');

    // Reads by id look exactly like a missing event: nothing to probe with.
    expect((await gqlOk<{ event: unknown }>(t.url, tokenB, EVENT, { id })).event).toBeNull();
    expect((await gqlOk<{ eventNode: unknown }>(t.url, tokenB, EVENT_NODE, { id })).eventNode).toBeNull();

    // Writing into A with B's token is refused per item.
    const write = await gqlOk<{ ingestEvent: { status: string; code: string; event: unknown } }>(t.url, tokenB, INGEST, {
      input: { namespace: nsA, source: 'e2e', sourceEventId: 'intruder', kind: 'NOTE', content: 'let me in' },
    });
    expect(write.ingestEvent).toMatchObject({ status: 'REJECTED', code: 'FORBIDDEN', event: null });

    // Subscribing to A with B's token fails with FORBIDDEN.
    const client = wsClient(t.url, tokenB);
    const sub = collect(client, SUBSCRIBE, { ns: nsA });
    await eventually(async () => sub.received.errors.length > 0 || sub.received.done, 'the refusal');
    expect(JSON.stringify(sub.received.errors)).toContain('FORBIDDEN');
    sub.stop();
    await client.dispose();

    // No token at all: UNAUTHENTICATED.
    const anon = await gql(t.url, undefined, EVENT, { id });
    expect(anon.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const bad = await gql(t.url, 'mm_not-a-real-token', EVENT, { id });
    expect(bad.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});

describe('revocation reaches open subscriptions', () => {
  let t: TestApp;
  const ns = uniqueNamespace('revoke');
  beforeAll(async () => {
    t = await startTestApp({ AUTH_RECHECK_MS: '100' });
  });
  afterAll(async () => t?.stop());

  it('ends a subscription with UNAUTHENTICATED once its token is revoked', async () => {
    const { id, token } = await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'READ'] }], 'soon-revoked');
    const client = wsClient(t.url, token);
    const sub = collect<{ eventIngested: { id: string } }>(client, SUBSCRIBE, { ns });
    await sub.ready;
    await new Promise((r) => setTimeout(r, 300));
    const send = (n: number) =>
      gqlOk(t.url, t.adminToken, INGEST, { input: { namespace: ns, source: 'revoke', sourceEventId: `r-${n}`, kind: 'NOTE', content: `note ${n}` } });
    await send(1);
    await eventually(async () => sub.received.next.length === 1, 'the first delivery');
    await gqlOk(t.url, t.adminToken, `mutation($id: ID!) { revokeToken(id: $id) }`, { id });
    await new Promise((r) => setTimeout(r, 200));
    await send(2);
    await eventually(async () => sub.received.errors.length > 0 || sub.received.done, 'the subscription to end');
    expect(sub.received.next).toHaveLength(1);
    // The socket is closed at once (4403) with the reason, so the client sees a close event.
    const closed = sub.received.errors[0] as { code?: number; reason?: string };
    expect(`${closed.code} ${closed.reason} ${JSON.stringify(sub.received.errors)}`).toMatch(/UNAUTHENTICATED|missing or invalid API token/);
    sub.stop();
    await client.dispose();
  });
});

describe('query limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ MAX_QUERY_DEPTH: '2', MAX_QUERY_COMPLEXITY: '50' });
  });
  afterAll(async () => t?.stop());

  it('refuses an over-deep query with LIMIT_EXCEEDED before running it', async () => {
    expect((await gql(t.url, t.adminToken, `{ viewer { name } }`)).errors).toBeUndefined();
    const res = await gql(t.url, t.adminToken, `{ viewer { grants { namespacePattern } } }`);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'LIMIT_EXCEEDED', limit: 'depth', max: 2 });
    expect(res.data ?? null).toBeNull();
  });

  it('refuses an over-costly query with LIMIT_EXCEEDED', async () => {
    const fields = Array.from({ length: 60 }, (_, i) => `a${i}: viewer { name }`).join(' ');
    const res = await gql(t.url, t.adminToken, `{ ${fields} }`);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'LIMIT_EXCEEDED', limit: 'complexity' });
  });
});
