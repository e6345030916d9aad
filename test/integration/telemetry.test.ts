import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { Client } from 'pg';
import pino from 'pino';
import type { LRParser } from '@lezer/lr';
import { App, startApp } from '../../src/app/app';
import { loadConfig } from '../../src/common/config';
import { createTestDatabase, testStores } from '../support/stores';
import { createToken, eventually, gql, gqlOk } from '../support/test-app';
import { mcpClient } from '../support/mcp-client';
import { exportedNames, scrape as scrapeWith, Scrape, total } from '../support/prometheus';
import { parse as parseYaml } from 'yaml';

// The Prometheus project's own PromQL grammar (the one its web UI parses with). Its types are declared
// for the ES module build, which this CommonJS test cannot import statically; the package ships CommonJS too.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parser } = require('@prometheus-io/lezer-promql') as { parser: LRParser };

const DASHBOARD = path.resolve(__dirname, '..', '..', 'ops', 'grafana', 'medallion.json');
const ALERTS = path.resolve(__dirname, '..', '..', 'ops', 'prometheus', 'alerts.yml');
/** Series an alert rule may select that no medallion process exports: Prometheus's own `up`, and the chain verify's (trust-history). */
const NOT_EXPORTED_HERE = new Set(['up', 'medallion_chain_broken_namespaces', 'medallion_chain_last_verified_timestamp_seconds']);

interface DashboardPanel {
  title: string;
  type: string;
  targets?: Array<{ expr: string }>;
}

/** The metric names a PromQL expression selects, or the parse errors it has. */
function metricNamesOf(expr: string): { names: string[]; errors: string[] } {
  const tree = parser.parse(expr);
  const names: string[] = [];
  const errors: string[] = [];
  const cursor = tree.cursor();
  do {
    if (cursor.type.isError) errors.push(`parse error at ${cursor.from} in ${expr}`);
    if (cursor.name === 'Identifier' && cursor.node.parent?.name === 'VectorSelector') names.push(expr.slice(cursor.from, cursor.to));
  } while (cursor.next());
  return { names, errors };
}

/**
 * Issue 28 item 1 through the running service: the metrics a user reads (derivation lag,
 * GraphQL latency by bounded operation name, search per channel, model calls, MCP tools, job runs
 * by kind, projection), the dashboard built on exactly those names, and logs that carry no token
 * and no content.
 */
