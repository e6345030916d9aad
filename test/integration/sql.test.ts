import { connectPostgres } from '../../src/platform/postgres/data-source';
import { col, Sql } from '../../src/platform/postgres/sql';
import { createTestDatabase } from '../support/stores';

/** The typed SQL executor against real PostgreSQL: one answer shape for every command, transactions, round trips. */
describe('Sql executor', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let conn: Awaited<ReturnType<typeof connectPostgres>>;
  let sql: Sql;
  const toItem = (r: Record<string, unknown>) => ({ id: col.number(r, 'id'), name: col.string(r, 'name'), note: col.stringOrNull(r, 'note') });

  beforeAll(async () => {
    db = await createTestDatabase();
    conn = await connectPostgres({ url: db.url });
    sql = Sql.of(conn.ds);
    await sql.execute(`CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL, note text)`);
  });
  afterAll(async () => {
    await conn.ds.destroy();
    await db.drop();
  });
  beforeEach(() => sql.execute(`TRUNCATE items`));

  it('opens every session without JIT: compiling a short statement cost more than running it (docs/search.md)', async () => {
    // Every pooled session, not only the first: the setting is a startup parameter of each.
    const settings = await Promise.all(Array.from({ length: 4 }, () => conn.ds.query(`SELECT current_setting('jit') AS jit, pg_sleep(0.05)`)));
    expect(settings.map((rows: Array<{ jit: string }>) => rows[0]?.jit)).toEqual(['off', 'off', 'off', 'off']);
  });

  it('returns mapped rows for SELECT, INSERT … RETURNING, UPDATE … RETURNING and DELETE … RETURNING alike', async () => {
    const inserted = await sql.returning(`INSERT INTO items (id, name) VALUES (1, 'a'), (2, 'b') RETURNING id, name, note`, [], toItem);
    expect(inserted).toEqual([
      { id: 1, name: 'a', note: null },
      { id: 2, name: 'b', note: null },
    ]);
    // TypeORM's plain query() answers UPDATE with [rows, count]; the executor answers with rows.
    const updated = await sql.returning(`UPDATE items SET note = 'x' WHERE id = $1 RETURNING id, name, note`, [2], toItem);
    expect(updated).toEqual([{ id: 2, name: 'b', note: 'x' }]);
    expect(await sql.rows(`SELECT id, name, note FROM items ORDER BY id`, [], toItem)).toHaveLength(2);
    const deleted = await sql.returning(`DELETE FROM items WHERE id = 1 RETURNING id, name, note`, [], toItem);
    expect(deleted.map((i) => i.id)).toEqual([1]);
  });

  it('counts touched rows, and tells one from none from many', async () => {
    expect(await sql.execute(`INSERT INTO items (id, name) VALUES (1, 'a'), (2, 'b'), (3, 'c')`)).toBe(3);
    expect(await sql.execute(`UPDATE items SET note = 'n' WHERE id > $1`, [1])).toBe(2);
    expect(await sql.execute(`DELETE FROM items WHERE id = 99`)).toBe(0);
    expect(await sql.one(`SELECT id, name, note FROM items WHERE id = 3`, [], toItem)).toEqual({ id: 3, name: 'c', note: 'n' });
    expect(await sql.maybeOne(`SELECT id, name, note FROM items WHERE id = 99`, [], toItem)).toBeNull();
    await expect(sql.one(`SELECT id, name, note FROM items`, [], toItem)).rejects.toThrow(/expected 1 row, got 3/);
  });

  it('rolls a transaction back when its body throws, and nested transactions join the outer one', async () => {
    await expect(
      sql.transaction(async (tx) => {
        await tx.execute(`INSERT INTO items (id, name) VALUES (1, 'a')`);
        await tx.transaction((inner) => inner.execute(`INSERT INTO items (id, name) VALUES (2, 'b')`));
        expect(await tx.rows(`SELECT id, name, note FROM items`, [], toItem)).toHaveLength(2);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await sql.rows(`SELECT id, name, note FROM items`, [], toItem)).toEqual([]);
    const n = await sql.transaction(async (tx) => {
      expect(tx.inTransaction).toBe(true);
      return tx.execute(`INSERT INTO items (id, name) VALUES (1, 'a')`);
    });
    expect(n).toBe(1);
    expect(await sql.rows(`SELECT id, name, note FROM items`, [], toItem)).toHaveLength(1);
  });

  it('makes one round trip per statement, counted like every other query', async () => {
    const before = conn.counter.count;
    await sql.execute(`INSERT INTO items (id, name) VALUES (1, 'a')`);
    await sql.rows(`SELECT id, name, note FROM items`, [], toItem);
    expect(conn.counter.count - before).toBe(2);
  });

  it('fails loudly when a mapper reads a column of the wrong type', async () => {
    await sql.execute(`INSERT INTO items (id, name) VALUES (1, 'a')`);
    await expect(sql.rows(`SELECT id, name AS note, 5 AS name FROM items`, [], toItem)).rejects.toThrow(/column name: expected text, got number/);
  });
});
