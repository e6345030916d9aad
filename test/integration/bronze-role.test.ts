import { Client } from 'pg';
import { startApp } from '../../src/app/app';
import { loadConfig } from '../../src/common/config';
import { createLogger } from '../../src/common/logger';
import { anEvent } from '../builders/event-input';
import { createTestDatabase, testStores, uniqueNamespace } from '../support/stores';
import { createToken, gqlOk, startTestApp, TestApp } from '../support/test-app';

const INGEST_MANY = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { index status code reason event { id content } } }`;
const READ = `query($id: ID!) { event(id: $id) { id content } }`;
type Result = { index: number; status: string; code: string | null; reason: string | null; event: { id: string; content: string } | null };

const DAY = 86_400_000;
const monthName = (t: number): string => {
  const d = new Date(t);
  return `events_${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
};

/** Runs `sql` and returns the SQLSTATE it failed with, or 'succeeded'. */
async function failure(client: Client, sql: string): Promise<string> {
  try {
    await client.query(sql);
    return 'succeeded';
  } catch (err) {
    return (err as { code?: string }).code ?? 'no code';
  }
}

describe('Bronze under a compromised runtime role', () => {
  let t: TestApp;
  let owner: Client;
  let runtime: Client;
  let token: string;
  const ns = uniqueNamespace('role');

  beforeAll(async () => {
    t = await startTestApp();
    token = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'READ', 'LIST'] }])).token;
    owner = new Client({ connectionString: t.databaseUrl });
    runtime = new Client({ connectionString: t.runtimeDatabaseUrl });
    await Promise.all([owner.connect(), runtime.connect()]);
  });
  afterAll(async () => {
    await Promise.all([owner?.end(), runtime?.end()]);
    await t?.stop();
  });

  const ingest = async (events: unknown[]) => (await gqlOk<{ ingestEvents: Result[] }>(t.url, token, INGEST_MANY, { input: events })).ingestEvents;
  /** How many of these partitions of bronze.events exist, per name. */
  const partitionCounts = async (names: string[]): Promise<number[]> => {
    const { rows } = await owner.query(
      `SELECT (SELECT count(*)::int FROM pg_inherits WHERE inhparent = 'bronze.events'::regclass AND inhrelid::regclass::text = 'bronze.' || n) AS n
         FROM unnest($1::text[]) WITH ORDINALITY AS x(n, i) ORDER BY i`,
      [names],
    );
    return rows.map((r) => r.n as number);
  };

  it('serves requests as a role that is not superuser, owns nothing in bronze, may only SELECT there and writes through the ingest function', async () => {
    const [me] = (await t.app.ds.query(`SELECT current_user AS role`)) as Array<{ role: string }>;
    expect(me?.role).toBe(new URL(t.runtimeDatabaseUrl).username);
    const { rows } = await owner.query(
      `SELECT r.rolsuper, r.rolcreaterole, pg_has_role(r.oid, t.relowner, 'MEMBER') AS member_of_owner,
              (SELECT count(*)::int FROM pg_class c WHERE c.relnamespace = 'bronze'::regnamespace AND c.relowner = r.oid)
              + (SELECT count(*)::int FROM pg_proc p WHERE p.pronamespace = 'bronze'::regnamespace AND p.proowner = r.oid) AS owned,
              array(SELECT p FROM unnest(array['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'TRIGGER', 'REFERENCES']) p
                     WHERE has_table_privilege(r.oid, 'bronze.events', p)) AS on_events,
              array(SELECT p FROM unnest(array['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'TRIGGER', 'REFERENCES']) p
                     WHERE has_table_privilege(r.oid, 'bronze.event_keys', p)) AS on_keys,
              has_schema_privilege(r.oid, 'bronze', 'CREATE') AS create_in_bronze
         FROM pg_roles r, pg_class t WHERE r.rolname = $1 AND t.oid = 'bronze.events'::regclass`,
      [me?.role],
    );
    expect(rows).toEqual([
      {
        rolsuper: false,
        rolcreaterole: false,
        member_of_owner: false,
        owned: 0,
        on_events: ['SELECT'],
        on_keys: ['SELECT'],
        create_in_bronze: false,
      },
    ]);

    const [r] = await ingest([anEvent(ns).saying('written by the runtime role').build()]);
    expect(r?.status).toBe('CREATED');
    const read = await gqlOk<{ event: { id: string; content: string } }>(t.url, token, READ, { id: r?.event?.id });
    expect(read.event).toEqual({ id: r?.event?.id, content: 'written by the runtime role' });
  });

  it('refuses every way around the triggers to the runtime role, and the event stays as stored', async () => {
    const [r] = await ingest([anEvent(ns).saying('immutable truth').at('2026-02-10T00:00:00Z').build()]);
    const id = r?.event?.id as string;
    const [{ owner: ownerRole }] = (await owner.query(`SELECT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE oid = 'bronze.events'::regclass`)).rows;
    const statements = [
      // the six from the report
      `ALTER TABLE bronze.events DISABLE TRIGGER events_no_update_delete`,
      `ALTER TABLE bronze.events_2026_02 DISABLE TRIGGER ALL`,
      `SET session_replication_role = replica`,
      `DROP TRIGGER events_no_update_delete ON bronze.events`,
      `DROP TRIGGER events_2026_02_no_truncate ON bronze.events_2026_02`,
      `ALTER TABLE bronze.events DETACH PARTITION bronze.events_2026_02`,
      `DELETE FROM bronze.events WHERE id = '${id}'`,
      `UPDATE bronze.events SET content = 'tampered' WHERE id = '${id}'`,
      `TRUNCATE bronze.events`,
      `DELETE FROM bronze.events_2026_02 WHERE id = '${id}'`,
      `UPDATE bronze.events_2026_02 SET content = 'tampered' WHERE id = '${id}'`,
      `TRUNCATE bronze.events_2026_02`,
      `DELETE FROM bronze.event_keys WHERE event_id = '${id}'`,
      `UPDATE bronze.event_keys SET checksum = 'x' WHERE event_id = '${id}'`,
      `TRUNCATE bronze.event_keys`,
      `DROP TABLE bronze.events_2026_02`,
      // and the doors next to them
      `SET ROLE "${ownerRole}"`,
      `ALTER TABLE bronze.events NO FORCE ROW LEVEL SECURITY`,
      `CREATE TABLE bronze.shadow (id int)`,
      `CREATE OR REPLACE FUNCTION bronze.reject_mutation() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`,
      `ALTER FUNCTION bronze.ensure_event_partition(date) SECURITY INVOKER`,
      `UPDATE bronze.partition_window SET max_past_days = 100000`,
      `ALTER ROLE CURRENT_USER SUPERUSER`,
    ];
    const outcomes: Record<string, string> = {};
    for (const s of statements) outcomes[s] = await failure(runtime, s);
    expect(outcomes).toEqual(Object.fromEntries(statements.map((s) => [s, '42501'])));
    // A GRANT without grant option only warns ("no privileges were granted"): check its effect.
    await runtime.query(`GRANT DELETE, UPDATE, TRUNCATE ON bronze.events, bronze.event_keys TO PUBLIC, CURRENT_USER`);
    const widened = await runtime.query(
      `SELECT count(*)::int AS n FROM unnest(array['bronze.events', 'bronze.event_keys']) t, unnest(array['DELETE', 'UPDATE', 'TRUNCATE']) p WHERE has_table_privilege(t, p)`,
    );
    expect(widened.rows[0].n).toBe(0);

    const stored = await owner.query(`SELECT content, tableoid::regclass::text AS part FROM bronze.events WHERE id = $1`, [id]);
    expect(stored.rows).toEqual([{ content: 'immutable truth', part: 'bronze.events_2026_02' }]);
    expect((await owner.query(`SELECT count(*)::int AS n FROM bronze.event_keys WHERE event_id = $1`, [id])).rows[0].n).toBe(1);
    const triggers = await owner.query(
      `SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid IN ('bronze.events'::regclass, 'bronze.events_2026_02'::regclass) AND NOT tgisinternal ORDER BY tgname`,
    );
    expect(triggers.rows).toEqual([
      { tgname: 'chain_tick', tgenabled: 'O' }, // the hash-chain sealer's tick (statement-level: not cloned)
      { tgname: 'events_2026_02_no_truncate', tgenabled: 'O' },
      { tgname: 'events_no_truncate', tgenabled: 'O' },
      { tgname: 'events_no_update_delete', tgenabled: 'O' },
      { tgname: 'events_no_update_delete', tgenabled: 'O' }, // the clone on the partition
    ]);
    const [current] = (await runtime.query(`SELECT current_setting('session_replication_role') AS v`)).rows;
    expect(current.v).toBe('origin');
  });

  it('makes partitions only through the owner-side function, only inside the window, owned by the owner', async () => {
    // The months ahead were made at start, so the steady flow of events never creates one.
    const now = new Date();
    const ahead = [0, 1].map((k) => monthName(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + k, 1)));
    expect(await partitionCounts(ahead)).toEqual([1, 1]);

    // An older month inside the window: made on first use, by the SECURITY DEFINER function.
    const { rows } = await runtime.query(`SELECT bronze.ensure_event_partition('2019-05-20') AS part`);
    expect(rows).toEqual([{ part: 'events_2019_05' }]);
    const made = await owner.query(
      `SELECT pg_get_userbyid(c.relowner) = pg_get_userbyid(p.relowner) AS owned_by_owner,
              (SELECT count(*)::int FROM pg_trigger g WHERE g.tgrelid = c.oid AND g.tgname = 'events_2019_05_no_truncate') AS truncate_trigger
         FROM pg_class c, pg_class p WHERE c.oid = 'bronze.events_2019_05'::regclass AND p.oid = 'bronze.events'::regclass`,
    );
    expect(made.rows).toEqual([{ owned_by_owner: true, truncate_trigger: 1 }]);

    // Outside the window, even called directly: refused, nothing made.
    for (const month of ['1900-01-01', '1990-06-01', '2150-11-01']) {
      expect(await failure(runtime, `SELECT bronze.ensure_event_partition('${month}')`)).toBe('22023');
    }
    expect(await partitionCounts(['events_1900_01', 'events_1990_06', 'events_2150_11'])).toEqual([0, 0, 0]);
  });

  it('rejects an event dated outside the occurredAt window alone, stores the good ones, and makes no partition for it', async () => {
    const tooOld = '1990-06-15T12:00:00Z';
    const tooFar = new Date(Date.now() + 400 * DAY).toISOString(); // beyond the months made ahead
    const results = await ingest([
      anEvent(ns).saying('good 1').build(),
      anEvent(ns).at(tooOld).saying('too old').build(),
      anEvent(ns).at('2024-02-29T12:00:00Z').saying('good 2').build(),
      anEvent(ns).at(tooFar).saying('too far ahead').build(),
      anEvent(ns)
        .at(new Date(Date.now() - 365 * DAY).toISOString())
        .saying('good 3')
        .build(),
    ]);
    expect(results.map((r) => (r.status === 'REJECTED' ? r.code : r.status))).toEqual([
      'CREATED',
      'INVALID_TIMESTAMP',
      'CREATED',
      'INVALID_TIMESTAMP',
      'CREATED',
    ]);
    expect(results[1]?.reason).toMatch(/more than 7305 days before now.*OCCURRED_AT_MAX_PAST_DAYS/);
    expect(results[3]?.reason).toMatch(/more than 1 day\(s\) after now.*OCCURRED_AT_MAX_FUTURE_DAYS/);
    expect(await partitionCounts(['events_1990_06', monthName(Date.parse(tooFar))])).toEqual([0, 0]);
    const stored = await owner.query(
      `SELECT content FROM bronze.events WHERE namespace = $1 AND content IN ('good 1', 'good 2', 'good 3', 'too old', 'too far ahead') ORDER BY content`,
      [ns],
    );
    expect(stored.rows.map((x) => x.content)).toEqual(['good 1', 'good 2', 'good 3']);
  });
});

