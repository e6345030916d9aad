import http from 'node:http';
import { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { namespaceHash } from '../../src/platform/telemetry/tracing';
import { freePort } from '../../src/platform/local-services/free-port';
import { createTestDatabase } from '../support/stores';
import { createToken, eventually, TestApp } from '../support/test-app';
import { mcpClient } from '../support/mcp-client';
import { spawnService, spawnWorker, WorkerProcess } from '../support/worker-process';
import { scrape, total } from '../support/prometheus';

/** One span as an OTLP/JSON export carries it, with its process's resource attributes. */
interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
  process: string;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type OtlpAttribute = { key: string; value: OtlpValue };
interface OtlpExport {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        attributes?: OtlpAttribute[];
        links?: Array<{ traceId: string; spanId: string }>;
      }>;
    }>;
  }>;
}

const valueOf = (v: OtlpValue): unknown => v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue;
const attributesOf = (list: OtlpAttribute[] = []): Record<string, unknown> => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

/** A local OTLP/HTTP receiver: POST /v1/traces with the JSON encoding the exporter sends (gzip or not). */
async function startReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; raw: string[]; refuse: { on: boolean }; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const raw: string[] = [];
  // While on, every export is answered 503 (a collector that is down or overloaded).
  const refuse = { on: false };
  const server = http.createServer((req, res) => {
    if (refuse.on) {
      req.resume();
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('collector unavailable');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      if (req.url === '/v1/traces' && String(req.headers['content-type']).startsWith('application/json')) {
        const text = body.toString('utf8');
        raw.push(text);
        const data = JSON.parse(text) as OtlpExport;
        for (const rs of data.resourceSpans ?? []) {
          const resource = attributesOf(rs.resource?.attributes);
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              spans.push({
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId || undefined,
                name: s.name,
                attributes: attributesOf(s.attributes),
                links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
                process: String(resource['medallion.process']),
              });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    raw,
    refuse,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Issue 28 item 2: one trace from the API's request to the worker's derivation batch and
 * projection, in two OS processes, exported over OTLP to a receiver this test runs; the trace
 * carries ids, counts and a namespace hash, never content, token or namespace name.
 */
describe('tracing: one trace across the API and a worker process', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let api: TestApp;
  let apiProcess: WorkerProcess;
  let worker: WorkerProcess;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  const ns = `traced-${randomBytes(4).toString('hex')}`;
  const secretContent = `pulsar-${randomBytes(6).toString('hex')}`;
  const secretQuery = `comet-${randomBytes(6).toString('hex')}`;
  let token = '';
  const metricsToken = `metrics-${randomBytes(16).toString('hex')}`;

  beforeAll(async () => {
    receiver = await startReceiver();
    // Both are the compiled service in their own OS process, as deployed: `serve --no-worker` and
    // `worker`. (The exporter loads node:http with a dynamic import, which jest's module sandbox refuses.)
    db = await createTestDatabase();
    const port = await freePort();
    const adminToken = `test-admin-${randomBytes(16).toString('hex')}`;
    apiProcess = spawnService('serve', db.url, { PORT: String(port), ADMIN_TOKEN: adminToken, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, ['--no-worker']);
    worker = spawnWorker(db.url, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, METRICS_PORT: '0', METRICS_TOKEN: metricsToken, WORKER_ID: 'traced-worker' });
    const url = `http://127.0.0.1:${port}`;
    await eventually(
      async () =>
        (await fetch(`${url}/health`)
          .then((r) => r.ok)
          .catch(() => false)) ||
        (apiProcess.child.exitCode !== null && Promise.reject(new Error(apiProcess.output.join('')))),
      'the API process to serve',
      90_000,
    );
    api = { url, adminToken, databaseUrl: db.url } as TestApp;
    token = (await createToken(api, [{ namespacePattern: ns, capabilities: ['INGEST', 'READ', 'SEARCH'] }])).token;
  });

  afterAll(async () => {
    if (process.env.DEBUG_TRACES)
      process.stderr.write(
        `spans: ${JSON.stringify(receiver.spans.map((s) => [s.process, s.name, s.traceId.slice(0, 6), s.spanId.slice(0, 6), s.parentSpanId?.slice(0, 6)]))}\n`,
      );
    await Promise.all([worker?.kill('SIGTERM'), apiProcess?.kill('SIGTERM')]);
    await receiver?.close();
    await db?.drop();
  });

  /** POSTs a GraphQL operation as part of the caller's own trace (W3C traceparent header). */
  const post = async (traceparent: string, query: string, variables: Record<string, unknown>): Promise<unknown> => {
    const res = await fetch(`${api.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, traceparent },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as { data?: unknown; errors?: unknown[] };
    if (body.errors?.length) throw new Error(JSON.stringify(body.errors));
    return body.data;
  };

  it('follows ingest → derivation batch → projection → search in one trace, across both processes', async () => {
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const traceparent = `00-${traceId}-${callerSpan}-01`;
    // `Remember` is not an operation of the client package: the span is named by the root field.
    await post(traceparent, `mutation Remember($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`, {
      input: [1, 2, 3].map((i) => ({
        namespace: ns,
        source: 'trace-test',
        sourceEventId: `e${i}`,
        kind: 'MESSAGE',
        role: 'USER',
        actor: 'user',
        conversationId: 'c1',
        sequenceNum: i,
        content: i === 1 ? `I moved to Lisbon last spring, my code word is ${secretContent}.` : `I work as a nurse at the hospital (${i}).`,
      })),
    });

    const inTrace = (name: string, process?: string) =>
      receiver.spans.find((s) => s.traceId === traceId && s.name === name && (!process || s.process === process));
    const request = await eventually(async () => inTrace('mutation ingestEvents', 'api'), 'the API request span');
    expect(request.attributes['graphql.operation.name']).toBe('ingestEvents');
    expect(request.parentSpanId).toBe(callerSpan); // continues the caller's traceparent
    const ingest = await eventually(async () => inTrace('update_memory', 'api'), 'the ingest span');
    expect(ingest.parentSpanId).toBe(request.spanId);
    expect(ingest.attributes).toMatchObject({
      'gen_ai.operation.name': 'update_memory',
      'gen_ai.memory.store.id': namespaceHash(ns),
      'medallion.events.created': 3,
    });

    // The worker, another OS process, continues the same trace from the queue row and the outbox payload.
    const derive = await eventually(async () => inTrace('medallion.derive.batch', 'worker'), 'the worker derivation span in the trace', 60_000);
    expect(derive.parentSpanId).toBe(ingest.spanId);
    expect(derive.attributes).toMatchObject({ 'gen_ai.memory.store.id': namespaceHash(ns), 'medallion.events': 3 });
    const projection = await eventually(async () => inTrace('medallion.projection.batch', 'worker'), 'the worker projection span in the trace', 60_000);
    expect(projection.parentSpanId).toBe(ingest.spanId);
    // The model calls of the batch are children of the derivation span.
    await eventually(
      async () => receiver.spans.find((s) => s.traceId === traceId && s.parentSpanId === derive.spanId && s.name.startsWith('extract ')),
      'the extract span',
    );

    // The search the caller makes next, in the same trace.
    await post(traceparent, `query Recall($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q) { kind } }`, {
      ns,
      q: `where do I live ${secretQuery}`,
    });
    const search = await eventually(async () => inTrace('search_memory', 'api'), 'the search span');
    expect(search.attributes).toMatchObject({ 'gen_ai.operation.name': 'search_memory', 'gen_ai.memory.store.id': namespaceHash(ns) });
    expect(typeof search.attributes['medallion.search.hits']).not.toBe('undefined');
    await eventually(
      async () => receiver.spans.find((s) => s.traceId === traceId && s.parentSpanId === search.spanId && s.name.startsWith('embed_query ')),
      'the query embedding span',
    );

    const processes = new Set(receiver.spans.filter((s) => s.traceId === traceId).map((s) => s.process));
    expect([...processes].sort()).toEqual(['api', 'worker']);
  });

  it('traces MCP tool calls', async () => {
    const client = await mcpClient(api.url, token);
    try {
      const r = await client.callTool({ name: 'search_memory', arguments: { namespace: ns, query: `nurse ${secretQuery}` } });
      expect(r.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    const tool = await eventually(async () => receiver.spans.find((s) => s.name === 'execute_tool search_memory'), 'the MCP tool span');
    expect(tool.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search_memory' });
    await eventually(
      async () => receiver.spans.find((s) => s.traceId === tool.traceId && s.parentSpanId === tool.spanId && s.name === 'search_memory'),
      'the search under the tool span',
    );
  });

  it('puts no content, query, token, namespace name or client-chosen operation name in any span', async () => {
    const anonymous = await fetch(`${api.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query Patient_alice_HIV_positive { __typename }' }),
    });
    expect(anonymous.status).toBe(200);
    await eventually(async () => receiver.spans.find((s) => s.name === 'query other' && s.process === 'api'), 'the span of the anonymous query');
    const exported = receiver.raw.join('\n');
    expect(receiver.spans.length).toBeGreaterThan(5);
    for (const secret of [secretContent, secretQuery, token, ns, 'Lisbon', 'nurse', 'Patient_alice'])
      expect([secret, exported.includes(secret)]).toEqual([secret, false]);
  });

  it('serves the worker process its own /health and its /metrics behind METRICS_TOKEN', async () => {
    const base = await eventually(async () => worker.output.join('').match(/"health":"(http:\/\/[^"]+)\/health"/)?.[1], 'the worker health URL');
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    const metrics = await scrape(base, metricsToken);
    expect(total(metrics, 'medallion_derive_events_total')).toBe(3);
    expect(total(metrics, 'medallion_projection_rows_total', { outcome: 'projected' })).toBeGreaterThanOrEqual(3);
    expect(total(metrics, 'medallion_model_call_seconds_count', { operation: 'extract' })).toBeGreaterThanOrEqual(1);
    expect(metrics.samples.every((x) => x.labels.process === 'worker')).toBe(true);
    const res = await fetch(`${base}/health`);
    expect(res.status).toBe(200);
    const health = (await res.json()) as {
      status: string;
      workers: { runsHere: boolean; stages: Record<string, { running: boolean; lastStepAt: string | null }> };
      lags: unknown;
    };
    expect(health).toMatchObject({ status: 'ok', postgres: { ok: true }, neo4j: { ok: true }, workers: { ok: true, runsHere: true }, lags: { ok: true } });
    expect(health.workers.stages.derivation).toMatchObject({ running: true, lastStepAt: expect.any(String) });
    // The API runs no workers (serve --no-worker) and says so.
    const apiHealth = (await (await fetch(`${api.url}/health`)).json()) as { workers: unknown };
    expect(apiHealth.workers).toEqual({ ok: true, runsHere: false, stages: {} });
  });

  it('logs and counts trace exports the collector refuses, and logs when they succeed again', async () => {
    const failures = async () => total(await scrape(api.url), 'medallion_trace_export_failures_total');
    const before = await failures();
    receiver.refuse.on = true;
    try {
      await post(`00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`, `query { viewer { name } }`, {});
      await eventually(async () => (await failures()) > before, 'a failed export counted', 60_000);
      const logged = await eventually(
        async () =>
          apiProcess.output
            .join('')
            .split('\n')
            .find((l) => l.includes('trace export failed')),
        'the failure logged',
        60_000,
      );
      expect(JSON.parse(logged)).toMatchObject({ level: 40, url: `${receiver.url}/v1/traces`, failures: expect.any(Number), spans: expect.any(Number) });
      expect(total(await scrape(api.url), 'medallion_trace_spans_dropped_total')).toBeGreaterThanOrEqual(1);
    } finally {
      receiver.refuse.on = false;
    }
    await post(`00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`, `query { viewer { name } }`, {});
    await eventually(async () => apiProcess.output.join('').includes('trace export recovered'), 'the recovery logged', 60_000);
  });
});
