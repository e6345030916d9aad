import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { seedSilver } from '../support/silver-seed';
import { uniqueNamespace } from '../support/stores';
import { eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';
import { spawnWorker, WorkerProcess } from '../support/worker-process';

const N = 300;

describe('Gold promotion across processes: a worker killed mid-run', () => {
  let api: TestApp;
  let sql: Client;
  const workers: WorkerProcess[] = [];
  const ns = uniqueNamespace('goldkill');

  beforeAll(async () => {
    api = await startTestApp({}, { api: true, worker: false });
    sql = new Client({ connectionString: api.databaseUrl });
    await sql.connect();
  });
  afterAll(async () => {
    for (const w of workers) await w.kill();
    await sql?.end();
    await api?.stop();
  });

  const counts = async () =>
    (
      await sql.query(
        `SELECT (SELECT count(*) FROM gold.entities WHERE namespace = $1)::int AS entities,
                (SELECT count(*) FROM gold.entity_members WHERE namespace = $1)::int AS members,
                (SELECT count(DISTINCT silver_entity_id) FROM gold.entity_members WHERE namespace = $1)::int AS silver,
                (SELECT count(*) FROM gold.promotion_log WHERE namespace = $1 AND action = 'create')::int AS created`,
        [ns],
      )
    ).rows[0] as { entities: number; members: number; silver: number; created: number };

  it('commits whole batches only, and a successor finishes without a duplicate', async () => {
    // Names with no trigram in common beyond chance: every entity is its own cluster.
    const entities = Array.from({ length: N }, (_, i) => ({
      key: `e${i}`,
      name: `${String.fromCharCode(97 + (i % 26))}${randomBytes(5).toString('hex')}`,
      type: 'project',
    }));
    await seedSilver(api, ns, {
      entities,
      mentions: entities.flatMap((e, i) => [
        { entity: e.key, conversation: `c${i}` },
        { entity: e.key, conversation: `d${i}` },
      ]),
    });
    // A short job lease, as an operator may set it: the dead worker's job is free once it runs out, no hand needed.
    const env = { GOLD_BATCH_SIZE: '2', GOLD_PROMOTE_EVERY_SECONDS: '0', DERIVE_POLL_MS: '20', JOB_LEASE_SECONDS: '5' };
    const { promote } = await gqlOk<{ promote: { id: string } }>(api.url, api.adminToken, `mutation($ns: String!) { promote(namespace: $ns) { id } }`, { ns });
    const a = spawnWorker(api.databaseUrl, { ...env, WORKER_ID: 'gold-a' });
    workers.push(a);
    await eventually(async () => (await counts()).entities >= 5, 'worker A to commit a few batches', 60_000);
    await a.kill('SIGKILL');
    const partial = await counts();
    expect(partial.entities).toBeGreaterThan(0);
    expect(partial.entities).toBeLessThan(N);
    // Whole batches: every Gold entity has its member and its log row, nothing half-written.
    expect(partial).toEqual({ entities: partial.entities, members: partial.entities, silver: partial.entities, created: partial.entities });

    // Heartbeats renewed the lease while A ran (each batch is quick; the lease is 5 s), so it was
    // still held when A died: a successor takes the job once the lease runs out.
    expect((await sql.query(`SELECT status, locked_by FROM ops.jobs WHERE id = $1`, [promote.id])).rows[0]).toEqual({
      status: 'running',
      locked_by: expect.stringMatching(/^gold-a/),
    });
    const b = spawnWorker(api.databaseUrl, { ...env, WORKER_ID: 'gold-b' });
    workers.push(b);
    await eventually(
      async () => (await sql.query(`SELECT status FROM ops.jobs WHERE id = $1`, [promote.id])).rows[0]?.status === 'succeeded',
      'worker B to finish the promotion',
      120_000,
    );
    expect(await counts()).toEqual({ entities: N, members: N, silver: N, created: N });
    await eventually(
      async () => (await sql.query(`SELECT count(*)::int AS n FROM ops.outbox WHERE namespace = $1 AND processed_at IS NULL`, [ns])).rows[0].n === 0,
      'the outbox to drain',
      240_000,
    ).catch(async (err: unknown) => {
      const { rows } = await sql.query(
        `SELECT aggregate_type, count(*)::int AS n, max(attempts) AS attempts, max(last_error) AS error FROM ops.outbox
          WHERE namespace = $1 AND processed_at IS NULL GROUP BY 1`,
        [ns],
      );
      throw new Error(`${String(err)}: ${JSON.stringify(rows)}; worker B: ${b.output.join('').slice(-2000)}`);
    });
    const { graphConsistency } = await gqlOk<{ graphConsistency: { ok: boolean; counts: Array<{ kind: string; postgres: number; neo4j: number }> } }>(
      api.url,
      api.adminToken,
      `query($ns: String!) { graphConsistency(namespace: $ns) { ok counts { kind postgres neo4j } } }`,
      { ns },
    );
    expect(graphConsistency.ok).toBe(true);
    expect(graphConsistency.counts.find((c) => c.kind === 'GoldEntity')).toEqual({ kind: 'GoldEntity', postgres: N, neo4j: N });
  }, 600_000);
});
