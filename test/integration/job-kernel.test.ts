import { Client } from 'pg';
import { openDatabase, Database } from '../../src/platform/postgres/database';
import { Sql } from '../../src/platform/postgres/sql';
import { ClaimedJob, JobOutcome, LostLeaseError } from '../../src/platform/jobs/job';
import { JobContext, JobHandlers } from '../../src/platform/jobs/job-handler';
import { JobRepository } from '../../src/platform/jobs/job.repository';
import { JobWorker } from '../../src/platform/jobs/job-worker';
import { ScheduleRepository } from '../../src/platform/jobs/schedule.repository';
import { JOBS_CHANNEL } from '../../src/platform/jobs/job-notify';
import { createTestDatabase } from '../support/stores';

/** Kinds of this test only: the kernel is generic over the payload map, the app's union is one instance of it. */
interface TestPayloads {
  count: { label: string };
  flaky: { failures: number };
  gated: { label: string };
  patient: { polls: number };
}

type Handler<K extends keyof TestPayloads> = (job: ClaimedJob<TestPayloads, K>, ctx: JobContext) => Promise<JobOutcome>;

/** Runs jobs until none is due. */
async function drain(w: JobWorker<TestPayloads>): Promise<void> {
  while (await w.runNext()) {
    // next one
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The job kernel (src/platform/jobs/) on real PostgreSQL, as the runtime role: claims, leases, retries, uniqueness, schedules. */
describe('job kernel', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let database: Database;
  let owner: Client;
  let sql: Sql;
  let jobs: JobRepository<TestPayloads>;
  let schedules: ScheduleRepository<TestPayloads>;
  const ran: Array<{ id: string; worker: string; label: string }> = [];
  const handlers: { [K in keyof TestPayloads]: Handler<K> } = {
    async count(job, ctx) {
      await sleep(15);
      ran.push({ id: job.id, worker: ctx.workerId, label: job.params.label });
      return { kind: 'success', message: `counted ${job.params.label}` };
    },
    async flaky(job) {
      return job.attempts < job.params.failures ? { kind: 'failed', error: `failure ${job.attempts + 1}` } : { kind: 'success', message: 'recovered' };
    },
    async gated() {
      return { kind: 'success', message: 'not replaced in this test' };
    },
    async patient(job, ctx) {
      const seen = job.progressDone + 1;
      await ctx.progress({ done: seen, total: job.params.polls });
      return seen < job.params.polls ? { kind: 'waiting', checkAfterMs: 300 } : { kind: 'success', message: `done after ${seen} runs` };
    },
  };
  const registry = (over: Partial<typeof handlers> = {}): JobHandlers<TestPayloads> => {
    const h = { ...handlers, ...over };
    return {
      count: { run: h.count },
      flaky: { run: h.flaky, retry: { maxAttempts: 3, baseSeconds: 10, maxSeconds: 3600 } },
      gated: { run: h.gated, leaseSeconds: 30 },
      patient: { run: h.patient },
    };
  };
  const worker = (id: string, over: Partial<typeof handlers> = {}) =>
    new JobWorker<TestPayloads>(jobs, schedules, registry(over), { workerId: id, parse: (_kind, raw) => raw as never });
  const state = async (id: string) =>
    (
      await owner.query(
        `SELECT status, attempts, error, message, progress_done, progress_total, lease_token::int AS token, extract(epoch FROM run_at - now())::float8 AS due_in
           FROM ops.jobs WHERE id = $1`,
        [id],
      )
    ).rows[0] as {
      status: string;
      attempts: number;
      error: string | null;
      message: string | null;
      progress_done: number;
      progress_total: number | null;
      token: number;
      due_in: number;
    };

  beforeAll(async () => {
    db = await createTestDatabase();
    database = await openDatabase({
      ownerUrl: db.url,
      runtimeUrl: db.runtimeUrl,
      window: { maxPastDays: 3650, maxFutureDays: 30 },
      log: { info: () => undefined, warn: () => undefined, debug: () => undefined },
    });
    sql = Sql.of(database.ds);
    jobs = new JobRepository<TestPayloads>(sql);
    schedules = new ScheduleRepository<TestPayloads>(sql);
    owner = new Client({ connectionString: db.url });
    await owner.connect();
  });
  afterAll(async () => {
    await owner?.end();
    await database?.close();
    await db?.drop();
  });
  beforeEach(async () => {
    ran.length = 0;
    // Earlier tests' leftovers must not be claimed by this one (the runtime role deletes nothing; the owner may).
    await owner.query(`DELETE FROM ops.jobs`);
    await owner.query(`DELETE FROM ops.schedules`);
  });

  it('runs each job exactly once when workers race for them', async () => {
    for (let i = 0; i < 12; i++) await jobs.enqueue({ kind: 'count', namespace: `ns-${i}`, params: { label: `j${i}` }, reason: 'race' });
    const workers = Array.from({ length: 4 }, (_, i) => worker(`w${i}`));
    await Promise.all(workers.map(drain));
    expect(ran).toHaveLength(12);
    expect(new Set(ran.map((r) => r.id)).size).toBe(12);
    expect(new Set(ran.map((r) => r.worker)).size).toBeGreaterThan(1);
    const statuses = (await owner.query(`SELECT status, count(*)::int AS n FROM ops.jobs GROUP BY status`)).rows;
    expect(statuses).toEqual([{ status: 'succeeded', n: 12 }]);

    // Bare claims at the same moment: three due jobs go to three of eight claimants, none twice.
    for (let i = 0; i < 3; i++) await jobs.enqueue({ kind: 'count', namespace: `again-${i}`, params: { label: `k${i}` }, reason: 'race' });
    const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => jobs.claim(`c${i}`, { count: 60 })));
    const won = claims.filter((c) => c !== null).map((c) => c?.id);
    expect(won).toHaveLength(3);
    expect(new Set(won).size).toBe(3);
  });

  it('fences a stale lease: the worker that lost it can neither report nor finish, the new holder can', async () => {
    const { job } = await jobs.enqueue({ kind: 'gated', namespace: 'fence', params: { label: 'x' }, reason: 'fencing' });
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let staleProgress: unknown;
    const stale = worker('stale', {
      async gated(_job, ctx) {
        entered();
        await gate; // as if the process stalled (GC pause, network partition) past its lease
        staleProgress = await ctx.progress({ message: 'stale' }).catch((err: unknown) => err);
        return { kind: 'success', message: 'written by the stale worker' };
      },
    });
    const staleRun = stale.runNext();
    await inside;
    const first = await state(job.id);
    await owner.query(`UPDATE ops.jobs SET locked_until = now() - interval '1 second' WHERE id = $1`, [job.id]);
    const fresh = worker('fresh', { gated: async () => ({ kind: 'success', message: 'written by the new holder' }) });
    expect(await fresh.runNext()).toBe(true);
    release();
    expect(await staleRun).toBe(true);
    expect(staleProgress).toBeInstanceOf(LostLeaseError);
    const after = await state(job.id);
    expect(after).toMatchObject({ status: 'succeeded', message: 'written by the new holder' });
    expect(after.token).toBe(first.token + 1);

    // The same at the repository: a write under the old token changes nothing.
    const { job: other } = await jobs.enqueue({ kind: 'gated', namespace: 'fence-2', params: { label: 'y' }, reason: 'fencing' });
    const a = await jobs.claim('a', { gated: 0.2 });
    await sleep(400);
    const b = await jobs.claim('b', { gated: 60 });
    expect(a?.id).toBe(other.id);
    expect(b?.id).toBe(other.id);
    const leaseA = { jobId: other.id, token: a?.leaseToken ?? -1 };
    const leaseB = { jobId: other.id, token: b?.leaseToken ?? -1 };
    expect(await jobs.progress(leaseA, { done: 5 }, 60)).toBe(false);
    expect(await jobs.heartbeat(leaseA, 60)).toBe(false);
    expect(await jobs.succeed(leaseA, 'stale')).toBe(false);
    expect(await jobs.fail(leaseA, 'stale', { maxAttempts: 1, baseSeconds: 1, maxSeconds: 1 })).toBe(false);
    expect(await sql.transaction((tx) => jobs.holds(leaseA, tx))).toBe(false);
    expect(await jobs.succeed(leaseB, 'fresh', 3)).toBe(true);
    expect(await state(other.id)).toMatchObject({ status: 'succeeded', message: 'fresh', progress_done: 3 });
  });

  it('retries a failed run after an exponential backoff, then fails it for good', async () => {
    const { job } = await jobs.enqueue({ kind: 'flaky', namespace: 'retry', params: { failures: 5 }, reason: 'backoff' });
    const w = worker('w');
    expect(await w.runNext()).toBe(true);
    let s = await state(job.id);
    expect(s).toMatchObject({ status: 'queued', attempts: 1, error: 'failure 1' });
    expect(s.due_in).toBeGreaterThan(8); // 10 s × 2^0
    expect(s.due_in).toBeLessThanOrEqual(10);
    expect(await w.runNext()).toBe(false); // not due yet

    await owner.query(`UPDATE ops.jobs SET run_at = now() WHERE id = $1`, [job.id]);
    expect(await w.runNext()).toBe(true);
    s = await state(job.id);
    expect(s).toMatchObject({ status: 'queued', attempts: 2, error: 'failure 2' });
    expect(s.due_in).toBeGreaterThan(18); // 10 s × 2^1
    expect(s.due_in).toBeLessThanOrEqual(20);

    await owner.query(`UPDATE ops.jobs SET run_at = now() WHERE id = $1`, [job.id]);
    expect(await w.runNext()).toBe(true);
    expect(await state(job.id)).toMatchObject({ status: 'failed', attempts: 3, error: 'failure 3' });
    expect(await w.runNext()).toBe(false);

    // A run that succeeds on a retry clears the error of the failed one.
    const { job: later } = await jobs.enqueue({ kind: 'flaky', namespace: 'retry', params: { failures: 1 }, reason: 'backoff' });
    expect(await w.runNext()).toBe(true);
    await owner.query(`UPDATE ops.jobs SET run_at = now() WHERE id = $1`, [later.id]);
    expect(await w.runNext()).toBe(true);
    expect(await state(later.id)).toMatchObject({ status: 'succeeded', attempts: 1, error: null, message: 'recovered' });
  });

  it('keeps a waiting job running without holding a worker, and runs it again when it is due', async () => {
    const { job } = await jobs.enqueue({ kind: 'patient', namespace: 'wait', params: { polls: 2 }, reason: 'waiting' });
    const w = worker('w');
    expect(await w.runNext()).toBe(true);
    expect(await state(job.id)).toMatchObject({ status: 'running', progress_done: 1, progress_total: 2 });
    expect(await w.runNext()).toBe(false); // released, but not due for 300 ms
    await sleep(400);
    expect(await w.runNext()).toBe(true);
    expect(await state(job.id)).toMatchObject({ status: 'succeeded', progress_done: 2, message: 'done after 2 runs' });
  });

  it('holds at most one queued or running job per kind and namespace, in the database, under concurrent requests', async () => {
    const listener = new Client({ connectionString: db.url });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (n) => heard.push(JSON.parse(n.payload ?? '{}').id));
    await listener.query(`LISTEN ${JOBS_CHANNEL}`);
    try {
      const results = await Promise.all(
        Array.from({ length: 10 }, () => jobs.enqueue({ kind: 'count', namespace: 'one', params: { label: 'same' }, reason: 'twice' })),
      );
      expect(results.filter((r) => r.created)).toHaveLength(1);
      const id = results[0]?.job.id;
      expect(new Set(results.map((r) => r.job.id))).toEqual(new Set([id]));
      // The database itself refuses a second active row, whoever writes it.
      await expect(owner.query(`INSERT INTO ops.jobs (kind, namespace, reason) VALUES ('count', 'one', 'raw insert')`)).rejects.toMatchObject({
        code: '23505',
      });
      await expect(
        owner.query(`INSERT INTO ops.jobs (kind, namespace, reason, status) VALUES ('count', 'one', 'raw insert', 'running')`),
      ).rejects.toMatchObject({
        code: '23505',
      });
      // Other namespaces, the all-namespaces job (null) and other kinds are separate.
      const all = await Promise.all([1, 2, 3].map(() => jobs.enqueue({ kind: 'count', namespace: null, params: { label: 'all' }, reason: 'all' })));
      expect(all.filter((r) => r.created)).toHaveLength(1);
      expect((await jobs.enqueue({ kind: 'count', namespace: 'two', params: { label: 'b' }, reason: 'other' })).created).toBe(true);
      expect((await jobs.enqueue({ kind: 'flaky', namespace: 'one', params: { failures: 0 }, reason: 'other kind' })).created).toBe(true);
      await drain(worker('w'));
      // Once it is done, the next request queues a new job.
      const next = await jobs.enqueue({ kind: 'count', namespace: 'one', params: { label: 'same' }, reason: 'again' });
      expect(next.created).toBe(true);
      expect(next.job.id).not.toBe(id);
      await new Promise((r) => setTimeout(r, 100));
      expect(heard).toContain(id);
      expect(heard).toContain(next.job.id);
    } finally {
      await listener.end();
    }
  });

  it('fires a due schedule once, skips a turn while its job is active, and moves on by its interval', async () => {
    const s = await schedules.upsert({
      kind: 'count',
      namespace: 'sched',
      params: { label: 'tick' },
      everySeconds: 3600,
      firstRunAt: new Date(Date.now() - 1000),
    });
    expect(await worker('w').step()).toBe(true);
    expect(ran.map((r) => r.label)).toEqual(['tick']);
    const [fired] = await schedules.list();
    expect(fired?.lastJobId).toBe(ran[0]?.id);
    expect((fired?.nextRunAt.getTime() ?? 0) - s.nextRunAt.getTime()).toBe(3600_000);
    expect(await worker('w').step()).toBe(false); // not due again for an hour

    // Due again while a job of its kind and namespace is queued: that turn is skipped, the schedule moves on.
    await owner.query(`UPDATE ops.schedules SET next_run_at = now() - interval '1 second'`);
    const { job: pending } = await jobs.enqueue({ kind: 'count', namespace: 'sched', params: { label: 'by hand' }, reason: 'manual' });
    expect(await schedules.fireDue(['count'])).toEqual([]);
    const [skipped] = await schedules.list();
    expect(skipped?.nextRunAt.getTime()).toBeGreaterThan(Date.now() + 3500_000);
    expect((await owner.query(`SELECT count(*)::int AS n FROM ops.jobs WHERE status IN ('queued', 'running')`)).rows[0].n).toBe(1);
    await owner.query(`UPDATE ops.jobs SET status = 'succeeded' WHERE id = $1`, [pending.id]);

    // Workers firing at the same moment queue one job between them.
    await owner.query(`UPDATE ops.schedules SET next_run_at = now() - interval '1 second'`);
    const fires = await Promise.all(Array.from({ length: 6 }, () => schedules.fireDue(['count'])));
    expect(fires.flat()).toHaveLength(1);
    // A disabled schedule does not fire; kinds a worker does not run are left to workers that do.
    await owner.query(`UPDATE ops.jobs SET status = 'succeeded'`);
    await owner.query(`UPDATE ops.schedules SET next_run_at = now() - interval '1 second'`);
    expect(await schedules.fireDue(['flaky'])).toEqual([]);
    expect(await schedules.disable('count', 'sched')).toBe(true);
    expect(await schedules.fireDue(['count'])).toEqual([]);
  });
  it('ensures one schedule per namespace without re-enabling a disabled one or resetting its next run', async () => {
    expect(await schedules.ensure('count', ['ens-a', 'ens-b'], { label: 'e' }, 900)).toBe(2);
    expect(await schedules.ensure('count', ['ens-a', 'ens-b'], { label: 'e' }, 900)).toBe(0); // nothing to do
    const before = (await schedules.list()).find((x) => x.namespace === 'ens-a');
    expect(await schedules.disable('count', 'ens-a')).toBe(true);
    // A new namespace appears and the interval changes: one row created, two moved to the new interval.
    expect(await schedules.ensure('count', ['ens-a', 'ens-b', 'ens-c'], { label: 'e' }, 600)).toBe(3);
    const after = await schedules.list();
    expect(after.map((x) => [x.namespace, x.everySeconds, x.enabled])).toEqual([
      ['ens-a', 600, false],
      ['ens-b', 600, true],
      ['ens-c', 600, true],
    ]);
    expect(after[0]?.nextRunAt.getTime()).toBe(before?.nextRunAt.getTime());
    expect(await schedules.ensure('count', [], {}, 600)).toBe(0);
  });
});