describe('telemetry: metrics, the Grafana dashboard, logs without secrets', () => {
  const logs: string[] = [];
  let app: App;
  let url: string;
  let db: { url: string; runtimeUrl: string; drop(): Promise<void> };
  const adminToken = `test-admin-${randomBytes(16).toString('hex')}`;
  const ns = `telemetry-${randomBytes(4).toString('hex')}`;
  const secretContent = `quasar-${randomBytes(6).toString('hex')}`;
  const secretQuery = `nebula-${randomBytes(6).toString('hex')}`;
  const bogusToken = `bogus-${randomBytes(12).toString('hex')}`;
  const metricsToken = `metrics-${randomBytes(16).toString('hex')}`;
  let token = '';
  const scrape = (u: string) => scrapeWith(u, metricsToken);

  beforeAll(async () => {
    db = await createTestDatabase();
    const stores = testStores();
    const config = loadConfig({
      DATABASE_URL: db.url,
      DATABASE_RUNTIME_URL: db.runtimeUrl,
      NEO4J_URI: stores.neo4j.uri,
      NEO4J_USER: stores.neo4j.user,
      NEO4J_PASSWORD: stores.neo4j.password,
      ADMIN_TOKEN: adminToken,
      PORT: '0',
      DATA_DIR: path.join(os.tmpdir(), 'medallion-test-data'),
      PROJECTOR_POLL_MS: '50',
      DERIVE_MAX_WAIT_MS: '0',
      DERIVE_POLL_MS: '50',
      GOLD_PROMOTE_SETTLE_SECONDS: '0',
      METRICS_TOKEN: metricsToken,
    });
    // Every structured log line the service writes, at the most verbose level it has.
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        logs.push(chunk.toString());
        done();
      },
    });
    const log = pino({ name: 'medallion', level: 'trace' }, sink);
    app = await startApp(config, { postgresUrl: db.url, postgresRuntimeUrl: db.runtimeUrl, neo4j: stores.neo4j }, { api: true, worker: true }, log);
    url = app.http?.url ?? '';
    token = (
      await createToken({ app, url, adminToken, databaseUrl: db.url, runtimeDatabaseUrl: db.runtimeUrl, stop: async () => undefined }, [
        { namespacePattern: ns, capabilities: ['INGEST', 'READ', 'SEARCH', 'REVIEW'] },
      ])
    ).token;
  });

  afterAll(async () => {
    await app?.stop();
    await db?.drop();
  });

  const ingest = (content: string, id: string) =>
    gqlOk<{ ingestEvents: Array<{ status: string }> }>(url, token, `mutation IngestTurn($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`, {
      input: [{ namespace: ns, source: 'telemetry-test', sourceEventId: id, kind: 'MESSAGE', role: 'USER', actor: 'user', conversationId: 'c1', content }],
    });

  const derived = () =>
    eventually(
      async () => {
        const c = new Client({ connectionString: db.url });
        await c.connect();
        try {
          const { rows } = await c.query<{ n: number }>(
            `SELECT (SELECT count(*) FROM ops.derivation_queue WHERE namespace = $1 AND status <> 'done')::int
                + (SELECT count(*) FROM ops.outbox WHERE namespace = $1 AND processed_at IS NULL)::int AS n`,
            [ns],
          );
          return rows[0]?.n === 0;
        } finally {
          await c.end();
        }
      },
      'derivation and projection of the namespace',
      60_000,
    );

  it('has every job kind at 0 runs from the start, a process label on every series, latency buckets to 60 s, and /metrics behind METRICS_TOKEN', async () => {
    const first = await scrape(url);
    for (const kind of ['promote', 'decay', 'prune', 'rebuild_silver', 'rebuild_graph', 'reembed']) {
      for (const outcome of ['success', 'failed', 'skipped', 'waiting'])
        expect([
          kind,
          outcome,
          first.samples.some((x) => x.name === 'medallion_job_runs_total' && x.labels.kind === kind && x.labels.outcome === outcome),
        ]).toEqual([kind, outcome, true]);
      expect([kind, first.samples.some((x) => x.name === 'medallion_job_run_seconds_count' && x.labels.kind === kind)]).toEqual([kind, true]);
    }
    expect(total(first, 'medallion_job_runs_total', { kind: 'decay' })).toBe(0);
    expect(first.samples.filter((x) => x.labels.process !== 'api+worker')).toEqual([]);
    await gqlOk(url, token, `query { viewer { name } }`);
    const les = (await scrape(url)).samples.filter((x) => x.name === 'medallion_graphql_operation_seconds_bucket').map((x) => x.labels.le);
    expect(les).toEqual(expect.arrayContaining(['5', '10', '30', '60', '+Inf']));

    for (const authorization of [undefined, 'Bearer wrong-token', `Basic ${metricsToken}`, `Bearer ${metricsToken}x`]) {
      const res = await fetch(`${url}/metrics`, authorization ? { headers: { authorization } } : {});
      expect([authorization, res.status, res.headers.get('www-authenticate')]).toEqual([authorization, 401, 'Bearer realm="metrics"']);
      expect(await res.text()).not.toMatch(/medallion_/);
    }
    expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).status).toBe(200);
  });

  it('exports derivation lag, which grows while an event waits and is 0 once derived; queue rows carry no traceparent with tracing off', async () => {
    const derivation = app.stages.get('derivation');
    expect(derivation).toBeDefined();
    await derivation?.stop();
    try {
      expect((await ingest(`I keep my bike in the shed, code ${secretContent}.`, 'e1')).ingestEvents[0]?.status).toBe('CREATED');
      await new Promise((r) => setTimeout(r, 1_200));
      const waiting = await scrape(url);
      expect(total(waiting, 'medallion_derivation_pending')).toBe(1);
      expect(total(waiting, 'medallion_derivation_lag_seconds')).toBeGreaterThanOrEqual(1);
    } finally {
      derivation?.start();
    }
    await derived();
    const done = await scrape(url);
    expect(total(done, 'medallion_derivation_pending')).toBe(0);
    expect(total(done, 'medallion_derivation_lag_seconds')).toBe(0);
    expect(total(done, 'medallion_model_call_seconds_count', { operation: 'extract' })).toBeGreaterThanOrEqual(1);
    expect(total(done, 'medallion_model_call_seconds_count', { operation: 'embed' })).toBeGreaterThanOrEqual(1);
    expect(total(done, 'medallion_projection_rows_total', { outcome: 'projected' })).toBeGreaterThanOrEqual(1);
    expect(total(done, 'medallion_projection_lag_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(total(done, 'medallion_derive_events_total')).toBe(1);

    // Tracing is off by default: nothing is stored for it.
    const c = new Client({ connectionString: db.url });
    await c.connect();
    try {
      const q = await c.query(`SELECT count(*)::int AS n FROM ops.derivation_queue WHERE namespace = $1 AND traceparent IS NOT NULL`, [ns]);
      const o = await c.query(`SELECT count(*)::int AS n FROM ops.outbox WHERE namespace = $1 AND payload ? 'traceparent'`, [ns]);
      expect([q.rows[0].n, o.rows[0].n]).toEqual([0, 0]);
    } finally {
      await c.end();
    }
  });

  it('times searches per channel and GraphQL operations by name, and MCP tools by tool', async () => {
    const search = `query FindTurn($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q) { kind score } }`;
    // The app runs with the defaults, so its background search warm-up (SEARCH_WARM_UP_SECONDS) may
    // still run: a real search ends it, and the count starts once its last search is done (a
    // warm-up search calls the model too, so it shows in medallion_model_call_seconds).
    await gqlOk(url, token, `query($ns: String!) { searchMemory(namespace: $ns, query: "warm") { kind } }`, { ns });
    // Under the defaults it ran; it ended at that search, or earlier at its budget on a slow run.
    expect(['real search', 'budget']).toContain((await app.searchWarmUp)?.reason);
    const before = await scrape(url);
    await gqlOk(url, token, search, { ns, q: `where is the bike ${secretQuery}` });
    await gqlOk(url, token, `query($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q) { kind } }`, { ns, q: 'shed' });
    const client = await mcpClient(url, token);
    try {
      const r = await client.callTool({ name: 'search_memory', arguments: { namespace: ns, query: `bike ${secretQuery}` } });
      expect(r.isError).toBeFalsy();
      const refused = await client.callTool({ name: 'search_memory', arguments: { namespace: ns, query: ' ' } });
      expect(refused.isError).toBe(true);
    } finally {
      await client.close();
    }
    const after = await scrape(url);
    const delta = (name: string, labels: Record<string, string> = {}) => total(after, name, labels) - total(before, name, labels);
    // Named by the root field (FindTurn is not an operation of the client package, the other has no name).
    expect(delta('medallion_graphql_operation_seconds_count', { type: 'query', operation: 'searchMemory' })).toBe(2);
    expect(delta('medallion_search_seconds_count')).toBe(3);
    for (const channel of ['embed', 'keyword', 'vector', 'event_keyword', 'event_vector'])
      expect([channel, delta('medallion_search_channel_seconds_count', { channel })]).toEqual([channel, 3]);
    expect(delta('medallion_model_call_seconds_count', { operation: 'embed_query' })).toBe(3);
    expect(delta('medallion_mcp_tool_seconds_count', { tool: 'search_memory', outcome: 'ok' })).toBe(1);
    expect(delta('medallion_mcp_tool_seconds_count', { tool: 'search_memory', outcome: 'error' })).toBe(1);
  });

  it('labels operations only from a fixed set: client-package operations, root fields, other; never a name a client chose', async () => {
    const before = await scrape(url);
    const series = (sc: Scrape) => new Set(sc.samples.filter((x) => x.name === 'medallion_graphql_operation_seconds_count').map((x) => x.labels.operation));
    // Anonymous (no token) and named by the client: nothing of the name reaches /metrics.
    const leaked = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query Patient_alice_HIV_positive { __typename }' }),
    });
    expect(leaked.status).toBe(200);
    // One client sending a fresh name each time adds no series.
    for (let i = 0; i < 120; i++) await gqlOk(url, undefined, `query Probe${i} { __typename }`);
    await gqlOk(url, token, `query Mine($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`, { ns });
    // The client package's own operation keeps its name.
    await gqlOk(url, token, `query SearchMemory($ns: String!) { searchMemory(namespace: $ns, query: "x") { kind } }`, { ns });
    const after = await scrape(url);
    const added = [...series(after)].filter((op) => !series(before).has(op)).sort();
    expect(added.filter((op) => !['other', 'pipelineStatus', 'SearchMemory'].includes(op))).toEqual([]);
    expect(
      total(after, 'medallion_graphql_operation_seconds_count', { operation: 'other' }) -
        total(before, 'medallion_graphql_operation_seconds_count', { operation: 'other' }),
    ).toBe(121);
    expect(total(after, 'medallion_graphql_operation_seconds_count', { operation: 'pipelineStatus' })).toBeGreaterThanOrEqual(1);
    expect(total(after, 'medallion_graphql_operation_seconds_count', { operation: 'SearchMemory' })).toBeGreaterThanOrEqual(1);
    const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text();
    expect(text).not.toMatch(/Patient_alice|Probe\d/);
  });

  it('counts job runs by kind (promotion here; decay and pruning kinds are counted the same way)', async () => {
    const before = await scrape(url);
    const job = await gqlOk<{ promote: { id: string } }>(url, token, `mutation($ns: String!) { promote(namespace: $ns, reason: "telemetry test") { id } }`, {
      ns,
    });
    await eventually(
      async () => {
        const r = await gqlOk<{ job: { status: string } | null }>(url, token, `query($id: ID!) { job(id: $id) { status } }`, { id: job.promote.id });
        return r.job?.status === 'succeeded' || r.job?.status === 'failed';
      },
      'the promotion job',
      60_000,
    );
    const after = await scrape(url);
    // One structured line at its start and one at its end, with the job's id and kind (no params, no content).
    const lines = logs
      .flatMap((l) => l.split('\n'))
      .filter((l) => l.includes(job.promote.id))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['job started', 'job finished']));
    expect(lines.find((l) => l.msg === 'job finished')).toMatchObject({
      level: 30,
      job: job.promote.id,
      kind: 'promote',
      outcome: 'success',
      ms: expect.any(Number),
    });
    const runs = (s: Scrape) => total(s, 'medallion_job_runs_total', { kind: 'promote' });
    expect(runs(after) - runs(before)).toBeGreaterThanOrEqual(1);
    expect(total(after, 'medallion_job_run_seconds_count', { kind: 'promote' })).toBeGreaterThanOrEqual(1);
  });

  it('has a dashboard whose every panel expression parses as PromQL and names only metrics the running service exports', async () => {
    const dashboard = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as { panels: DashboardPanel[] };
    const exported = exportedNames(await scrape(url));
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
    expect(exprs.length).toBeGreaterThanOrEqual(25);
    const problems: string[] = [];
    const referenced = new Set<string>();
    for (const { panel, expr } of exprs) {
      const { names, errors } = metricNamesOf(expr);
      problems.push(...errors.map((e) => `${panel}: ${e}`));
      if (names.length === 0) problems.push(`${panel}: ${expr} selects no metric`);
      for (const name of names) {
        referenced.add(name);
        if (!exported.has(name)) problems.push(`${panel}: ${name} is not exported by /metrics`);
      }
    }
    expect(problems).toEqual([]);
    // The alert rules select only what the service exports (a typo would keep an alert quiet for ever).
    const rules = (parseYaml(fs.readFileSync(ALERTS, 'utf8')) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> }).groups.flatMap(
      (g) => g.rules,
    );
    expect(rules.length).toBeGreaterThanOrEqual(9);
    const ruleProblems = rules.flatMap((r) => {
      const { names, errors } = metricNamesOf(r.expr);
      return [...errors, ...names.filter((n) => !exported.has(n) && !NOT_EXPORTED_HERE.has(n)).map((n) => `${r.alert}: ${n} is not exported by /metrics`)];
    });
    expect(ruleProblems).toEqual([]);
    // The list, each on the dashboard.
    for (const name of [
      'medallion_derivation_lag_seconds',
      'medallion_derive_batch_fallbacks_total',
      'medallion_derive_dead_letters_open',
      'medallion_model_call_seconds_bucket',
      'medallion_model_call_errors_total',
      'medallion_outbox_oldest_pending_seconds',
      'medallion_job_runs_total',
      'medallion_graphql_operation_seconds_bucket',
      'medallion_mcp_tool_seconds_bucket',
      'medallion_search_channel_seconds_bucket',
    ])
      expect([name, referenced.has(name)]).toEqual([name, true]);
  });

  it('logs malformed MCP requests at warn with code and message, without a stack', async () => {
    const from = logs.length;
    const post = (body: string, contentType = 'application/json') =>
      fetch(`${url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': contentType, accept: 'application/json, text/event-stream' },
        body,
      });
    for (const body of ['{"jsonrpc":"2.0","id":1}', '[1,2]', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":5}'])
      expect([body, (await post(body)).status]).toEqual([body, 400]);
    expect((await post('x', 'text/plain')).status).toBe(415);
    const lines = logs
      .slice(from)
      .flatMap((l) => l.split('\n'))
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { level: number; msg: string; err?: unknown });
    const refused = lines.filter((l) => l.msg === 'MCP request refused');
    expect(refused.length).toBeGreaterThanOrEqual(4);
    expect(refused.every((l) => l.level === 40)).toBe(true);
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    expect(JSON.stringify(lines)).not.toMatch(/stack|\bat \S+ \(/);
  });

  it('writes no token and no content to the logs', async () => {
    // A refused token and a rejected event go through the paths that log warnings.
    const refused = await gql(url, bogusToken, `query($ns: String!) { searchMemory(namespace: $ns, query: "bike") { kind } }`, { ns });
    expect(refused.errors?.length).toBeGreaterThan(0);
    await gql(url, `Bearer-ish ${bogusToken}`, `mutation { ingestEvents(input: []) { status } }`);
    await gql(url, token, `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status reason } }`, {
      input: [{ namespace: `${ns}-forbidden`, source: 't', sourceEventId: 'x', kind: 'MESSAGE', content: `forbidden ${secretContent}` }],
    });
    await app.stages.get('derivation')?.wake();
    const text = logs.join('');
    expect(logs.length).toBeGreaterThan(5); // the sink did capture the service's logs
    for (const secret of [token, adminToken, bogusToken, metricsToken, secretContent, secretQuery])
      expect([secret, text.includes(secret)]).toEqual([secret, false]);
  });
});
