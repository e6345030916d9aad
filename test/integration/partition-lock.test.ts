import { Client } from 'pg';
import { connectPostgres } from '../../src/platform/postgres/data-source';
import { ensureEventPartition } from '../../src/platform/postgres/partitions';
import { Sql } from '../../src/platform/postgres/sql';
import { createTestDatabase } from '../support/stores';
import { eventually } from '../support/test-app';

/**
 * A new monthly partition of bronze.events (an import of old turns) while a long transaction has
 * read events (a derivation batch): the readers of bronze.events must not queue behind the
 * partition's ACCESS EXCLUSIVE lock for as long as that transaction stays open (a search waited
 * 1.9 s in bench/search-under-load).
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

  it('a reader that comes after the creation began is answered while the long transaction is still open; the partition follows', async () => {
    const month = '2011-03-01';
    expect(await partitionExists(month)).toBe(false);
    const blocker = await longReader();
    let released = false;
    const creation = ensureEventPartition(sql, month);
    // Give the creation time to ask for its lock (it holds nothing between attempts).
    await new Promise((r) => setTimeout(r, 200));
    const reader = await client();
    const read = reader.query('SELECT count(*) FROM bronze.events').then(() => released);
    // The long transaction ends only after the reader was answered, or after 10 s if it never is.
    const answeredFirst = await Promise.race([read, new Promise<boolean>((r) => setTimeout(() => r(true), 10_000))]);
    released = true;
    await blocker.release();
    expect(answeredFirst).toBe(false); // answered while the long transaction was open
    await creation;
    expect(await partitionExists(month)).toBe(true);
  });

  it('after its attempts, waits as long as it takes rather than fail the ingest', async () => {
    const month = '2011-04-01';
    const blocker = await longReader();
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
});
