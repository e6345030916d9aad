import fs from 'node:fs';
import path from 'node:path';
import { startApp } from '../src/app/app';
import { loadConfig } from '../src/common/config';
import { createLogger } from '../src/common/logger';
import { DeriveResult } from '../src/silver/derive.job';
import { createDefaultHandler, startOpenAIStubServer } from '../test/support/openai-stub-server';
import { BenchStores, nowMs, report, round, withBenchStores } from './harness';

const FIXTURE = path.resolve(
  __dirname.includes(`${path.sep}dist${path.sep}`) ? path.join(__dirname, '..', '..') : path.join(__dirname, '..'),
  'test',
  'fixtures',
  'extraction',
  'turns.jsonl',
);
const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`;

interface Turn {
  role: string;
  content: string;
}

/** Realistic turns (the labelled fixture's), repeated with a counter so each event is distinct. */
function events(ns: string, n: number): Array<Record<string, unknown>> {
  const turns = fs
    .readFileSync(FIXTURE, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Turn);
  return Array.from({ length: n }, (_, i) => {
    const t = turns[i % turns.length] as Turn;
    return {
      namespace: ns,
      source: 'bench',
      sourceEventId: `e-${i}`,
      kind: 'MESSAGE',
      role: t.role.toUpperCase(),
      conversationId: `c-${Math.floor(i / 20)}`,
      sequenceNum: i % 20,
      content: t.content,
      occurredAt: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
    };
  });
}

/** Ingests with no worker running, then times a worker draining the namespace. */
async function drain(
  b: BenchStores,
  ns: string,
  n: number,
  env: Record<string, string>,
): Promise<{ events: number; seconds: number; eventsPerSec: number; facts: number; batches: number }> {
  const ingest = await b.startApp(env, { api: true, worker: false });
  const input = events(ns, n);
  for (let i = 0; i < input.length; i += 500) {
    await fetch(`${ingest.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${b.adminToken}` },
      body: JSON.stringify({ query: INGEST, variables: { input: input.slice(i, i + 500) } }),
    });
  }
  await ingest.app.stop();
  let facts = 0;
  let batches = 0;
  let derived = 0;
  let finished: () => void = () => undefined;
  const done = new Promise<void>((r) => (finished = r));
  const observe = (r: DeriveResult) => {
    if (r.kind !== 'success' || r.namespace !== ns) return;
    batches += 1;
    facts += r.facts;
    derived += r.events;
    if (derived >= n) finished();
  };
  const timed = await startWorker(b, env, observe);
  const start = nowMs();
  await done;
  const seconds = (nowMs() - start) / 1000;
  await timed.stop();
  return { events: n, seconds: round(seconds), eventsPerSec: round(n / seconds, 1), facts, batches };
}

async function startWorker(b: BenchStores, env: Record<string, string>, onDerive: (r: DeriveResult) => void) {
  const config = loadConfig({
    ...process.env,
    DATA_DIR: b.dataDir,
    PORT: '0',
    ADMIN_TOKEN: b.adminToken,
    LOG_LEVEL: 'warn',
    DERIVE_MAX_WAIT_MS: '0',
    DERIVE_POLL_MS: '20',
    ...env,
  });
  return startApp(config, b.stores, { api: false, worker: true, onDerive }, createLogger('warn', 'bench'));
}

/**
 * Derivation throughput: the offline models (rules + MiniLM, and rules + hashing embedder), and
 * the OpenAI-compatible adapters against a local stub that adds 300 ms per call, at micro-batch
 * sizes 1, 10 and 100 (events/s and model calls per event).
 */
export async function deriveThroughput(): Promise<void> {
  await withBenchStores(async (b) => {
    const offline = await drain(b, 'bench-derive-offline', Number(process.env.BENCH_DERIVE_OFFLINE ?? 1000), { DERIVE_BATCH_SIZE: '100' });
    const hashing = await drain(b, 'bench-derive-hashing', Number(process.env.BENCH_DERIVE_OFFLINE ?? 1000), {
      DERIVE_BATCH_SIZE: '100',
      OFFLINE_EMBEDDER: 'hashing',
    });
    const stub = await startOpenAIStubServer({ handler: createDefaultHandler({ embeddingDimensions: 64 }), latencyMs: 300 });
    const remote: Record<string, unknown> = {};
    try {
      for (const [batch, n] of [
        [1, 40],
        [10, 200],
        [100, 1000],
      ] as const) {
        stub.reset();
        const env = {
          OPENAI_BASE_URL: stub.baseUrl,
          OPENAI_API_KEY: 'stub',
          EXTRACTION_MODEL: 'stub-llm',
          EMBEDDING_MODEL: 'stub-embed',
          EMBEDDING_DIMENSIONS: '64',
          DERIVE_BATCH_SIZE: String(batch),
          MODEL_CONCURRENCY: '4',
        };
        const r = await drain(b, `bench-derive-openai-${batch}`, n, env);
        const calls = stub.requests.length;
        remote[`batch${batch}`] = { ...r, modelCalls: calls, modelCallsPerEvent: round(calls / n, 3) };
      }
    } finally {
      await stub.close();
    }
    report('derive', {
      offlineRulesMiniLm: offline,
      offlineRulesHashing: hashing,
      openaiStub300msPerCall: remote,
      note: 'each drain: events ingested first with no worker, then one worker process (2 namespaces in parallel max, DERIVE_CONCURRENCY=2) derives them; the stub answers every call after 300 ms',
    });
  });
}
