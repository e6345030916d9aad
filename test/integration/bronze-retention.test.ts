import { Client } from 'pg';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

const PLAN = `query($before: DateTime!) { bronzeRetentionPlan(before: $before) { before latestAllowed events partitions { name from to events namespaces { namespace events } } } }`;
const RETAIN = `mutation($before: DateTime!, $id: ID!) { retainBronze(before: $before, approvalId: $id) { name events namespaces { namespace events } } }`;
const REQUEST = `mutation($input: ApprovalRequestInput!) { requestApproval(input: $input) { id status } }`;
const APPROVE = `mutation($id: ID!) { approve(id: $id, reason: "old events may go") { id status } }`;

// Months no other test writes (the window of occurredAt reaches 20 years back): 2007-05 and 2007-06.
const BEFORE = '2007-07-01T00:00:00.000Z';

describe('Bronze retention: dropping old partitions needs a two-person RETAIN_BRONZE approval (docs/lifecycle.md)', () => {
  let t: TestApp;
  let pg: Client;
  const nsR = uniqueNamespace('retain-r');
  const nsS = uniqueNamespace('retain-s');
  let admin: string;
  let approver: string;
  let nsAdmin: string;

  const ingest = (ns: string, content: string, at: string) =>
    gqlOk(t.url, t.adminToken, `mutation($input: EventInput!) { ingestEvent(input: $input) { status } }`, {
      input: anEvent(ns).saying(content).at(at).build(),
    });
  const events = async (ns: string) => (await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM bronze.events WHERE namespace = $1`, [ns])).rows[0]?.n;
  const request = (token: string, namespace: string, before: string) =>
    gql<{ requestApproval: { id: string; status: string } }>(t.url, token, REQUEST, {
      input: { namespace, action: 'RETAIN_BRONZE', params: { before }, reason: 'keep 1 year of raw events' },
    });

  beforeAll(async () => {
    // Retention is off by default (0); a year is kept here.
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', BRONZE_RETENTION_DAYS: '365' }, { api: true, worker: false });
    pg = new Client({ connectionString: t.databaseUrl });
    await pg.connect();
    admin = (await createToken(t, [{ namespacePattern: '*', capabilities: ['ADMIN'] }], 'retention-admin')).token;
    approver = (await createToken(t, [{ namespacePattern: '*', capabilities: ['APPROVE'] }], 'retention-dpo')).token;
    nsAdmin = (await createToken(t, [{ namespacePattern: nsR, capabilities: ['ADMIN', 'APPROVE'] }], 'ns-admin')).token;
    await ingest(nsR, 'an old note', '2007-05-10T10:00:00Z');
    await ingest(nsR, 'another old note', '2007-05-20T10:00:00Z');
    await ingest(nsS, 'an old note of S', '2007-06-02T10:00:00Z');
    await ingest(nsR, 'a recent note', new Date(Date.now() - 60_000).toISOString());
  }, 180_000);
  afterAll(async () => {
    await pg?.end();
    await t?.stop();
  });

  it('the dry run lists the partitions that would go with their events per namespace, and changes nothing', async () => {
    const plan = (
      await gqlOk<{ bronzeRetentionPlan: { events: number; partitions: Array<{ name: string; events: number; namespaces: unknown[] }> } }>(t.url, admin, PLAN, {
        before: BEFORE,
      })
    ).bronzeRetentionPlan;
    const mine = plan.partitions.filter((p) => p.name === 'events_2007_05' || p.name === 'events_2007_06');
    expect(mine).toEqual(
      [
        { name: 'events_2007_05', events: 2, namespaces: [{ namespace: nsR, events: 2 }] },
        { name: 'events_2007_06', events: 1, namespaces: [{ namespace: nsS, events: 1 }] },
      ].map((p) => expect.objectContaining(p)),
    );
    expect(plan.events).toBeGreaterThanOrEqual(3);
    expect(await events(nsR)).toBe(3);
    expect(await events(nsS)).toBe(1);
  });

  it('refuses retention without an approved request, with a bound younger than BRONZE_RETENTION_DAYS, and to anyone without admin on "*"', async () => {
    const none = await gql(t.url, admin, RETAIN, { before: BEFORE, id: '00000000-0000-4000-8000-000000000000' });
    expect(none.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const pending = (await request(admin, '*', '2007-07-01')).data?.requestApproval;
    expect(pending?.status).toBe('PENDING');
    const notApproved = await gql(t.url, admin, RETAIN, { before: BEFORE, id: pending?.id });
    expect(notApproved.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(notApproved.errors?.[0]?.message).toMatch(/not APPROVED/);
    // Self-approval is refused: two people.
    expect((await gql(t.url, admin, APPROVE, { id: pending?.id })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    const thisMonth = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1)).toISOString();
    const tooRecent = await gql(t.url, admin, PLAN, { before: thisMonth });
    expect(tooRecent.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(tooRecent.errors?.[0]?.message).toMatch(/BRONZE_RETENTION_DAYS/);
    expect((await gql(t.url, admin, PLAN, { before: '2007-07-02T00:00:00Z' })).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');

    // A namespace's admin is not an admin of every namespace: no plan, no request, no drop.
    expect((await gql(t.url, nsAdmin, PLAN, { before: BEFORE })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await request(nsAdmin, '*', '2007-07-01')).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await request(nsAdmin, nsR, '2007-07-01')).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await gql(t.url, nsAdmin, RETAIN, { before: BEFORE, id: pending?.id })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await request(admin, '*', '2007-07-15')).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');

    expect(await events(nsR)).toBe(3);
    expect(await events(nsS)).toBe(1);
  });

  it("with a second person's approval it drops exactly the approved months, logs them, and the approval is single-use", async () => {
    const req = (await request(admin, '*', '2007-07-01')).data?.requestApproval;
    expect((await gqlOk<{ approve: { status: string } }>(t.url, approver, APPROVE, { id: req?.id })).approve.status).toBe('APPROVED');
    // Other parameters than the approved ones: refused, approval not used up.
    const other = await gql(t.url, admin, RETAIN, { before: '2007-06-01T00:00:00Z', id: req?.id });
    expect(other.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(await events(nsR)).toBe(3);

    const dropped = (await gqlOk<{ retainBronze: Array<{ name: string; events: number }> }>(t.url, admin, RETAIN, { before: BEFORE, id: req?.id }))
      .retainBronze;
    expect(dropped.filter((p) => p.name.startsWith('events_2007')).map((p) => [p.name, p.events])).toEqual([
      ['events_2007_05', 2],
      ['events_2007_06', 1],
    ]);
    expect(await events(nsR)).toBe(1);
    expect(await events(nsS)).toBe(0);
    const parts = (await pg.query(`SELECT relname FROM pg_class WHERE relname IN ('events_2007_05', 'events_2007_06')`)).rows;
    expect(parts).toEqual([]);
    const log = (
      await pg.query(
        `SELECT partition_name, events, per_namespace, approval_id::text FROM bronze.retention_log WHERE partition_name LIKE 'events_2007%' ORDER BY 1`,
      )
    ).rows;
    expect(log).toEqual([
      { partition_name: 'events_2007_05', events: '2', per_namespace: { [nsR]: 2 }, approval_id: req?.id },
      { partition_name: 'events_2007_06', events: '1', per_namespace: { [nsS]: 1 }, approval_id: req?.id },
    ]);
    const again = await gql(t.url, admin, RETAIN, { before: BEFORE, id: req?.id });
    expect(again.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(again.errors?.[0]?.message).toMatch(/already executed/);
  });

  it('the runtime role cannot drop a partition or write the retention log itself', async () => {
    const runtime = new Client({ connectionString: t.runtimeDatabaseUrl });
    await runtime.connect();
    try {
      await ingest(nsS, 'an old note to keep', '2008-02-02T10:00:00Z');
      await expect(runtime.query(`DROP TABLE bronze.events_2008_02`)).rejects.toMatchObject({ code: '42501' });
      await expect(runtime.query(`DELETE FROM bronze.retention_log`)).rejects.toMatchObject({ code: '42501' });
      await expect(
        runtime.query(`INSERT INTO bronze.retention_log VALUES ('x', now(), now(), 0, '{}', gen_random_uuid(), gen_random_uuid())`),
      ).rejects.toMatchObject({ code: '42501' });
    } finally {
      await runtime.end();
    }
  });
});
