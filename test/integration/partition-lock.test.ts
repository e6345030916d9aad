import { Client } from 'pg';
import { connectPostgres } from '../../src/platform/postgres/data-source';
import { PartitionsAttach1764400001480 } from '../../migrations/1764400001480-partitions-attach';
import { ensureEventPartition } from '../../src/platform/postgres/partitions';
import { Sql } from '../../src/platform/postgres/sql';
import { createTestDatabase } from '../support/stores';
import { eventually } from '../support/test-app';

/**
 * A new monthly partition of bronze.events (an import of old turns) while a long transaction has
 * read events (a derivation batch): neither the ingest that brings the month nor the readers of
 * bronze.events may wait for that transaction (a search waited 1.9 s in bench/search-under-load
 * behind the partition's ACCESS EXCLUSIVE lock, an ingest call 10.8 s).
 */
describe('Creating a Bronze partition while bronze.events is being read', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let conn: Awaited<ReturnType<typeof connectPostgres>>;
  let sql: Sql;
  const clients: Client[] = [];
  const client = async (): Promise<Client> => {
    const c = new Client({ connectionString: db.url });
    await c.connect();
    clients.push(c);
    return c;
  };
  const partitionExists = async (month: string): Promise<boolean> =>
    (await conn.ds.query(`SELECT to_regclass($1) IS NOT NULL AS e`, [`bronze.events_${month.slice(0, 7).replace('-', '_')}`]))[0].e as boolean;

  beforeAll(async () => {
    db = await createTestDatabase();
    conn = await connectPostgres({ url: db.url });
    sql = Sql.of(conn.ds);
  });
  afterAll(async () => {
    for (const c of clients) await c.end();
    await conn?.ds.destroy();
    await db?.drop();
  });

  /** A transaction that has read bronze.events and stays open (its ACCESS SHARE lock held) until released. */
  const longReader = async (): Promise<{ release: () => Promise<void> }> => {
    const c = await client();
    await c.query('BEGIN');
    await c.query('SELECT count(*) FROM bronze.events');
    return { release: async () => void (await c.query('COMMIT')) };
  };

  /** A transaction holding the lock ANALYZE or VACUUM of bronze.events takes, until released. */
  const maintenance = async (): Promise<{ release: () => Promise<void> }> => {
    const c = await client();
    await c.query('BEGIN');
    await c.query('LOCK TABLE bronze.events IN SHARE UPDATE EXCLUSIVE MODE');
    return { release: async () => void (await c.query('COMMIT')) };
  };

  it('a month is made at once while a long transaction has read events, and readers never queue behind it', async () => {
    const month = '2011-03-01';
    expect(await partitionExists(month)).toBe(false);
    const blocker = await longReader();
    let released = false;
    // The creation and a reader that comes after it both finish while the long transaction is
    // open (made in place, the month waited for that transaction: 10.8 s for an ingest call
    // while the previous batch was derived).
    const creation = ensureEventPartition(sql, month).then(() => released);
    await new Promise((r) => setTimeout(r, 50));
    const reader = await client();
    const read = reader.query('SELECT count(*) FROM bronze.events').then(() => released);
    const timeout = new Promise<boolean>((r) => setTimeout(() => r(true), 10_000));
    const [createdAfterRelease, answeredAfterRelease] = await Promise.all([Promise.race([creation, timeout]), Promise.race([read, timeout])]);
    released = true;
    await blocker.release();
    expect(createdAfterRelease).toBe(false);
    expect(answeredAfterRelease).toBe(false);
    expect(await partitionExists(month)).toBe(true);
    // The month is a real partition: rows of the month land in it and Bronze's rules hold on it.
    const { rows } = await reader.query(`SELECT inhparent::regclass::text AS parent FROM pg_inherits WHERE inhrelid = 'bronze.events_2011_03'::regclass`);
    expect(rows).toEqual([{ parent: 'bronze.events' }]);
    const triggers = await reader.query(`SELECT tgname FROM pg_trigger WHERE tgrelid = 'bronze.events_2011_03'::regclass AND NOT tgisinternal ORDER BY tgname`);
    expect(triggers.rows.map((r: { tgname: string }) => r.tgname)).toEqual(['events_2011_03_no_truncate', 'events_no_update_delete']);
    // Every index of bronze.events (its primary key among them) has its copy on the month.
    const indexes = await reader.query(
      `SELECT (SELECT count(*) FROM pg_index WHERE indrelid = 'bronze.events_2011_03'::regclass)::int AS month,
              (SELECT count(*) FROM pg_index WHERE indrelid = 'bronze.events'::regclass)::int AS parent`,
    );
    expect(indexes.rows[0].month).toBe(indexes.rows[0].parent);
    expect(indexes.rows[0].parent).toBeGreaterThan(1);
  });

  it('after its attempts, waits as long as it takes rather than fail the ingest', async () => {
    const month = '2011-04-01';
    // What conflicts with attaching a month: maintenance of bronze.events (ANALYZE, VACUUM) or another attach.
    const blocker = await maintenance();
    let waited = 0;
    const creation = ensureEventPartition(sql, month, { attempts: 2, sleep: async () => void (waited += 1) });
    let done = false;
    void creation.then(() => (done = true));
    // Two attempts gave up (and slept); the third waits for the lock, however long.
    await eventually(() => Promise.resolve(waited === 2), 'two attempts to give up', 10_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(waited).toBe(2);
    expect(done).toBe(false);
    await blocker.release();
    await creation;
    expect(await partitionExists(month)).toBe(true);
  });

  it("the migration's down makes months in place again, and up attaches them again; both make working months", async () => {
    const makes = async (): Promise<string> => {
      const [row] = await conn.ds.query(`SELECT pg_get_functiondef('bronze.ensure_event_partition(date)'::regprocedure) AS def`);
      return /ATTACH PARTITION/.test(row.def) ? 'attach' : /PARTITION OF bronze\.events/.test(row.def) ? 'in place' : 'neither';
    };
    const runner = conn.ds.createQueryRunner();
    try {
      expect(await makes()).toBe('attach');
      await new PartitionsAttach1764400001480().down(runner);
      expect(await makes()).toBe('in place');
      await ensureEventPartition(sql, '2011-05-01');
      await new PartitionsAttach1764400001480().up(runner);
      expect(await makes()).toBe('attach');
      await ensureEventPartition(sql, '2011-06-01');
    } finally {
      await runner.release();
    }
    expect(await partitionExists('2011-05-01')).toBe(true);
    expect(await partitionExists('2011-06-01')).toBe(true);
  });
});
