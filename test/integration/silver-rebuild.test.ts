import { Client } from 'pg';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';
import { collect, wsClient } from '../support/ws-client';

const CONVERSATION = [
  ['2026-01-05T09:00:00Z', 'I use vim for everything'],
  ['2026-01-06T09:00:00Z', 'I live in Berlin and I work at Acme'],
  ['2026-01-07T09:00:00Z', 'I prefer tabs over spaces'],
  ['2026-02-10T09:00:00Z', 'I switched to neovim last week'],
  ['2026-02-11T09:00:00Z', 'We plan to migrate to PostgreSQL next month'],
  ['2026-03-01T09:00:00Z', 'I no longer use Docker'],
  ['2026-03-02T09:00:00Z', 'I moved to Lisbon'],
] as const;

/** The believed facts, as a comparable set: statement, type, validity, sources. */
async function snapshot(sql: Client, ns: string): Promise<string[]> {
  const { rows } = await sql.query(
    `SELECT f.statement, f.fact_type, f.predicate, f.object_value, f.is_negation, f.valid_from, f.valid_to, (f.superseded_by IS NOT NULL) AS superseded,
            (SELECT string_agg(s.event_id || ':' || s.span_start || '-' || s.span_end, ',' ORDER BY s.event_id, s.span_start) FROM silver.fact_sources s WHERE s.fact_id = f.id) AS sources
       FROM silver.facts f WHERE f.namespace = $1 AND f.retired_at IS NULL`,
    [ns],
  );
  return rows.map((r) => JSON.stringify(r)).sort();
}

