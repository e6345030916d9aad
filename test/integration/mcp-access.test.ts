import http from 'node:http';
import { Client, SdkHttpError, UnauthorizedError } from '@modelcontextprotocol/client';
import { uniqueNamespace } from '../support/stores';
import { dataOf, errorOf, mcpClient, rawMcpPost } from '../support/mcp-client';
import { createToken, eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';

const TOOL_CALL = (name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** What a tool call's refusal looks like to the SDK client: a tool error with its code, as over stdio. */
async function refusal(client: Client, name: string, args: Record<string, unknown>): Promise<{ code: string; message: string }> {
  return errorOf(await client.callTool({ name, arguments: args }));
}

describe('MCP access: bearer tokens per request, capabilities as scopes, namespaces as a firewall', () => {
  let t: TestApp;
  const mine = uniqueNamespace('mcp-mine');
  const theirs = uniqueNamespace('mcp-theirs');
  let theirFactId: string;

  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50', MCP_ALLOWED_HOSTS: 'memory.example.com' });
    // Someone else's memory, with a fact in it.
    const owner = (await createToken(t, [{ namespacePattern: theirs, capabilities: ['INGEST', 'READ', 'LIST', 'SEARCH'] }], 'owner')).token;
    const c = await mcpClient(t.url, owner);
    await c.callTool({ name: 'add_memory', arguments: { namespace: theirs, key: 'secret', messages: [{ role: 'user', content: 'I live in Atlantis' }] } });
    theirFactId = await eventually(
      async () => dataOf<{ facts: Array<{ id: string }> }>(await c.callTool({ name: 'list_facts', arguments: { namespace: theirs } })).facts[0]?.id,
      'a fact in the other namespace',
      60_000,
    );
    await c.close();
  });

  afterAll(async () => {
    await t?.stop();
  });

  it('refuses a request without a token, or with an unknown one, with 401, a Bearer challenge and a JSON-RPC error saying why', async () => {
    const attempts: Array<Record<string, string>> = [{}, { authorization: 'Bearer mm_not-a-real-token' }, { authorization: 'Basic Zm9vOmJhcg==' }];
    for (const headers of attempts) {
      const res = await rawMcpPost(t.url, INITIALIZE, headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
      // A JSON-RPC error body: what the SDKs surface as the reason (the Python SDK reads nothing else at a 4xx).
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toMatchObject({
        jsonrpc: '2.0',
        error: { code: -32001, message: expect.stringMatching(/^UNAUTHENTICATED: .*Authorization: Bearer <token>/), data: { code: 'UNAUTHENTICATED' } },
      });
    }
    const err = await mcpClient(t.url, undefined).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SdkHttpError);
    expect((err as SdkHttpError).status).toBe(401);
  });

  it('refuses every tool without its capability on the namespace with a FORBIDDEN tool error naming it (HTTP 200, as over stdio)', async () => {
    // Holds everything but the one capability each tool needs (on the namespace the call names).
    const cases: Array<{ tool: string; needs: string; args: Record<string, unknown> }> = [
      { tool: 'search_memory', needs: 'search', args: { namespace: mine, query: 'x' } },
      { tool: 'add_memory', needs: 'ingest', args: { namespace: mine, key: 'k', messages: [{ content: 'x' }] } },
      { tool: 'get_fact', needs: 'read', args: { id: theirFactId } },
      { tool: 'get_provenance', needs: 'read', args: { factId: theirFactId } },
      { tool: 'list_facts', needs: 'list', args: { namespace: mine } },
      { tool: 'list_entities', needs: 'list', args: { namespace: mine } },
      { tool: 'what_changed', needs: 'list', args: { namespace: mine, since: '2026-01-01T00:00:00Z' } },
      { tool: 'about', needs: 'read', args: { namespace: mine, name: 'Bob' } },
      { tool: 'related_context', needs: 'read', args: { namespace: mine, topic: 'Bob' } },
    ];
    const all = ['INGEST', 'SEARCH', 'READ', 'LIST'];
    for (const c of cases) {
      const token = (await createToken(t, [{ namespacePattern: mine, capabilities: all.filter((x) => x.toLowerCase() !== c.needs) }], `lacks-${c.needs}`))
        .token;
      const client = await mcpClient(t.url, token);
      try {
        const err = await refusal(client, c.tool, c.args);
        expect({ tool: c.tool, code: err.code }).toEqual({ tool: c.tool, code: 'FORBIDDEN' });
        expect(err.message).toContain(`lacks-${c.needs}`);
        expect(err.message).toContain(`"${c.needs}"`);
      } finally {
        await client.close();
      }
      // On the wire: a tool result, not an HTTP status (a tool the agent may not use is the agent's business, not the transport's).
      const call = await rawMcpPost(t.url, TOOL_CALL(c.tool, c.args), {
        authorization: `Bearer ${token}`,
        'mcp-protocol-version': '2025-06-18',
      });
      expect(call.headers.get('www-authenticate')).toBeNull();
      expect({ status: call.status, forbidden: (await call.text()).includes('FORBIDDEN: ') }).toEqual({ status: 200, forbidden: true });
    }
  });

  it('keeps each token inside its namespaces: other namespaces are refused, their ids look missing', async () => {
    const token = (await createToken(t, [{ namespacePattern: mine, capabilities: ['INGEST', 'SEARCH', 'READ', 'LIST'] }], 'mine-only')).token;
    const client = await mcpClient(t.url, token);
    try {
      for (const [tool, args] of [
        ['search_memory', { namespace: theirs, query: 'Atlantis' }],
        ['add_memory', { namespace: theirs, key: 'intrude', messages: [{ content: 'planted' }] }],
        ['list_facts', { namespace: theirs }],
        ['list_entities', { namespace: theirs }],
        ['what_changed', { namespace: theirs, since: '2026-01-01T00:00:00Z' }],
        ['related_context', { namespace: theirs, topic: 'Atlantis' }],
      ] as const) {
        const err = await refusal(client, tool, args);
        expect({ tool, code: err.code }).toEqual({ tool, code: 'FORBIDDEN' });
        expect(err.message).toContain(theirs);
      }
      // A malformed namespace is bad input, not a missing capability.
      expect(await refusal(client, 'list_facts', { namespace: 'no spaces allowed!' })).toMatchObject({
        code: 'BAD_USER_INPUT',
        message: expect.stringMatching(/^namespace: a namespace is 1-8 segments/),
      });
      // By id, the namespace is the row's: outside the grants it is NOT_FOUND, as GraphQL's null.
      expect(errorOf(await client.callTool({ name: 'get_fact', arguments: { id: theirFactId } }))).toMatchObject({ code: 'NOT_FOUND' });
      expect(errorOf(await client.callTool({ name: 'get_provenance', arguments: { factId: theirFactId } }))).toMatchObject({ code: 'NOT_FOUND' });
      // A search in its own namespace never shows the neighbour's memory.
      const own = await client.callTool({ name: 'add_memory', arguments: { namespace: mine, key: 'own', messages: [{ content: 'Atlantis is a myth' }] } });
      expect(dataOf<{ results: Array<{ status: string }> }>(own).results[0]?.status).toBe('CREATED');
      let last = '';
      const hits = await eventually(
        async () => {
          const r = await client.callTool({ name: 'search_memory', arguments: { namespace: mine, query: 'Atlantis' } });
          last = JSON.stringify(r);
          const h = dataOf<{ hits: Array<{ fact: { namespace: string } | null; event: { namespace: string; content: string } | null }> }>(r).hits;
          return h.length > 0 ? h : undefined;
        },
        'own event searchable',
        60_000,
      ).catch((err: unknown) => {
        throw new Error(`${String(err)}; last answer: ${last}`);
      });
      expect(hits.every((h) => (h.fact ?? h.event)?.namespace === mine)).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('stops a revoked token on its next request, mid-session', async () => {
    const { id, token } = await createToken(t, [{ namespacePattern: mine, capabilities: ['SEARCH', 'LIST'] }], 'soon-revoked');
    const client = await mcpClient(t.url, token);
    try {
      expect((await client.callTool({ name: 'list_facts', arguments: { namespace: mine } })).isError).toBeFalsy();
      await gqlOk(t.url, t.adminToken, `mutation($id: ID!) { revokeToken(id: $id) }`, { id });
      const err = await client.callTool({ name: 'list_facts', arguments: { namespace: mine } }).then(
        () => undefined,
        (e: unknown) => e,
      );
      // The SDK's answer to a 401 from a token-only auth provider (no OAuth flow to re-run).
      expect(err).toBeInstanceOf(UnauthorizedError);
    } finally {
      await client.close();
    }
  });

  it('refuses DNS-rebinding hosts and foreign browser origins before authenticating', async () => {
    const token = (await createToken(t, [{ namespacePattern: mine, capabilities: ['SEARCH'] }], 'rebind')).token;
    const auth = { authorization: `Bearer ${token}` };
    expect((await rawMcpPost(t.url, INITIALIZE, auth)).status).toBe(200);
    // node's fetch does not let a caller set Host; a raw request does.
    const port = new URL(t.url).port;
    const status = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            path: '/mcp',
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...auth, ...headers },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify(INITIALIZE));
      });
    expect(await status({ host: `evil.example:${port}` })).toBe(403);
    expect(await status({ origin: 'http://evil.example' })).toBe(403);
    expect(await status({ host: `localhost:${port}`, origin: `http://localhost:${port}` })).toBe(200);
    // A name the operator listed in MCP_ALLOWED_HOSTS (a DNS name or proxy in front of the service).
    expect(await status({ host: `memory.example.com:${port}`, origin: 'https://memory.example.com' })).toBe(200);
    expect(await status({ host: `other.example.com:${port}` })).toBe(403);
  });
});
