import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { uniqueNamespace } from '../support/stores';
import { createToken, startTestApp, TestApp } from '../support/test-app';

const MAIN = path.resolve(__dirname, '..', '..', 'dist', 'src', 'app', 'main.js');
const SCRIPT = path.resolve(__dirname, '..', 'support', 'mcp_python_client.py');

type Answer = { isError?: boolean; text?: string; rpcError?: number; connectError?: number | string; message?: string };

/**
 * Runs the Python SDK script (test/support/mcp_python_client.py) on `spec`; fails with its stderr if
 * it cannot run. Asynchronous: the service answering it runs in this process.
 */
function python(spec: Record<string, unknown>): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', [SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'], timeout: 90_000 });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) => reject(new Error(`python3 could not run: ${e.message}`)));
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`python3 ${SCRIPT} exited ${code} (pip install mcp==2.3.0; .ci/run does): ${err}`));
      resolve(JSON.parse(out.trim().split('\n').pop() ?? '[]') as Answer[]);
    });
    child.stdin.end(JSON.stringify(spec));
  });
}

/**
 * One MCP error model on every transport, read by the official Python SDK (`mcp` on PyPI, pinned
 * in .ci/run) over Streamable HTTP and over stdio (`medallion mcp`): a refusal the server can
 * explain is an `isError` tool result `CODE: message`; only an unusable token is refused before
 * any tool, as a JSON-RPC error whose message says why (HTTP 401 over HTTP).
 */
describe('the official Python MCP SDK reads every refusal with its code, over HTTP and stdio', () => {
  let t: TestApp;
  let token: string;
  const mine = uniqueNamespace('py-mine');
  const theirs = uniqueNamespace('py-theirs');

  beforeAll(async () => {
    if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm test does)`);
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50' });
    // Search and list on its own namespace; no ingest anywhere.
    token = (await createToken(t, [{ namespacePattern: mine, capabilities: ['SEARCH', 'LIST'] }], 'py-agent')).token;
  });

  afterAll(async () => {
    await t?.stop();
  });

  const calls = [
    { name: 'list_facts', arguments: { namespace: mine } },
    { name: 'list_facts', arguments: { namespace: theirs } },
    { name: 'add_memory', arguments: { namespace: mine, key: 'k', messages: [{ content: 'x' }] } },
    { name: 'list_facts', arguments: { namespace: 'not a namespace!' } },
    { name: 'search_memory', arguments: { namespace: mine, query: 'x', limit: 500 } },
  ];
  const expected = [
    { isError: false, text: expect.stringMatching(/^no facts in /) },
    { isError: true, text: `FORBIDDEN: token "py-agent" lacks the "list" capability on namespace "${theirs}"; ask an admin for a grant` },
    { isError: true, text: `FORBIDDEN: token "py-agent" lacks the "ingest" capability on namespace "${mine}"; ask an admin for a grant` },
    { isError: true, text: expect.stringMatching(/^BAD_USER_INPUT: namespace: a namespace is 1-8 segments/) },
    { isError: true, text: 'BAD_USER_INPUT: limit must be between 1 and 100' },
  ];
  const stdio = (env: Record<string, string>) => ({
    transport: 'stdio',
    command: process.execPath,
    args: [MAIN, 'mcp', '--url', t.url],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'silent', ...env },
  });

  it('over Streamable HTTP', async () => {
    expect(await python({ transport: 'http', url: `${t.url}/mcp`, token, calls })).toEqual(expected);
  });

  it('over stdio (medallion mcp)', async () => {
    expect(await python({ ...stdio({ MEDALLION_TOKEN: token }), calls })).toEqual(expected);
  });

  it('an unusable token: the reason, not "-32603 Server returned an error response" or "Connection closed"', async () => {
    const http = await python({ transport: 'http', url: `${t.url}/mcp`, token: 'mm_wrong', calls: calls.slice(0, 1) });
    expect(http).toEqual([{ connectError: -32001, message: expect.stringMatching(/^UNAUTHENTICATED: missing, invalid, revoked or expired API token/) }]);
    const overStdio = await python({ ...stdio({ MEDALLION_TOKEN: 'mm_wrong' }), calls: calls.slice(0, 1) });
    expect(overStdio).toEqual([{ isError: true, text: expect.stringMatching(/^UNAUTHENTICATED: the service at \S+ refused MEDALLION_TOKEN \(401\)/) }]);
  });
});