describe('rebuildSilver: re-derive from Bronze', () => {
  let t: TestApp;
  let sql: Client;
  const ns = uniqueNamespace('rebuild');
  let admin: string;
  let reader: string;

  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50', DERIVE_BATCH_SIZE: '3' });
    admin = (await createToken(t, [{ namespacePattern: ns, capabilities: ['ADMIN'] }])).token;
    reader = (await createToken(t, [{ namespacePattern: ns, capabilities: ['READ', 'LIST', 'INGEST'] }])).token;
    sql = new Client({ connectionString: t.databaseUrl });
    await sql.connect();
    for (const [i, [at, content]] of CONVERSATION.entries()) {
      await gqlOk(t.url, reader, `mutation($input: EventInput!) { ingestEvent(input: $input) { status } }`, {
        input: anEvent(ns).inConversation('life', i).by('USER').saying(content).at(at).build(),
      });
      await eventually(
        async () =>
          (await gqlOk<{ pipelineStatus: { pending: number } }>(t.url, reader, `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`, { ns }))
            .pipelineStatus.pending === 0,
        'derivation',
      );
    }
  });
  afterAll(async () => {
    await sql?.end();
    await t?.stop();
  });

  it('gives the same facts with the same models, retires the old rows softly, reports progress, and leaves Bronze untouched', async () => {
    const before = await snapshot(sql, ns);
    expect(before.length).toBeGreaterThanOrEqual(6);
    expect(before.some((r) => r.includes('"superseded":true'))).toBe(true);
    const bronze = async () =>
      (await sql.query(`SELECT md5(string_agg(e::text, '|' ORDER BY e.id)) AS h, count(*)::int AS n FROM bronze.events e WHERE namespace = $1`, [ns])).rows[0];
    const bronzeBefore = await bronze();
    const oldIds = (await sql.query(`SELECT id FROM silver.facts WHERE namespace = $1 AND retired_at IS NULL`, [ns])).rows.map((r) => r.id);

    const denied = await gql(t.url, reader, `mutation($ns: String!) { rebuildSilver(namespace: $ns, reason: "try") { id } }`, { ns });
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    // Hold the job runner until the progress subscription is listening, so no update is missed.
    await t.app.stages.get('jobs')?.stop();
    const job = (
      await gqlOk<{ rebuildSilver: { id: string; status: string } }>(
        t.url,
        admin,
        `mutation($ns: String!) { rebuildSilver(namespace: $ns, reason: "new extractor rules") { id status } }`,
        { ns },
      )
    ).rebuildSilver;
    expect(job.status).toBe('queued');
    const ws = wsClient(t.url, admin);
    const progress = collect<{ jobProgress: { status: string; progressDone: number; progressTotal: number | null } }>(
      ws,
      `subscription($id: ID!) { jobProgress(jobId: $id) { status progressDone progressTotal } }`,
      { id: job.id },
    );
    await progress.ready;
    await new Promise((r) => setTimeout(r, 300));
    t.app.stages.get('jobs')?.start();
    const done = await eventually(
      async () => {
        const j = (
          await gqlOk<{ job: { status: string; progressDone: number; progressTotal: number; message: string } }>(
            t.url,
            admin,
            `query($id: ID!) { job(id: $id) { status progressDone progressTotal message } }`,
            { id: job.id },
          )
        ).job;
        return j.status === 'succeeded' ? j : undefined;
      },
      'the rebuild',
      60_000,
    );
    expect(done).toMatchObject({ progressDone: CONVERSATION.length, progressTotal: CONVERSATION.length });
    await eventually(async () => progress.received.next.some((m) => m.jobProgress.status === 'succeeded'), 'jobProgress to report success', 10_000);
    expect(progress.received.next[0]?.jobProgress).toMatchObject({ status: 'running', progressTotal: CONVERSATION.length });
    progress.stop();
    await ws.dispose();

    expect(await snapshot(sql, ns)).toEqual(before);
    const retired = (await sql.query(`SELECT count(*)::int AS n FROM silver.facts WHERE id = ANY($1::uuid[]) AND retired_at IS NOT NULL`, [oldIds])).rows[0].n;
    expect(retired).toBe(oldIds.length);
    expect(await bronze()).toEqual(bronzeBefore);
    const runs = (await sql.query(`SELECT kind, count(*)::int AS n FROM silver.derivation_runs WHERE namespace = $1 GROUP BY kind ORDER BY kind`, [ns])).rows;
    expect(runs.map((r) => r.kind)).toEqual(['incremental', 'rebuild']);
  });

  it('a rebuild over a window keeps what the facts it re-derives rest on before the window', async () => {
    const wns = uniqueNamespace('rebuild-window');
    const wadmin = (await createToken(t, [{ namespacePattern: wns, capabilities: ['ADMIN', 'READ', 'LIST', 'INGEST'] }])).token;
    const said = [
      ['2026-01-05T09:00:00Z', 'I live in Berlin and I work at Acme'],
      ['2026-03-05T09:00:00Z', 'I live in Berlin, as I said'],
    ] as const;
    for (const [i, [at, content]] of said.entries()) {
      await gqlOk(t.url, wadmin, `mutation($input: EventInput!) { ingestEvent(input: $input) { status } }`, {
        input: anEvent(wns).inConversation('w', i).by('USER').saying(content).at(at).build(),
      });
      await eventually(
        async () =>
          (
            await gqlOk<{ pipelineStatus: { pending: number } }>(t.url, wadmin, `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`, {
              ns: wns,
            })
          ).pipelineStatus.pending === 0,
        'derivation',
      );
    }
    const before = await snapshot(sql, wns);
    // The Berlin fact rests on both turns: the March one corroborated the January one.
    expect(before.some((r) => r.includes('Berlin') && r.split(':').length > 3)).toBe(true);
    const job = (
      await gqlOk<{ rebuildSilver: { id: string } }>(
        t.url,
        wadmin,
        `mutation($ns: String!) { rebuildSilver(namespace: $ns, from: "2026-03-01T00:00:00Z", to: "2026-04-01T00:00:00Z", reason: "March again") { id } }`,
        { ns: wns },
      )
    ).rebuildSilver;
    await eventually(
      async () =>
        (await gqlOk<{ job: { status: string } }>(t.url, wadmin, `query($id: ID!) { job(id: $id) { status } }`, { id: job.id })).job.status === 'succeeded',
      'the window rebuild',
      60_000,
    );
    expect(await snapshot(sql, wns)).toEqual(before);
  });
});
