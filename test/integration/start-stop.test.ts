import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gqlOk, startTestApp } from '../support/test-app';

const SEARCH = `query($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q, limit: 5) { kind event { content } } }`;

describe('fast first answers and fast stops', () => {
  it('loads and warms the query embedder before the API serves: the first search loads no model', async () => {
    // API only: no worker loads the embedder for derivation, so only the warm-up can have.
    const t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing' }, { api: true, worker: false });
    try {
      expect(t.app.embedder).toEqual({ loads: 1, warmed: true });
      const health = await fetch(`${t.url}/health`);
      expect(health.status).toBe(200);
      const ns = uniqueNamespace('first-search');
      await gqlOk(t.url, t.adminToken, SEARCH, { ns, q: 'which editor?' });
      expect(t.app.embedder.loads).toBe(1);
    } finally {
      await t.stop();
    }
  });

  it('the first search after a start finds a message right after its ingest, without loading a model', async () => {
    const t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing' });
    try {
      const ns = uniqueNamespace('first-hit');
      await gqlOk(
        t.url,
        t.adminToken,
        `mutation($ns: String!) { ingestEvent(input: { namespace: $ns, source: "chat", sourceEventId: "m-1", kind: MESSAGE, role: USER, content: "I use vim for everything" }) { status } }`,
        { ns },
      );
      const acked = Date.now();
      await eventually(async () => {
        const r = await gqlOk<{ searchMemory: Array<{ kind: string }> }>(t.url, t.adminToken, SEARCH, { ns, q: 'vim' });
        return r.searchMemory.some((h) => h.kind === 'EVENT');
      }, 'an EVENT hit');
      process.stdout.write(`first EVENT hit ${Date.now() - acked} ms after the ingest was acknowledged\n`);
      expect(t.app.embedder.loads).toBe(1);
    } finally {
      await t.stop();
    }
  });

  it('stops within 3 s while an MCP client holds its event stream open', async () => {
    const t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing' });
    const ns = uniqueNamespace('stop');
    const { token } = await createToken(t, [{ namespacePattern: ns, capabilities: ['SEARCH'] }]);
    const client = new Client({ name: 'holds-a-stream', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', t.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    await client.listTools();
    // Let the client open its standalone GET stream.
    await new Promise((r) => setTimeout(r, 500));
    const t0 = Date.now();
    await t.stop();
    const ms = Date.now() - t0;
    process.stdout.write(`stop took ${ms} ms with an MCP client connected\n`);
    await client.close().catch(() => undefined);
    expect(ms).toBeLessThan(3000);
  });
});
