import { Client } from 'pg';
import { loadConfig } from '../../src/common/config';
import { PromotionTrigger } from '../../src/gold/promotion/promotion-trigger';
import { Sql } from '../../src/platform/postgres/sql';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';

/**
 * Issue 23 item 5, "Gold that answers on day one", through the public path only: messages
 * ingested over GraphQL, derived by the default offline extractor, promoted by the worker on its
 * own once the namespace settles (nobody calls `promote`), read back with `about`.
 *
 * Default settings except timing: DERIVE_MAX_WAIT_MS=0 (derive at once instead of waiting up to
 * 30 s for a fuller batch) and GOLD_PROMOTE_MIN_GAP_SECONDS=10 (an early promotion may follow the
 * previous one after 10 s instead of 60 s); the harness's PROJECTOR_POLL_MS=50. Thresholds, the
 * schedule interval (900 s), the settle delay (5 s, which the harness turns off for other tests and
 * this one sets back to the default), the embedder and the judge are the defaults.
 */
const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { event { id } } }`;
const ABOUT = `query($ns: String!, $name: String!) { about(namespace: $ns, name: $name) {
  id name type aliases mergedFrom { id name } facts { id statement sources { event { id } } } } }`;

interface About {
  id: string;
  name: string;
  type: string;
  aliases: string[];
  mergedFrom: Array<{ id: string; name: string }>;
  facts: Array<{ id: string; statement: string; sources: Array<{ event: { id: string } }> }>;
}

/** The service's defaults for Gold (what an empty environment gives). */
const DEFAULTS = loadConfig({}).gold;

/** How long a test waits for the worker's own promotion: far below the 900 s schedule interval. */
const PROMOTED_WITHIN_MS = 90_000;

describe('Gold on day one: named twice, promoted once the namespace settles, "Bob" found', () => {
  let t: TestApp;
  let db: Client;
  let agent: string;

  beforeAll(async () => {
    t = await startTestApp({
      DERIVE_MAX_WAIT_MS: '0',
      GOLD_PROMOTE_MIN_GAP_SECONDS: '10',
      // The harness turns the settle trigger off for other tests; this one runs with the default.
      GOLD_PROMOTE_SETTLE_SECONDS: String(DEFAULTS.promoteSettleSeconds),
    });
    db = new Client({ connectionString: t.databaseUrl });
    await db.connect();
    // An agent's token: it may ingest and read, but not `promote` (that needs REVIEW).
    agent = (await createToken(t, [{ namespacePattern: 'day-one*', capabilities: ['INGEST', 'READ'] }], 'day-one-agent')).token;
  }, 240_000);
  afterAll(async () => {
    await db?.end();
    await t?.stop();
  });

  const ingest = (ns: string, messages: string[]) =>
    gqlOk(t.url, agent, INGEST, { input: messages.map((content) => anEvent(ns).by('USER').saying(content).build()) });
  const about = async (ns: string, name: string) => (await gqlOk<{ about: About | null }>(t.url, agent, ABOUT, { ns, name })).about;
  const derived = (ns: string) =>
    eventually(
      async () => {
        const { rows } = await db.query(`SELECT count(*) FILTER (WHERE status <> 'done')::int AS left FROM ops.derivation_queue WHERE namespace = $1`, [ns]);
        return rows[0].left === 0;
      },
      `the derivation of ${ns}`,
      120_000,
    );
  const promoteJobs = async (ns: string) =>
    (
      await db.query(
        `SELECT status, reason, created_by, schedule_id IS NOT NULL AS scheduled, created_at FROM ops.jobs WHERE kind = 'promote' AND namespace = $1 ORDER BY created_at`,
        [ns],
      )
    ).rows as Array<{ status: string; reason: string; created_by: string | null; scheduled: boolean; created_at: Date }>;

  it('promotes "Bob Smith" at the first run after the namespace settles, with "Bob" merged in, and about("Bob") answers', async () => {
    const ns = uniqueNamespace('day-one-bob');
    // Day one, first message: one mention is not enough, so the first promotion defers Bob Smith.
    await ingest(ns, ['Bob Smith is my manager']);
    await derived(ns);
    const first = await eventually(
      async () => (await promoteJobs(ns)).find((j) => j.status === 'succeeded'),
      'the first promotion after the namespace settled',
      PROMOTED_WITHIN_MS,
    );
    expect(await about(ns, 'Bob Smith')).toBeNull();

    // Three more messages: Bob Smith is named in three, "Bob" in one, Denver in one.
    await ingest(ns, ['I had lunch with Bob Smith today', 'Bob Smith moved to the Denver office', 'Bob says the launch slipped']);
    await derived(ns);
    // The next run comes when the namespace settles again, not GOLD_PROMOTE_EVERY_SECONDS (900 s) after the first.
    const bob = await eventually(
      async () => {
        const a = await about(ns, 'Bob');
        return a && a.mergedFrom.length >= 2 && a.facts.length > 0 ? a : null;
      },
      'about("Bob") to answer without a promote call',
      PROMOTED_WITHIN_MS,
    );
    expect(bob.name).toBe('Bob Smith');
    expect(bob.type).toBe('person');
    expect(bob.aliases).toContain('Bob');
    expect(bob.mergedFrom.map((m) => m.name).sort()).toEqual(['Bob', 'Bob Smith']);
    // The facts stated where Bob or Bob Smith is named, each with its source event (those current
    // now: which ones the rule judge keeps current is Silver's business, not this test's).
    const statements = bob.facts.map((f) => f.statement);
    expect(statements.some((x) => x.includes('Bob Smith'))).toBe(true);
    expect(statements.every((x) => /\bBob\b/.test(x))).toBe(true);
    expect(bob.facts.every((f) => f.sources.length > 0)).toBe(true);
    // Any case and spelling of the name finds the same entity.
    for (const name of ['bob', 'BOB', 'Bob Smith', '  bob   SMITH ']) expect((await about(ns, name))?.id).toBe(bob.id);
    // Named once: Denver stays in Silver (deferred), and about says so with null.
    expect(await about(ns, 'Denver')).toBeNull();

    // Nobody called promote: every run was queued by the namespace's schedule, the second well
    // before the schedule's own interval came round.
    const jobs = await promoteJobs(ns);
    expect(jobs.length).toBeGreaterThanOrEqual(2);
    expect(jobs.every((j) => j.scheduled && j.created_by === null && /^scheduled every/.test(j.reason))).toBe(true);
    const merged = await eventually(async () => {
      const { rows } = await db.query(
        `SELECT l.step, l.reason FROM gold.promotion_log l JOIN silver.entities e ON e.id = l.silver_ids[1]
            WHERE l.namespace = $1 AND l.action = 'merge' AND e.name = 'Bob'`,
        [ns],
      );
      return rows[0] as { step: string; reason: string } | undefined;
    }, 'the merge of "Bob" in the promotion log');
    // No shared conversation (the messages have none): the first-name step merged them.
    expect(merged.step).toBe('first_name');
    expect(merged.reason).toMatch(/bob.*first name of the only person named "bob smith"/);
    expect((jobs[jobs.length - 1]?.created_at.getTime() ?? Infinity) - first.created_at.getTime()).toBeLessThan(900_000);
  }, 300_000);

  it('never merges "Bob" when two people named "Bob …" exist: each stays its own entity', async () => {
    const ns = uniqueNamespace('day-one-bobs');
    await ingest(ns, [
      'Bob Jones leads the platform team',
      'I met Bob Jones at the offsite',
      'Bob Miller is my neighbor',
      'I had dinner with Bob Miller yesterday',
      'Bob says the launch slipped',
      'Bob fixed the build this morning',
    ]);
    await derived(ns);
    const [jones, miller, bob] = await eventually(
      async () => {
        const found = await Promise.all(['Bob Jones', 'Bob Miller', 'Bob'].map((n) => about(ns, n)));
        return found.every((x) => x !== null) ? (found as About[]) : null;
      },
      'the three Bobs to be promoted without a promote call',
      PROMOTED_WITHIN_MS,
    );
    expect(new Set([jones?.id, miller?.id, bob?.id]).size).toBe(3);
    expect(jones?.name).toBe('Bob Jones');
    expect(miller?.name).toBe('Bob Miller');
    // "Bob" (named twice) is promoted on its own: which Bob it is, the messages do not say.
    expect(bob?.name).toBe('Bob');
    expect(bob?.mergedFrom.map((m) => m.name)).toEqual(['Bob']);
    for (const x of [jones, miller]) {
      expect(x?.aliases).not.toContain('Bob');
      expect(x?.mergedFrom.map((m) => m.name)).not.toContain('Bob');
    }
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM gold.promotion_log WHERE namespace = $1 AND step = 'first_name'`, [ns]);
    expect(rows[0].n).toBe(0);
  }, 300_000);

  it("brings a settled namespace's schedule forward only: never while events are pending, never later, never a disabled one", async () => {
    // Last test: the worker's job loop stops, so no schedule fires while this one moves them by hand.
    await t.app.stages.get('jobs')?.stop();
    const trigger = new PromotionTrigger(Sql.of(t.app.ds), { everySeconds: 900, settleSeconds: 5, minGapSeconds: 60 });
    const ns = uniqueNamespace('day-one-trigger');
    const schedule = async () =>
      (await db.query(`SELECT next_run_at, enabled, last_fired_at FROM ops.schedules WHERE kind = 'promote' AND namespace = $1`, [ns])).rows[0] as
        { next_run_at: Date; enabled: boolean; last_fired_at: Date | null } | undefined;
    // No queue rows at all counts as settled: the schedule is created, due in about 5 s.
    expect(await trigger.afterDerive(ns)).toBe(true);
    const created = await schedule();
    expect((created?.next_run_at.getTime() ?? 0) - Date.now()).toBeGreaterThan(2_000);
    expect((created?.next_run_at.getTime() ?? 0) - Date.now()).toBeLessThan(10_000);
    // Due sooner already: left as it is.
    await db.query(`UPDATE ops.schedules SET next_run_at = now() + interval '1 second' WHERE kind = 'promote' AND namespace = $1`, [ns]);
    const sooner = (await schedule())?.next_run_at;
    expect(await trigger.afterDerive(ns)).toBe(false);
    expect((await schedule())?.next_run_at).toEqual(sooner);
    // The interval's next run (15 min away) comes forward; the minimum gap after the last firing holds.
    await db.query(
      `UPDATE ops.schedules SET next_run_at = now() + interval '15 minutes', last_fired_at = now() - interval '30 seconds' WHERE kind = 'promote' AND namespace = $1`,
      [ns],
    );
    expect(await trigger.afterDerive(ns)).toBe(true);
    const gap = ((await schedule())?.next_run_at.getTime() ?? 0) - Date.now();
    expect(gap).toBeGreaterThan(20_000);
    expect(gap).toBeLessThan(35_000);
    // A pending event: not settled, nothing moves.
    await db.query(`UPDATE ops.schedules SET next_run_at = now() + interval '15 minutes' WHERE kind = 'promote' AND namespace = $1`, [ns]);
    await ingest(ns, ['Carol Danvers joined the team']);
    const pending = await db.query(`SELECT count(*)::int AS n FROM ops.derivation_queue WHERE namespace = $1 AND status = 'pending'`, [ns]);
    if (pending.rows[0].n > 0) expect(await trigger.afterDerive(ns)).toBe(false);
    await derived(ns);
    // After a run: only when derivation committed in the namespace since the run started (the
    // worker brings the schedule forward itself after that batch, just after the batch commits:
    // wait for it, then put it back, so its late move cannot land after ours).
    await eventually(
      async () => ((await schedule())?.next_run_at.getTime() ?? Infinity) - Date.now() < 10 * 60_000,
      'the worker to bring the schedule forward after its batch',
      30_000,
    );
    await db.query(`UPDATE ops.schedules SET next_run_at = now() + interval '15 minutes' WHERE kind = 'promote' AND namespace = $1`, [ns]);
    expect(await trigger.afterPromotion(ns, new Date(Date.now() + 60_000))).toBe(false);
    expect(await trigger.afterPromotion(ns, new Date(Date.now() - 600_000))).toBe(true);
    // Disabled by someone: stays disabled and where it was.
    await db.query(`UPDATE ops.schedules SET enabled = false, next_run_at = now() + interval '15 minutes' WHERE kind = 'promote' AND namespace = $1`, [ns]);
    const before = await schedule();
    expect(await trigger.afterDerive(ns)).toBe(false);
    expect(await schedule()).toEqual(before);
    // Off: promotion on demand only, or no settle delay.
    expect(new PromotionTrigger(Sql.of(t.app.ds), { everySeconds: 0, settleSeconds: 5, minGapSeconds: 60 }).enabled).toBe(false);
    expect(new PromotionTrigger(Sql.of(t.app.ds), { everySeconds: 900, settleSeconds: 0, minGapSeconds: 60 }).enabled).toBe(false);
  });
});
