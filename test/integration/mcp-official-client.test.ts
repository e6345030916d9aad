import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';

const MAIN = path.resolve(__dirname, '..', '..', 'dist', 'src', 'app', 'main.js');
const TOOLS = ['search_memory', 'add_memory', 'get_fact', 'get_provenance', 'list_facts', 'list_entities', 'what_changed', 'about', 'related_context'];
const MISSING = '0b5c7a4e-1f6d-4c1a-9a51-2f1e0c9d8b7a';

type Call = { name: string; arguments: Record<string, unknown> };
type Result = Awaited<ReturnType<Client['callTool']>>;

function textOf(r: Result): string {
  const content = (r.content ?? []) as Array<{ type: string; text?: string }>;
  return content
    .filter((c) => c.type === 'text')
    .map((c) => c.text ?? '')
    .join('\n');
}

/** How an agent reads a tool error from any client: isError and `CODE: message`. */
function readError(r: Result): { code: string; message: string } {
  expect(r.isError).toBe(true);
  expect(r.structuredContent).toBeUndefined();
  const m = /^([A-Z][A-Z_]*): ([\s\S]+)$/.exec(textOf(r));
  if (!m) throw new Error(`not "CODE: message": ${textOf(r)}`);
  return { code: m[1] ?? '', message: m[2] ?? '' };
}

/**
 * The official TypeScript SDK's own client (@modelcontextprotocol/sdk 1.x, 2025-11-25 protocol),
 * which validates every structuredContent against the tool's output schema and throws -32602 on
 * a mismatch: each tool once rightly (its answer validates) and once wrongly (its error is read).
 */
async function exerciseEveryTool(client: Client, ns: string, factId: string): Promise<Array<{ call: Call; error: { code: string; message: string } }>> {
  const { tools } = await client.listTools();
  expect(tools.map((x) => x.name)).toEqual(TOOLS);
  for (const tool of tools) expect(tool.outputSchema).toBeDefined();

  const right: Call[] = [
    { name: 'search_memory', arguments: { namespace: ns, query: 'Where does Dana live?' } },
    { name: 'add_memory', arguments: { namespace: ns, key: 'official:2', messages: [{ role: 'user', content: 'I like tea' }] } },
    { name: 'get_fact', arguments: { id: factId } },
    { name: 'get_provenance', arguments: { factId } },
    { name: 'list_facts', arguments: { namespace: ns } },
    { name: 'list_entities', arguments: { namespace: ns } },
    { name: 'what_changed', arguments: { namespace: ns, since: '2020-01-01T00:00:00Z' } },
    { name: 'about', arguments: { namespace: ns, name: 'Dana' } },
    { name: 'related_context', arguments: { namespace: ns, topic: 'Lisbon' } },
  ];
  for (const call of right) {
    const r = await client.callTool(call);
    expect({ tool: call.name, isError: r.isError ?? false, text: r.isError ? textOf(r) : '' }).toEqual({ tool: call.name, isError: false, text: '' });
    expect(r.structuredContent).toBeDefined();
  }

  const wrong: Array<{ call: Call; code: string }> = [
    { call: { name: 'search_memory', arguments: { namespace: ns, query: 'vim', limit: 'ten' } }, code: 'BAD_USER_INPUT' },
    { call: { name: 'add_memory', arguments: { namespace: ns, key: 'none', messages: [] } }, code: 'BAD_USER_INPUT' },
    { call: { name: 'get_fact', arguments: { id: MISSING } }, code: 'NOT_FOUND' },
    { call: { name: 'get_provenance', arguments: { factId: 'x' } }, code: 'BAD_USER_INPUT' },
    { call: { name: 'list_facts', arguments: { namespace: ns, first: 0 } }, code: 'BAD_USER_INPUT' },
    { call: { name: 'list_entities', arguments: { namespace: ns, after: 'not-a-cursor' } }, code: 'BAD_USER_INPUT' },
    { call: { name: 'what_changed', arguments: { namespace: ns, since: 'yesterday' } }, code: 'BAD_USER_INPUT' },
    { call: { name: 'about', arguments: { namespace: ns } }, code: 'BAD_USER_INPUT' },
    { call: { name: 'related_context', arguments: { namespace: ns, topic: 'Lisbon', depth: 9 } }, code: 'BAD_USER_INPUT' },
  ];
  const errors: Array<{ call: Call; error: { code: string; message: string } }> = [];
  for (const w of wrong) {
    const error = readError(await client.callTool(w.call));
    expect({ tool: w.call.name, code: error.code }).toEqual({ tool: w.call.name, code: w.code });
    expect(error.message.length).toBeGreaterThan(10);
    errors.push({ call: w.call, error });
  }
  return errors;
}

describe('the official MCP SDK client (@modelcontextprotocol/sdk) reads every tool answer and every tool error', () => {
  let t: TestApp;
  let token: string;
  let factId: string;
  const ns = uniqueNamespace('mcp-official');

  beforeAll(async () => {
    if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm test does)`);
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50' });
    token = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'SEARCH', 'READ', 'LIST'] }], 'official-client')).token;
    await gqlOk(
      t.url,
      t.adminToken,
      `mutation($ns: String!) { ingestEvent(input: { namespace: $ns, source: "chat", sourceEventId: "o-1", kind: MESSAGE, role: USER, actor: "Dana", content: "I live in Lisbon" }) { status } }`,
      { ns },
    );
    factId = await eventually(async () => {
      const r = await gqlOk<{ facts: { edges: Array<{ node: { id: string } }> } }>(
        t.url,
        t.adminToken,
        `query($ns: String!) { facts(namespace: $ns) { edges { node { id } } } }`,
        { ns },
      );
      return r.facts.edges[0]?.node.id;
    }, 'a derived fact');
  });

  afterAll(async () => {
    await t?.stop();
  });

  it('over Streamable HTTP', async () => {
    const client = new Client({ name: 'official-http', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', t.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    try {
      const errors = await exerciseEveryTool(client, ns, factId);
      // One failing call as the agent sees it (the report quotes this transcript).
      const missing = errors.find((e) => e.call.name === 'get_fact');
      process.stdout.write(`official client, failing call: ${JSON.stringify(missing?.call)} -> ${JSON.stringify(missing?.error)}\n`);
      expect(missing?.error.message).toMatch(/^no fact with id 0b5c7a4e/);
    } finally {
      await client.close();
    }
  });

  it('over stdio (medallion mcp)', async () => {
    const client = new Client({ name: 'official-stdio', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [MAIN, 'mcp', '--url', t.url],
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', MEDALLION_TOKEN: token, LOG_LEVEL: 'silent' },
        stderr: 'pipe',
      }),
    );
    try {
      await exerciseEveryTool(client, ns, factId);
    } finally {
      await client.close();
    }
  });
});
