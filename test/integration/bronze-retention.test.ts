import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { settled } from '../../src/app/portability.command';
import { describeVerify } from '../../src/gold/portability/chain';
import { ChainRepository } from '../../src/gold/portability/chain.repository';
import { exportNamespace, verifyExportFile, verifyNamespace } from '../../src/gold/portability/export-file';
import { importExport } from '../../src/gold/portability/import-file';
import { Sql } from '../../src/platform/postgres/sql';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

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
  let chain: ChainRepository;
  let oldEvents: string[];
  let retentionApproval: string;

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
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', BRONZE_RETENTION_DAYS: '365' });
    pg = new Client({ connectionString: t.databaseUrl });
    await pg.connect();
    admin = (await createToken(t, [{ namespacePattern: '*', capabilities: ['ADMIN'] }], 'retention-admin')).token;
    approver = (await createToken(t, [{ namespacePattern: '*', capabilities: ['APPROVE'] }], 'retention-dpo')).token;
    nsAdmin = (await createToken(t, [{ namespacePattern: nsR, capabilities: ['ADMIN', 'APPROVE'] }], 'ns-admin')).token;
    await ingest(nsR, 'an old note', '2007-05-10T10:00:00Z');
    await ingest(nsR, 'I live in Reykjavik', '2007-05-20T10:00:00Z');
    await ingest(nsS, 'an old note of S', '2007-06-02T10:00:00Z');
    await ingest(nsR, 'a recent note', new Date(Date.now() - 60_000).toISOString());
    // Derived, projected and sealed before the drop: the chain, the facts and the graph hold the old events.
    for (const ns of [nsR, nsS]) await settled(Sql.of(t.app.ds), ns, 120_000);
    chain = new ChainRepository(Sql.of(t.app.ds));
    for (const ns of [nsR, nsS]) await chain.sealAll(ns);
    oldEvents = (await pg.query(`SELECT id::text AS id FROM bronze.events WHERE namespace = ANY($1) AND occurred_at < '2007-07-01'`, [[nsR, nsS]])).rows.map(
      (r) => r.id as string,
    );
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

    retentionApproval = req?.id as string;
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

  it('leaves a signed checkpoint per namespace, so verify continues past the dropped events; the EXECUTED line names the executor', async () => {
    const checkpoints = (
      await pg.query(
        `SELECT namespace, partition_name, dropped_events::int AS dropped, sealed_events::int AS sealed, cut_seq::int AS cut, bronze.checkpoint_signature_ok(id) AS ok
           FROM bronze.chain_checkpoints WHERE namespace = ANY($1) ORDER BY namespace`,
        [[nsR, nsS]],
      )
    ).rows;
    expect(checkpoints).toEqual(
      [
        { namespace: nsR, partition_name: 'events_2007_05', dropped: 2, sealed: 2, ok: true },
        { namespace: nsS, partition_name: 'events_2007_06', dropped: 1, sealed: 1, ok: true },
      ]
        .sort((a, b) => (a.namespace < b.namespace ? -1 : 1))
        .map((c) => expect.objectContaining(c)),
    );
    for (const ns of [nsR, nsS]) {
      const r = await verifyNamespace(chain, ns);
      expect(r).toMatchObject({ ok: true, broken: null, retained: ns === nsR ? 2 : 1, checkpoints: 1 });
      expect(describeVerify(r, ns)).toMatch(/chain intact, \d+ link\(s\) \(\d event\(s\) dropped by Bronze retention, listed by 1 retention checkpoint\(s\)\)/);
    }
    const log = (await pg.query(`SELECT step, principal_name, detail FROM access.approval_log WHERE request_id = $1 ORDER BY id`, [retentionApproval])).rows;
    // Refused: the executor's other parameters, then a second use; each attempt is in the approval's history.
    expect(log.map((l) => l.step)).toEqual(['REQUESTED', 'APPROVED', 'REFUSED', 'EXECUTED', 'REFUSED']);
    expect(log.find((l) => l.step === 'EXECUTED')).toMatchObject({
      principal_name: 'retention-admin',
      detail: expect.stringMatching(/dropped \d+ Bronze partition\(s\) before 2007-07-01/),
    });

    // Verify still reads every later link: an owner's edit of a kept event is found at its position.
    const kept = (await pg.query(`SELECT id::text AS id FROM bronze.events WHERE namespace = $1`, [nsR])).rows[0]?.id as string;
    const seq = (await pg.query(`SELECT seq::int AS seq FROM ops.hash_chain WHERE namespace = $1 AND item_id = $2`, [nsR, kept])).rows[0]?.seq as number;
    const tamper = async (statement: string, params: unknown[]) => {
      await pg.query('BEGIN');
      await pg.query(`SET LOCAL session_replication_role = replica`);
      await pg.query(statement, params);
      await pg.query('COMMIT');
    };
    await tamper(`UPDATE bronze.events SET content = 'a different note' WHERE id = $1`, [kept]);
    expect((await verifyNamespace(chain, nsR)).broken).toMatchObject({ position: seq, reason: 'the content does not match the event checksum' });
    await tamper(`UPDATE bronze.events SET content = 'a recent note' WHERE id = $1`, [kept]);
    // A checkpoint changed behind the guards (its cut moved) no longer carries the key's signature: nothing it lists is excused.
    await tamper(`UPDATE bronze.chain_checkpoints SET dropped_events = dropped_events + 1 WHERE namespace = $1`, [nsS]);
    expect((await verifyNamespace(chain, nsS)).broken).toMatchObject({ kind: 'event', reason: expect.stringMatching(/signature does not verify/) });
  });

  it('exports the checkpoint and the dropped links, which verify --file accepts and an import skips', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-retained-'));
    try {
      const file = path.join(dir, 'retained.jsonl');
      await exportNamespace(chain, nsR, file);
      const lines = fs
        .readFileSync(file, 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; item?: unknown; ctx?: { retained?: string } });
      expect(lines[1]).toMatchObject({ type: 'checkpoint', checkpoint: { namespace: nsR, partition: 'events_2007_05', droppedEvents: 2 } });
      expect(lines.filter((l) => l.type === 'event' && l.item === null && typeof l.ctx?.retained === 'string')).toHaveLength(2);
      expect(await verifyExportFile(file)).toMatchObject({ ok: true, retained: 2, checkpoints: 1 });
      // A dropped link without its checkpoint line is a missing record.
      fs.writeFileSync(
        path.join(dir, 'cut.jsonl'),
        fs
          .readFileSync(file, 'utf8')
          .split('\n')
          .filter((l, i) => i !== 1)
          .join('\n')
          .replace(/"checkpoints":1}/, '"checkpoints":0}'),
      );
      expect((await verifyExportFile(path.join(dir, 'cut.jsonl'))).broken).toMatchObject({ kind: 'event', reason: expect.stringMatching(/is missing/) });
      const me = (await t.app.services.tokens.authenticate(`Bearer ${t.adminToken}`)).requirePrincipal();
      const s = await importExport(Sql.of(t.app.ds), t.app.repositories.events, file, {
        namespace: uniqueNamespace('retained-import'),
        batchSize: 100,
        limits: t.app.config.limits,
        importer: { principalId: me.principalId, name: me.name },
      });
      expect(s).toMatchObject({ verified: true, events: { created: 1, retained: 2 }, rejected: [] });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the graph drops the events; their facts stay current and searchable, and say that retention took their sources', async () => {
    await settled(Sql.of(t.app.ds), nsR, 120_000);
    const session = t.app.neo4j.session();
    try {
      const left = await session.run(`MATCH (e:Event) WHERE e.id IN $ids RETURN count(e) AS n`, { ids: oldEvents });
      expect(Number(left.records[0]?.get('n'))).toBe(0);
    } finally {
      await session.close();
    }
    const facts = await gqlOk<{ facts: { edges: Array<{ node: { id: string; statement: string; sourcesDroppedByRetention: number; sources: unknown[] } }> } }>(
      t.url,
      t.adminToken,
      `query($ns: String!) { facts(namespace: $ns) { edges { node { id statement sourcesDroppedByRetention sources { event { id } } } } } }`,
      { ns: nsR },
    );
    const reykjavik = facts.facts.edges.map((e) => e.node).find((f) => /Reykjavik/.test(f.statement));
    expect(reykjavik).toMatchObject({ sourcesDroppedByRetention: 1, sources: [] });
    const hits = await gqlOk<{ searchMemory: Array<{ kind: string; fact: { id: string } | null; evidence: unknown[] }> }>(
      t.url,
      t.adminToken,
      `query($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q, limit: 5) { kind fact { id } evidence { id } } }`,
      { ns: nsR, q: reykjavik?.statement },
    );
    expect(hits.searchMemory.find((h) => h.fact?.id === reykjavik?.id)).toMatchObject({ kind: 'FACT', evidence: [] });
  });

  it('the runtime role cannot read the checkpoint key, sign, or write a checkpoint', async () => {
    const runtime = new Client({ connectionString: t.runtimeDatabaseUrl });
    await runtime.connect();
    try {
      await expect(runtime.query(`SELECT * FROM bronze.chain_key`)).rejects.toMatchObject({ code: '42501' });
      await expect(runtime.query(`SELECT bronze.chain_mac('anything')`)).rejects.toMatchObject({ code: '42501' });
      await expect(runtime.query(`SELECT bronze.record_retention_checkpoints('events_2008_02', gen_random_uuid(), gen_random_uuid())`)).rejects.toMatchObject({
        code: '42501',
      });
      await expect(
        runtime.query(
          `INSERT INTO bronze.chain_checkpoints (namespace, partition_name, range_from, range_to, dropped_events, sealed_events, dropped_links, cut_seq, cut_hash, approval_id, executed_by, signature)
           VALUES ('x', 'events_2000_01', now(), now(), 1, 1, '{[1,2)}', 1, repeat('0', 64), gen_random_uuid(), gen_random_uuid(), repeat('0', 64))`,
        ),
      ).rejects.toMatchObject({ code: '42501' });
      await expect(runtime.query(`SELECT * FROM bronze.retain_events('2007-07-01', gen_random_uuid(), gen_random_uuid())`)).rejects.toMatchObject({
        code: '42501',
      });
    } finally {
      await runtime.end();
    }
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

  it('fences out a derivation batch in flight and lets go of the queue rows of events it drops (migration 1764400001470)', async () => {
    // Months no other test writes: 2007-07 and 2007-08 (2007-05 and 2007-06 went above).
    const nsQ = uniqueNamespace('retain-q');
    await ingest(nsQ, 'I live in Lisbon', new Date(Date.now() - 60_000).toISOString());
    await ingest(nsQ, 'I work at the harbour office', '2007-08-10T10:00:00Z');
    await settled(Sql.of(t.app.ds), nsQ, 120_000);
    const oldId = (await pg.query(`SELECT id::text AS id FROM bronze.events WHERE namespace = $1 AND occurred_at < '2007-09-01'`, [nsQ])).rows[0]?.id as string;
    const lisbon = (
      await pg.query(`SELECT f.id::text AS id FROM silver.facts f WHERE f.namespace = $1 AND f.statement ILIKE '%Lisbon%' AND f.retired_at IS NULL`, [nsQ])
    ).rows[0]?.id as string;
    expect(oldId).toBeDefined();
    expect(lisbon).toBeDefined();

    // A derivation batch's write transaction has passed its fence (the lease row is locked until it commits) ...
    const batch = new Client({ connectionString: t.databaseUrl });
    await batch.connect();
    try {
      await batch.query('BEGIN');
      expect((await batch.query(`SELECT 1 FROM ops.derivation_leases WHERE namespace = $1 FOR UPDATE`, [nsQ])).rowCount).toBe(1);
      // ... and an old event arrives that derivation has not taken yet (its lane waits for the lease).
      await ingest(nsQ, 'I moved to the lighthouse office', '2007-08-20T10:00:00Z');
      const req = (await request(admin, '*', '2007-09-01')).data?.requestApproval;
      await gqlOk(t.url, approver, APPROVE, { id: req?.id });
      const dropping = gqlOk<{ retainBronze: Array<{ name: string; events: number }> }>(t.url, admin, RETAIN, { before: '2007-09-01T00:00:00Z', id: req?.id });
      // The retention runs: it waits for the lease row, or (without the fence) it is done already.
      await Promise.race([
        dropping,
        eventually(
          async () =>
            ((await pg.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%retain_events_as%' AND pid <> pg_backend_pid()`))
              .rowCount ?? 0) > 0,
          'the retention waiting on a lock',
          30_000,
        ),
      ]);
      // What the batch planned from what it read before: the old event merged into another fact.
      await batch.query(`INSERT INTO silver.fact_sources (fact_id, event_id, quote) VALUES ($1, $2, 'I work at the harbour office')`, [lisbon, oldId]);
      await batch.query('COMMIT');
      expect((await dropping).retainBronze.find((p) => p.name === 'events_2007_08')?.events).toBe(2);
    } finally {
      await batch.end();
    }

    // The batch's source row is marked like the rest: no source names a dropped event unmarked.
    const unmarked = await pg.query(
      `SELECT s.event_id FROM silver.fact_sources s JOIN silver.facts f ON f.id = s.fact_id
        WHERE f.namespace = $1 AND s.event_dropped_at IS NULL AND NOT EXISTS (SELECT 1 FROM bronze.events e WHERE e.id = s.event_id)`,
      [nsQ],
    );
    expect(unmarked.rows).toEqual([]);
    // Nothing is left to derive of what went: the namespace settles and its next event is derived.
    expect((await pg.query(`SELECT status FROM ops.derivation_queue WHERE namespace = $1 AND status <> 'done'`, [nsQ])).rows).toEqual([]);
    await ingest(nsQ, 'I adopted a cat named Pixel', new Date().toISOString());
    await settled(Sql.of(t.app.ds), nsQ, 60_000);
    const pixel = await pg.query(`SELECT 1 FROM silver.facts WHERE namespace = $1 AND statement ILIKE '%Pixel%' AND retired_at IS NULL`, [nsQ]);
    expect(pixel.rowCount).toBe(1);
  }, 240_000);
});
