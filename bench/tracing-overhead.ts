import http from 'node:http';
import { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { nowMs, report, round, summarize, withBenchStores } from './harness';

const N = Number(process.env.BENCH_N ?? 200);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 300);
const WARMUP = 20;
const NS = 'bench-tracing';
const SEARCH = `query Recall($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q, limit: 10) { kind score } }`;
const TOPICS = ['editor', 'city', 'job', 'sister', 'bike', 'doctor', 'holiday', 'laptop', 'garden', 'band'];

/**
 * Search latency over HTTP with tracing off (the default) and on (OTLP/HTTP to a local sink that
 * accepts and drops the spans), on the same stores and data: off, on, off, on, N sequential
 * searches each, so neither order nor a warming cache favours one side.
 */
export async function tracingOverhead(): Promise<void> {
  const spans = { requests: 0, bytes: 0 };
  const sink = http.createServer((req, res) => {
    req.on('data', (c: Buffer) => (spans.bytes += c.length));
    req.on('end', () => {
      spans.requests += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  try {
    await withBenchStores(async (b) => {
      // The data, derived and projected once, by a service with tracing off.
      const seed = await b.startApp({}, { api: true, worker: true });
      try {
        const post = (query: string, variables: Record<string, unknown>) =>
          fetch(`${seed.url}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${b.adminToken}` },
            body: JSON.stringify({ query, variables }),
          }).then((r) => r.json());
        for (let i = 0; i < EVENTS; i += 50)
          await post(`mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`, {
            input: Array.from({ length: Math.min(50, EVENTS - i) }, (_, j) => {
              const k = i + j;
              const topic = TOPICS[k % TOPICS.length] as string;
              return {
                namespace: NS,
                source: 'bench',
                sourceEventId: `e${k}`,
                kind: 'MESSAGE',
                role: k % 2 === 0 ? 'USER' : 'ASSISTANT',
                actor: k % 2 === 0 ? 'user' : 'assistant',
                conversationId: `c${Math.floor(k / 20)}`,
                sequenceNum: k % 20,
                content: `Turn ${k}: my ${topic} story number ${k}, I told you about the ${topic} we talked about on day ${k % 31}.`,
              };
            }),
          });
        const pg = new Client({ connectionString: b.stores.postgresUrl });
        await pg.connect();
        try {
          for (;;) {
            const { rows } = await pg.query<{ n: number }>(
              `SELECT (SELECT count(*) FROM ops.derivation_queue WHERE status = 'pending')::int + (SELECT count(*) FROM ops.outbox WHERE processed_at IS NULL)::int AS n`,
            );
            if (rows[0]?.n === 0) break;
            await new Promise((r) => setTimeout(r, 200));
          }
        } finally {
          await pg.end();
        }
      } finally {
        await seed.app.stop();
      }

      const samples: Record<'off' | 'on', number[]> = { off: [], on: [] };
      let spanRequestsOn = 0;
      for (const mode of ['off', 'on', 'off', 'on'] as const) {
        const env = await b.startApp(mode === 'on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl } : {}, { api: true, worker: false });
        try {
          const search = async (i: number) => {
            const topic = TOPICS[i % TOPICS.length] as string;
            const res = await fetch(`${env.url}/graphql`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${b.adminToken}` },
              body: JSON.stringify({ query: SEARCH, variables: { ns: NS, q: `what did I say about my ${topic} on day ${i % 31}?` } }),
            });
            const body = (await res.json()) as { data?: { searchMemory: unknown[] } };
            if (!body.data) throw new Error(`search failed: ${JSON.stringify(body)}`);
          };
          for (let i = 0; i < WARMUP; i++) await search(i);
          const before = spans.requests;
          for (let i = 0; i < N; i++) {
            const t0 = nowMs();
            await search(i);
            samples[mode].push(nowMs() - t0);
          }
          if (mode === 'on') spanRequestsOn += spans.requests - before;
        } finally {
          await env.app.stop();
        }
      }
      const off = summarize(samples.off);
      const on = summarize(samples.on);
      report('tracing-overhead', {
        what: 'searchMemory over HTTP, sequential, limit 10, tracing off vs on (OTLP/HTTP JSON to a local sink), off/on/off/on on the same data',
        events: EVENTS,
        searchesPerMode: samples.off.length,
        offMs: off,
        onMs: on,
        p50OverheadMs: round(on.p50 - off.p50),
        p95OverheadMs: round(on.p95 - off.p95),
        exportRequestsWhileOn: spanRequestsOn,
        exportedBytesTotal: spans.bytes,
      });
    });
  } finally {
    await new Promise<void>((resolve) => sink.close(() => resolve()));
  }
}
