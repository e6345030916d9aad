import { randomUUID } from 'node:crypto';
import { MAX_OVERLAY_BODY, MAX_OVERLAY_REASON } from '../../src/gold/overlay/overlay.service';
import { uniqueNamespace } from '../support/stores';
import { rawMcpPost } from '../support/mcp-client';
import { createToken, gql, startTestApp, TestApp } from '../support/test-app';

const ADD = `mutation($input: OverlayInput!) { addOverlay(input: $input) { id } }`;
const CREATE = `mutation($input: TokenInput!) { createToken(input: $input) { token } }`;
const EXPLORE = `query($at: GraphDateTime) { graphEvents(limit: 1, where: { occurredAt: { gt: $at } }) { id } }`;

/** Issue 24 item 5: what used to be unbounded or INTERNAL is now a coded, actionable refusal. */
describe('input limits and the last INTERNAL answers', () => {
  let t: TestApp;
  const ns = uniqueNamespace('limits');
  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing' }, { api: true, worker: false });
  });
  afterAll(async () => t?.stop());

  it('refuses an overlay body or reason above its limit with LIMIT_EXCEEDED, before anything is read or stored', async () => {
    const factId = randomUUID();
    const edit = (body: string, reason?: string) => ({ input: { factId, kind: 'EDIT', exact: 'x', body, ...(reason !== undefined ? { reason } : {}) } });
    const big = await gql(t.url, t.adminToken, ADD, edit('y'.repeat(2 * 1024 * 1024)));
    expect(big.errors?.[0]?.extensions?.code).toBe('LIMIT_EXCEEDED');
    expect(big.errors?.[0]?.message).toMatch(new RegExp(`input.body is 2097152 characters; at most ${MAX_OVERLAY_BODY}`));
    const reason = await gql(t.url, t.adminToken, ADD, edit('fine', 'r'.repeat(MAX_OVERLAY_REASON + 1)));
    expect(reason.errors?.[0]?.extensions?.code).toBe('LIMIT_EXCEEDED');
    expect(reason.errors?.[0]?.message).toMatch(/input.reason is 2001 characters; at most 2000/);
    // At the limit the input is accepted and the request goes on (here: no such fact).
    const atLimit = await gql(t.url, t.adminToken, ADD, edit('y'.repeat(MAX_OVERLAY_BODY), 'r'.repeat(MAX_OVERLAY_REASON)));
    expect(atLimit.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('answers createToken(principalId: "") with BAD_USER_INPUT, not INTERNAL', async () => {
    const r = await gql(t.url, t.adminToken, CREATE, {
      input: { name: 'empty-principal', principalId: '', grants: [{ namespacePattern: ns, capabilities: ['READ'] }] },
    });
    expect(r.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(r.errors?.[0]?.message).toMatch(/principalId must be a UUID/);
  });

  it('answers an exploration date with a UTC offset beyond ±18:00 with BAD_USER_INPUT, and takes ±18:00', async () => {
    for (const at of ['2024-01-01T00:00:00+19:00', '2024-01-01T00:00:00-18:01', '2024-01-01T00:00:00+99:59']) {
      const r = await gql(t.url, t.adminToken, EXPLORE, { at });
      expect([at, r.errors?.[0]?.extensions?.code]).toEqual([at, 'BAD_USER_INPUT']);
      expect(r.errors?.[0]?.message).toMatch(/UTC offset beyond ±18:00/);
    }
    for (const at of ['2024-01-01T00:00:00+18:00', '2024-01-01T00:00:00-05:30', '2024-01-01T00:00:00Z']) {
      const r = await gql(t.url, t.adminToken, EXPLORE, { at });
      // Past the argument check (what follows depends on the caller's grants), never INTERNAL.
      expect([at, r.errors?.[0]?.extensions?.code ?? 'ok']).not.toEqual([at, 'BAD_USER_INPUT']);
      expect(r.errors?.[0]?.extensions?.code).not.toBe('INTERNAL_SERVER_ERROR');
    }
  });

  it('answers MCP initialize without params with -32602 Invalid params, not -32603', async () => {
    for (const params of [undefined, null, 7, {}]) {
      const res = await rawMcpPost(
        t.url,
        { jsonrpc: '2.0', id: 1, method: 'initialize', ...(params !== undefined ? { params } : {}) },
        {
          authorization: `Bearer ${t.adminToken}`,
        },
      );
      expect(res.status).toBeLessThan(500);
      const text = await res.text();
      const body = JSON.parse(text.startsWith('event:') || text.startsWith('data:') ? (/data: (.*)/.exec(text)?.[1] ?? '{}') : text) as {
        error?: { code: number; message: string };
      };
      // Without params (the reported case): -32602; malformed params are -32602 or, refused earlier by the transport, -32600.
      if (params === undefined) expect(body.error?.code).toBe(-32602);
      expect([-32602, -32600]).toContain(body.error?.code);
      expect(body.error?.message).toMatch(/Invalid params|Invalid Request|not a valid JSON-RPC message/i);
    }
  });

  it('answers an oversized or ungranted MCP namespace as a short tool error, never echoing the input', async () => {
    const { token } = await createToken(t, [{ namespacePattern: ns, capabilities: ['SEARCH'] }], 'narrow');
    const call = async (namespace: string): Promise<{ status: number; text: string }> => {
      const res = await rawMcpPost(
        t.url,
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_memory', arguments: { namespace, query: 'q' } } },
        { authorization: `Bearer ${token}` },
      );
      return { status: res.status, text: await res.text() };
    };
    const huge = await call(`n${'x'.repeat(70_000)}`);
    expect(huge.status).toBe(200);
    expect(huge.text).toMatch(/"isError":true/);
    expect(huge.text).toMatch(/BAD_USER_INPUT: namespace/);
    expect(huge.text.length).toBeLessThan(2000);
    const other = await call(`${ns}-other`);
    expect(other.status).toBe(200);
    expect(other.text).toMatch(/FORBIDDEN: /);
    expect(other.text).toMatch(/lacks the \\"search\\" capability/);
  });
});
