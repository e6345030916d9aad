import { Client } from 'pg';
import { anEvent } from '../builders/event-input';
import { startOpenAIStubServer, OpenAIStubServer, defaultHandler } from '../support/openai-stub-server';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';
import { spawnWorker, WorkerProcess } from '../support/worker-process';
import { collect, wsClient } from '../support/ws-client';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status event { id } } }`;
const PENDING = `query($ns: String!) { pipelineStatus(namespace: $ns) { pending deadLetters } }`;

describe('Silver across processes: a killed worker, a successor, and subscriptions from another process', () => {
  let api: TestApp;
  let stub: OpenAIStubServer;
  let sql: Client;
  const workers: WorkerProcess[] = [];
  const ns = uniqueNamespace('procs');
  let token: string;

  beforeAll(async () => {
    // The API process runs no worker: every fact comes from the child processes.
    api = await startTestApp({}, { api: true, worker: false });
    token = (await createToken(api, [{ namespacePattern: ns, capabilities: ['INGEST', 'READ', 'LIST'] }])).token;
    stub = await startOpenAIStubServer({ handler: defaultHandler });
    sql = new Client({ connectionString: api.databaseUrl });
    await sql.connect();
  });
  afterAll(async () => {
    for (const w of workers) await w.kill();
    await sql?.end();
    await stub?.close();
    await api?.stop();
  });

  it('loses and doubles nothing when a worker is killed mid-batch', async () => {
    const ws = wsClient(api.url, token);
    const added = collect<{ factAdded: { id: string } }>(ws, `subscription($ns: String!) { factAdded(namespace: $ns) { id } }`, { ns });
    await added.ready;
    await new Promise((r) => setTimeout(r, 300));

    // Worker A talks to a slow model: its first batch is still waiting for the answer when it dies.
    stub.setLatency(60_000);
    const a = spawnWorker(api.databaseUrl, {
      OPENAI_BASE_URL: stub.baseUrl,
      OPENAI_API_KEY: 'stub',
      EXTRACTION_MODEL: 'stub-extractor',
      WORKER_ID: 'worker-a',
      DERIVE_LEASE_SECONDS: '2',
      DERIVE_BATCH_SIZE: '5',
      MODEL_MAX_RETRIES: '0',
    });
    workers.push(a);
    const things = ['Docker', 'Kafka', 'Terraform', 'Redis', 'Python', 'GitHub', 'Linux', 'Slack', 'Figma', 'Jira', 'Grafana', 'Ansible'];
    const inputs = things.map((thing, i) => anEvent(ns).inConversation('k', i).by('USER').saying(`I use ${thing} every day`).build());
    const ids = (await gqlOk<{ ingestEvents: Array<{ event: { id: string } }> }>(api.url, token, INGEST, { input: inputs })).ingestEvents.map(
      (r) => r.event.id,
    );
    await eventually(async () => stub.requests.some((r) => r.path.endsWith('/chat/completions')), 'worker A to call the model', 30_000);
    await a.kill('SIGKILL');
    expect((await sql.query(`SELECT count(*)::int AS n FROM ops.derivation_queue WHERE event_id = ANY($1::uuid[]) AND status = 'done'`, [ids])).rows[0].n).toBe(
      0,
    );

    // Worker B (offline models) takes the namespace over once A's lease expires.
    const b = spawnWorker(api.databaseUrl, { WORKER_ID: 'worker-b', DERIVE_LEASE_SECONDS: '2', DERIVE_BATCH_SIZE: '5' });
    workers.push(b);
    await eventually(
      async () => (await gqlOk<{ pipelineStatus: { pending: number } }>(api.url, token, PENDING, { ns })).pipelineStatus.pending === 0,
      'worker B to finish',
      60_000,
    );

    const perEvent = await sql.query(
      `SELECT q.event_id, q.status, count(DISTINCT f.derivation_run_id)::int AS runs, count(s.fact_id)::int AS sources, count(DISTINCT f.id)::int AS facts
         FROM ops.derivation_queue q
         LEFT JOIN silver.fact_sources s ON s.event_id = q.event_id
         LEFT JOIN silver.facts f ON f.id = s.fact_id
        WHERE q.event_id = ANY($1::uuid[]) GROUP BY q.event_id, q.status`,
      [ids],
    );
    expect(perEvent.rows).toHaveLength(12);
    for (const row of perEvent.rows) {
      expect(row.status).toBe('done');
      expect(row.facts).toBeGreaterThanOrEqual(1);
      expect(row.runs).toBe(1); // derived once, by one run
      expect(row.sources).toBe(row.facts); // no source attached twice
    }
    const runs = await sql.query(`SELECT DISTINCT worker_id FROM silver.derivation_runs WHERE namespace = $1`, [ns]);
    expect(runs.rows.map((r) => r.worker_id)).toEqual(['worker-b']);
    const duplicates = await sql.query(
      `SELECT statement, count(*)::int AS n FROM silver.facts WHERE namespace = $1 AND retired_at IS NULL GROUP BY statement HAVING count(*) > 1`,
      [ns],
    );
    expect(duplicates.rows).toEqual([]);

    // Facts written by worker B's process reached the API process's subscriber through Postgres.
    const factCount = (await sql.query(`SELECT count(*)::int AS n FROM silver.facts WHERE namespace = $1`, [ns])).rows[0].n;
    await eventually(async () => added.received.next.length >= factCount, 'factAdded deliveries');
    expect(new Set(added.received.next.map((m) => m.factAdded.id)).size).toBe(factCount);
    added.stop();
    await ws.dispose();
  });

  it('delivers factSuperseded from the worker process to an API subscriber', async () => {
    const ws = wsClient(api.url, token);
    const sup = collect<{ factSuperseded: { old: { statement: string; validTo: string }; new: { statement: string; validFrom: string } } }>(
      ws,
      `subscription($ns: String!) { factSuperseded(namespace: $ns) { old { statement validTo } new { statement validFrom } } }`,
      { ns },
    );
    await sup.ready;
    await new Promise((r) => setTimeout(r, 300));
    await gqlOk(api.url, token, INGEST, {
      input: [anEvent(ns).inConversation('ed', 1).by('USER').saying('I use vim for everything').at('2026-01-01T10:00:00Z').build()],
    });
    await eventually(
      async () => (await gqlOk<{ pipelineStatus: { pending: number } }>(api.url, token, PENDING, { ns })).pipelineStatus.pending === 0,
      'vim derived',
    );
    await gqlOk(api.url, token, INGEST, {
      input: [anEvent(ns).inConversation('ed', 2).by('USER').saying('I switched to neovim last week').at('2026-02-01T10:00:00Z').build()],
    });
    const got = await eventually(async () => sup.received.next[0], 'factSuperseded', 30_000);
    expect(got.factSuperseded.old.statement).toMatch(/\bvim\b/i);
    expect(got.factSuperseded.new.statement).toMatch(/neovim/i);
    expect(got.factSuperseded.old.validTo).toBe(got.factSuperseded.new.validFrom);
    sup.stop();
    await ws.dispose();
  });
});
