import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as SdkHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpSubscription } from '@modelcontextprotocol/client';
import { uniqueNamespace } from '../support/stores';
import { mcpClient, rawMcpPost } from '../support/mcp-client';
import { createToken, gqlOk, startTestApp, TestApp } from '../support/test-app';

const REVOKE = `mutation($id: ID!) { revokeToken(id: $id) }`;
const CREATE = `mutation($input: TokenInput!) { createToken(input: $input) { token info { id } } }`;

/** The official SDK (1.x) client, as desktop agents hold it: one transport, many requests. */
async function sdkClient(url: string, token: string): Promise<SdkClient> {
  const client = new SdkClient({ name: 'official-revocation', version: '1.0.0' });
  await client.connect(new SdkHttpTransport(new URL('/mcp', url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

/** Resolves with the time the subscription's stream ended and how. */
const whenClosed = (sub: McpSubscription): Promise<{ at: number; how: string }> => sub.closed.then((how) => ({ at: Date.now(), how }));

/**
 * Issue 24 item 4, MCP half. The SDK 1.x client speaks the stateless 2025 protocol: every
 * request is verified anew, the server keeps no GET stream (405), so "refused at once" is the
 * whole story. A 2026-07-28 client can hold a `subscriptions/listen` SSE stream open
 * indefinitely: it is closed by the revocation NOTIFY or the expiry timer, within a second.
 * AUTH_RECHECK_MS stays at its 5 s default, so no polling can pass these tests.
 */
describe('MCP: revocation and expiry refuse the next request and close open streams within a second', () => {
  let t: TestApp;
  const ns = uniqueNamespace('mcp-revoke');
  const grants = [{ namespacePattern: ns, capabilities: ['SEARCH', 'LIST'] }];

  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing' });
  });
  afterAll(async () => t?.stop());

  it('keeps no server-to-client GET stream for a 2025 client (nothing to outlive the token there)', async () => {
    const { token } = await createToken(t, grants, 'get-stream');
    const res = await fetch(new URL('/mcp', t.url), { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
    expect(res.status).toBe(405);
    await res.body?.cancel();
  });

  it('after revokeToken: the open listen stream ends within 1 s and the official client is refused at once', async () => {
    const { id, token } = await createToken(t, grants, 'revoked-mid-session');
    const official = await sdkClient(t.url, token);
    const modern = await mcpClient(t.url, token, 'modern');
    try {
      expect((await official.callTool({ name: 'list_facts', arguments: { namespace: ns } })).isError).toBeFalsy();
      const sub = await modern.listen({ toolsListChanged: true });
      const closed = whenClosed(sub);

      const revokedAt = Date.now();
      await gqlOk(t.url, t.adminToken, REVOKE, { id });
      const returnedAt = Date.now();
      const refusal = await official.callTool({ name: 'list_facts', arguments: { namespace: ns } }).then(
        () => undefined,
        (e: unknown) => e,
      );
      const refusedMs = Date.now() - returnedAt;
      const end = await Promise.race([closed, new Promise<undefined>((r) => setTimeout(r, 1500))]);
      const streamMs = end ? end.at - revokedAt : undefined;
      process.stdout.write(
        `MCP revocation: listen stream closed ${streamMs ?? 'NOT'} ms after revokeToken was sent (${end?.how ?? 'still open'}); ` +
          `the official client's next call refused ${refusedMs} ms after revokeToken returned: ${String(refusal).slice(0, 160)}\n`,
      );
      expect(refusal).toBeDefined();
      expect(String(refusal)).toMatch(/401|invalid_token|Unauthorized|revoked/i);
      expect(streamMs).toBeDefined();
      expect(streamMs).toBeLessThanOrEqual(1000);
      // And by hand: the very same bearer on a raw request.
      const raw = await rawMcpPost(t.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { authorization: `Bearer ${token}` });
      expect(raw.status).toBe(401);
    } finally {
      await official.close().catch(() => undefined);
      await modern.close().catch(() => undefined);
    }
  });

  it('at expiresAt: the open listen stream ends within 1 s and the official client is refused from then on', async () => {
    const expiresAt = new Date(Date.now() + 3000);
    const created = await gqlOk<{ createToken: { token: string } }>(t.url, t.adminToken, CREATE, {
      input: { name: 'expiring-mid-session', grants, expiresAt: expiresAt.toISOString() },
    });
    const token = created.createToken.token;
    const official = await sdkClient(t.url, token);
    const modern = await mcpClient(t.url, token, 'modern');
    try {
      expect((await official.callTool({ name: 'list_facts', arguments: { namespace: ns } })).isError).toBeFalsy();
      const sub = await modern.listen({ toolsListChanged: true });
      const end = await Promise.race([whenClosed(sub), new Promise<undefined>((r) => setTimeout(r, expiresAt.getTime() - Date.now() + 1500))]);
      const streamMs = end ? end.at - expiresAt.getTime() : undefined;
      const refusal = await official.callTool({ name: 'list_facts', arguments: { namespace: ns } }).then(
        () => undefined,
        (e: unknown) => e,
      );
      const refusedMs = Date.now() - expiresAt.getTime();
      process.stdout.write(
        `MCP expiry: listen stream closed ${streamMs ?? 'NOT'} ms after expiresAt (${end?.how ?? 'still open'}); ` +
          `the official client's next call (${refusedMs} ms after expiresAt) refused: ${String(refusal).slice(0, 160)}\n`,
      );
      expect(streamMs).toBeDefined();
      expect(streamMs).toBeLessThanOrEqual(1000);
      expect(refusal).toBeDefined();
      expect(String(refusal)).toMatch(/401|invalid_token|Unauthorized|expired/i);
    } finally {
      await official.close().catch(() => undefined);
      await modern.close().catch(() => undefined);
    }
  });
});
