import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { settled } from '../../src/app/portability.command';
import { chainSealerStage } from '../../src/gold/portability/chain-sealer';
import { ChainRepository } from '../../src/gold/portability/chain.repository';
import { connectPostgres, QueryCounter } from '../../src/platform/postgres/data-source';
import { Sql } from '../../src/platform/postgres/sql';
import { Stage } from '../../src/platform/stages';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status event { id } } }`;
const HOUR = 3_600_000;

/**
 * The hash-chain sealer's cost (docs/operations.md "Sealing"): an idle round is one
 * statement however many namespaces there are, a busy round seals only the namespaces with
 * unsealed records, and a record committed late, or written with triggers off, is still sealed.
 */
describe('the chain sealer: idle rounds do not grow with the namespaces, late records are still sealed', () => {
  let t: TestApp;
  let owner: Client;
  let ds: DataSource;
  let counter: QueryCounter;
  let repo: ChainRepository;

  /** One approval log line (a chained record) per namespace, written by the owner in one statement. */
  const logLines = (c: Client, namespaces: string[]) =>
    c.query(
      `INSERT INTO access.approval_log (request_id, namespace, step, principal_id, principal_name)
       SELECT gen_random_uuid(), ns, 'REQUESTED', 'test', 'test' FROM unnest($1::text[]) ns`,
      [namespaces],
    );
  const measured = async (stage: Stage) => {
    counter.reset();
    const did = await stage.step();
    return { did, statements: counter.count };
  };
  /** Steps until a step does nothing; the steps' statement counts. */
  const drain = async (stage: Stage) => {
    const counts: number[] = [];
    for (let i = 0; i < 50; i++) {
      const s = await measured(stage);
      counts.push(s.statements);
      if (!s.did) return counts;
    }
    throw new Error('the sealer never went idle');
  };
  const unsealed = async (namespaces: string[]) => {
    let n = 0;
    for (const ns of namespaces) n += await repo.unsealedCount(ns);
    return n;
  };

  beforeAll(async () => {
    t = await startTestApp();
    owner = new Client({ connectionString: t.databaseUrl });
    await owner.connect();
    // The sealer under test runs as the runtime role on its own pool, so its statements are counted alone.
    ({ ds, counter } = await connectPostgres({ url: t.runtimeDatabaseUrl, poolSize: 2, applicationName: 'sealer-test' }));
    repo = new ChainRepository(Sql.of(ds));
  }, 300_000);
  afterAll(async () => {
    await ds?.destroy();
    await owner?.end();
    await t?.stop();
  });

  it('the service seals an ingested event on its own, with default settings', async () => {
    const ns = uniqueNamespace('seal-app');
    await gqlOk(t.url, t.adminToken, INGEST, { input: [anEvent(ns).withKey('chat', 'a1').saying('I live in Porto').build()] });
    await eventually(async () => (await repo.linkCount(ns)) >= 1 && (await repo.unsealedCount(ns)) === 0, 'the event sealed', 30_000);
    // Its derivation done and sealed too, then the app's sealer is paused: the tests below drive their own.
    await settled(Sql.of(ds), ns, 120_000);
    await eventually(async () => (await repo.unsealedCount(ns)) === 0, 'the derivation sealed', 30_000);
    await t.app.stages.get('chain-sealer')?.stop();
  }, 180_000);

  it('an idle round costs the same few statements (one when nothing is open) with 10 or 300 namespaces; the old loop cost 1 + 8 per namespace', async () => {
    const stage = chainSealerStage(repo, { sweepMs: HOUR });
    const idle: Record<number, number[]> = {};
    const all: string[] = [];
    for (const n of [10, 300]) {
      const more = Array.from({ length: n - all.length }, () => uniqueNamespace('idle'));
      all.push(...more);
      await logLines(owner, more);
      const busy = await drain(stage);
      expect(await unsealed(all)).toBe(0);
      // Busy rounds sealed only the new namespaces: probe + listing + one transaction (BEGIN, lock, head, 4 loads, insert, COMMIT) each.
      expect(Math.max(...busy)).toBeLessThanOrEqual(2 + 9 * more.length);
      idle[n] = [];
      for (let i = 0; i < 5; i++) {
        const s = await measured(stage);
        expect(s.did).toBe(false);
        idle[n].push(s.statements);
      }
    }
    // At most one listing (a writer elsewhere on the cluster was open at the last one), never a namespace's queries.
    for (const counts of Object.values(idle)) for (const c of counts) expect(c).toBeLessThanOrEqual(2);
    expect(Math.min(...(idle[300] ?? []))).toBe(1);
    expect(idle[300]?.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual((idle[10]?.reduce((a, b) => a + b, 0) ?? 0) + 1);
  }, 120_000);

  it('a record committed after the round that listed it is sealed once its transaction has ended, with no new write', async () => {
    const stage = chainSealerStage(repo, { sweepMs: HOUR });
    await drain(stage);
    const ns = uniqueNamespace('late');
    const late = new Client({ connectionString: t.databaseUrl });
    await late.connect();
    try {
      await late.query('BEGIN');
      await logLines(late, [ns]); // ticks now, commits later
      const listedWhileOpen = await drain(stage);
      expect(listedWhileOpen.length).toBeGreaterThanOrEqual(1);
      expect(await repo.unsealedCount(ns)).toBe(0); // not visible yet
      // While the writer is open, rounds are one statement: its transaction has not ended.
      for (let i = 0; i < 3; i++) expect(await measured(stage)).toEqual({ did: false, statements: 1 });
      await late.query('COMMIT');
    } finally {
      await late.end();
    }
    const tick = (await repo.probe()).tick;
    await eventually(
      async () => {
        await stage.step();
        return (await repo.linkCount(ns)) === 1;
      },
      'the late record sealed',
      30_000,
    );
    expect(await repo.unsealedCount(ns)).toBe(0);
    // Sealed by the sealer's own bound, not by a later write's tick nor by the sweep (an hour away).
    expect((await repo.probe()).tick).toBe(tick);
  }, 60_000);

  it('a record written with triggers off (no tick) is sealed by the periodic sweep', async () => {
    let clock = 0;
    const stage = chainSealerStage(repo, { sweepMs: HOUR, now: () => clock });
    // A transaction held open keeps xmin below the sealer's bound: only a tick or the sweep can make it list.
    const pin = new Client({ connectionString: t.databaseUrl });
    await pin.connect();
    const ns = uniqueNamespace('sweep');
    try {
      await pin.query('BEGIN');
      await pin.query('SELECT pg_current_xact_id()');
      await drain(stage);
      const replica = new Client({ connectionString: t.databaseUrl });
      await replica.connect();
      try {
        await replica.query(`SET session_replication_role = replica`);
        const before = (await repo.probe()).tick;
        await logLines(replica, [ns]);
        expect((await repo.probe()).tick).toBe(before);
      } finally {
        await replica.end();
      }
      expect(await measured(stage)).toEqual({ did: false, statements: 1 });
      expect(await repo.unsealedCount(ns)).toBe(1);
      clock += HOUR;
      await drain(stage);
      expect(await repo.unsealedCount(ns)).toBe(0);
      expect(await repo.linkCount(ns)).toBe(1);
    } finally {
      await pin.query('ROLLBACK');
      await pin.end();
    }
  }, 60_000);

  it('paced while writers are busy: a round that saw new writes pauses; without new writes rounds follow at once until all is sealed', async () => {
    const stage = chainSealerStage(repo, { sweepMs: HOUR });
    await drain(stage);
    const ns = uniqueNamespace('paced');
    /** `n` approval log lines of the namespace, one statement (one tick). */
    const lines = (n: number) =>
      owner.query(
        `INSERT INTO access.approval_log (request_id, namespace, step, principal_id, principal_name)
         SELECT gen_random_uuid(), $1, 'REQUESTED', 'test', 'test' FROM generate_series(1, $2)`,
        [ns, n],
      );
    await lines(2500);
    // New ticks: one round (1000 records), then a pause (the runner waits pollMs before the next step).
    expect(await stage.step()).toBe(false);
    expect(await repo.unsealedCount(ns)).toBe(1500);
    // A write between rounds: that round seals too, and pauses again.
    await lines(1);
    expect(await stage.step()).toBe(false);
    expect(await repo.unsealedCount(ns)).toBe(501);
    // No new ticks: round after round at once, until nothing is left.
    expect(await stage.step()).toBe(true);
    expect(await repo.unsealedCount(ns)).toBe(0);
    expect(await stage.step()).toBe(false);
    expect(await repo.linkCount(ns)).toBe(2501);
  }, 60_000);
});
