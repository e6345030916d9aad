import fs from 'node:fs';
import net from 'node:net';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { uniqueNamespace } from '../support/stores';
import { dataOf, errorOf, MAIN, stdioTransport, textOf } from '../support/mcp-client';
import { createToken, eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';

describe('medallion mcp: a stdio MCP server for desktop clients, forwarding to the running service', () => {
  let t: TestApp;
  const ns = uniqueNamespace('mcp-stdio');
  const other = uniqueNamespace('mcp-stdio-other');

  beforeAll(async () => {
    if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm test does)`);
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50' });
  });

  afterAll(async () => {
    await t?.stop();
  });

  it('serves the tools over stdio with the token from MEDALLION_TOKEN, until the token is revoked', async () => {
    const { id, token } = await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'SEARCH', 'READ', 'LIST'] }], 'desktop-agent');
    const client = new Client({ name: 'desktop-client', version: '1.0.0' });
    await client.connect(stdioTransport(t.url, token));
    try {
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
      expect(tools.find((x) => x.name === 'add_memory')?.inputSchema.required).toEqual(['namespace', 'key', 'messages']);

      const added = await client.callTool({
        name: 'add_memory',
        arguments: { namespace: ns, key: 'desk:1', messages: [{ role: 'user', actor: 'Dana', content: 'I live in Lisbon' }] },
      });
      expect(dataOf<{ results: Array<{ status: string }> }>(added).results[0]?.status).toBe('CREATED');

      // The raw message is searchable once projected; the fact once derived.
      const hits = await eventually(
        async () => {
          const r = await client.callTool({ name: 'search_memory', arguments: { namespace: ns, query: 'Where does Dana live?' } });
          const h = dataOf<{ hits: Array<{ kind: string; fact: { statement: string } | null }> }>(r).hits;
          return h.some((x) => x.kind === 'FACT' && /Lisbon/.test(x.fact?.statement ?? '')) ? r : undefined;
        },
        'the Lisbon fact through stdio',
        60_000,
      );
      expect(textOf(hits)).toMatch(/Lisbon/);

      // A namespace outside the grant: the same FORBIDDEN tool error as over HTTP.
      const refused = errorOf(await client.callTool({ name: 'list_facts', arguments: { namespace: other } }));
      expect(refused.code).toBe('FORBIDDEN');
      expect(refused.message).toBe(`token "desktop-agent" lacks the "list" capability on namespace "${other}"; ask an admin for a grant`);
      // Bad arguments come back exactly as over HTTP.
      expect(errorOf(await client.callTool({ name: 'search_memory', arguments: { namespace: ns, query: 'x', limit: 500 } }))).toMatchObject({
        code: 'BAD_USER_INPUT',
        message: 'limit must be between 1 and 100',
      });

      // Revoked mid-session: the next call is refused, the session stays usable for the client.
      await gqlOk(t.url, t.adminToken, `mutation($id: ID!) { revokeToken(id: $id) }`, { id });
      expect(errorOf(await client.callTool({ name: 'list_facts', arguments: { namespace: ns } }))).toMatchObject({ code: 'UNAUTHENTICATED' });
    } finally {
      await client.close();
    }
  });

  it('serves even when the token is missing, refused, or the service is down, and tells the client why on every request', async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const cases: Array<{ env: Record<string, string>; url: string; reason: RegExp }> = [
      { env: {}, url: t.url, reason: /^UNAUTHENTICATED: MEDALLION_TOKEN is not set/ },
      { env: { MEDALLION_TOKEN: 'mm_wrong' }, url: t.url, reason: /^UNAUTHENTICATED: the service at \S+\/mcp refused MEDALLION_TOKEN \(401\)/ },
      {
        env: { MEDALLION_TOKEN: 'mm_any' },
        url: `http://127.0.0.1:${closed}`,
        reason: new RegExp(
          `^INTERNAL_SERVER_ERROR: cannot reach the service at http://127.0.0.1:${closed}/mcp \\(ECONNREFUSED\\): start it \\(npm start\\) or pass --url`,
        ),
      },
    ];
    for (const c of cases) {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [MAIN, 'mcp', '--url', c.url],
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'silent', ...c.env },
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      const client = new Client({ name: 'desktop-client', version: '1.0.0' });
      await client.connect(transport);
      try {
        // tools/list: a JSON-RPC error whose message is the reason (not "Connection closed").
        const listed = await client.listTools().then(
          () => 'listed',
          (e: unknown) => (e instanceof Error ? e.message : String(e)),
        );
        expect(listed).toMatch(new RegExp(c.reason.source.replace('^', '')));
        // A tool call: an isError result with the same reason.
        const r = await client.callTool({ name: 'search_memory', arguments: { namespace: ns, query: 'x' } });
        const e = errorOf(r);
        expect(`${e.code}: ${e.message}`).toMatch(c.reason);
      } finally {
        await client.close();
      }
      expect(stderr).toMatch(/serving on stdio anyway/);
    }
  });
});