describe('the occurredAt window and the runtime role are checked at start', () => {
  it('follows OCCURRED_AT_MAX_PAST_DAYS for both the API and the partition function', async () => {
    const t = await startTestApp({ OCCURRED_AT_MAX_PAST_DAYS: '40', OCCURRED_AT_MAX_FUTURE_DAYS: '0' });
    const runtime = new Client({ connectionString: t.runtimeDatabaseUrl });
    await runtime.connect();
    try {
      const ns = uniqueNamespace('window');
      const token = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST'] }])).token;
      const at = (days: number) => new Date(Date.now() - days * DAY).toISOString();
      const results = (
        await gqlOk<{ ingestEvents: Result[] }>(t.url, token, INGEST_MANY, {
          input: [anEvent(ns).at(at(10)).build(), anEvent(ns).at(at(100)).build(), anEvent(ns).at(at(-1)).build()],
        })
      ).ingestEvents;
      expect(results.map((r) => (r.status === 'REJECTED' ? r.code : r.status))).toEqual(['CREATED', 'INVALID_TIMESTAMP', 'INVALID_TIMESTAMP']);
      expect(results[1]?.reason).toMatch(/more than 40 days before now/);
      expect(await failure(runtime, `SELECT bronze.ensure_event_partition('${at(100).slice(0, 10)}')`)).toBe('22023');
    } finally {
      await runtime.end();
      await t.stop();
    }
  });

  it('refuses to start when the runtime role is the owner (or a superuser)', async () => {
    const db = await createTestDatabase();
    try {
      const stores = testStores();
      const config = loadConfig({
        DATABASE_URL: db.url,
        DATABASE_RUNTIME_URL: db.url,
        NEO4J_URI: stores.neo4j.uri,
        NEO4J_USER: stores.neo4j.user,
        NEO4J_PASSWORD: stores.neo4j.password,
        ADMIN_TOKEN: 'x'.repeat(32),
        PORT: '0',
        LOG_LEVEL: 'silent',
      });
      await expect(
        startApp(config, { postgresUrl: db.url, postgresRuntimeUrl: db.url, neo4j: stores.neo4j }, { api: true, worker: false }, createLogger('silent')),
      ).rejects.toThrow(/DATABASE_RUNTIME_URL's role "[^"]+" is a superuser, is \(or is a member of\) "[^"]+", the owner of bronze.events/);
    } finally {
      await db.drop();
    }
  });
});
