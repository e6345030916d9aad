import neo4j, { Driver } from 'neo4j-driver';
import { Client } from 'pg';
import { isVisible, TemporalRow, Visibility, visibleCypher, visibleSql } from '../../src/silver/visibility';
import { createTestDatabase, testStores, uniqueNamespace } from '../support/stores';

const t = (s: string) => new Date(`${s}T00:00:00Z`);

/** Rows covering every state: current, closed (superseded), retired, closed and retired, future, and each boundary. */
const ROWS: Array<TemporalRow & { id: string }> = [
  { id: 'current', validFrom: t('2026-01-01'), validTo: null, retiredAt: null },
  { id: 'closed', validFrom: t('2026-01-01'), validTo: t('2026-03-01'), retiredAt: null },
  { id: 'retired', validFrom: t('2026-02-01'), validTo: null, retiredAt: t('2026-05-01') },
  { id: 'closed-retired', validFrom: t('2026-01-01'), validTo: t('2026-02-01'), retiredAt: t('2026-04-01') },
  { id: 'late-start', validFrom: t('2026-06-01'), validTo: null, retiredAt: null },
  { id: 'instant', validFrom: t('2026-03-01'), validTo: t('2026-03-01'), retiredAt: null },
];

/** Scopes: now, and asOf at a start, just before an end, at an end (half-open), before everything, after everything. */
const AS_OF = [null, t('2026-01-01'), new Date('2026-02-28T23:59:59Z'), t('2026-03-01'), t('2025-01-01'), t('2027-01-01')];
const SCOPES: Visibility[] = AS_OF.flatMap((asOf) => [false, true].map((includeRetired) => ({ asOf, includeRetired })));

const label = (v: Visibility) => `${v.asOf?.toISOString() ?? 'now'}${v.includeRetired ? ' +retired' : ''}`;

describe('visibility: one rule, the same answers in SQL, Cypher and TypeScript', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let pg: Client;
  let driver: Driver;
  const ns = uniqueNamespace('visibility');

  beforeAll(async () => {
    db = await createTestDatabase();
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    await pg.query(`CREATE TABLE vis_rows (id text PRIMARY KEY, valid_from timestamptz NOT NULL, valid_to timestamptz, retired_at timestamptz)`);
    for (const r of ROWS) await pg.query(`INSERT INTO vis_rows VALUES ($1, $2, $3, $4)`, [r.id, r.validFrom, r.validTo, r.retiredAt]);
    const s = testStores().neo4j;
    driver = neo4j.driver(s.uri, neo4j.auth.basic(s.user, s.password));
    await driver.executeQuery(
      `UNWIND $rows AS r
       CREATE (a:VisibilityFixture {namespace: $ns, id: r.id, validFrom: datetime(r.validFrom), validTo: datetime(r.validTo), retiredAt: datetime(r.retiredAt)})
       CREATE (a)-[:VISIBILITY_FIXTURE {namespace: $ns, id: r.id, validFrom: datetime(r.validFrom), validTo: datetime(r.validTo), retiredAt: datetime(r.retiredAt)}]->(a)`,
      {
        ns,
        rows: ROWS.map((r) => ({
          id: r.id,
          validFrom: r.validFrom.toISOString(),
          validTo: r.validTo?.toISOString() ?? null,
          retiredAt: r.retiredAt?.toISOString() ?? null,
        })),
      },
    );
  });
  afterAll(async () => {
    await driver?.executeQuery(`MATCH (a:VisibilityFixture {namespace: $ns}) DETACH DELETE a`, { ns });
    await driver?.close();
    await pg?.end();
    await db?.drop();
  });

  const inMemory = (v: Visibility) =>
    ROWS.filter((r) => isVisible(r, v))
      .map((r) => r.id)
      .sort();
  const inPostgres = async (v: Visibility) => {
    const params: unknown[] = [];
    const where = visibleSql('v', v, params);
    return (await pg.query(`SELECT id FROM vis_rows v WHERE ${where} ORDER BY id COLLATE "C"`, params)).rows.map((r) => r.id as string);
  };
  const inNeo4j = async (v: Visibility, on: 'node' | 'edge', includeRetired: 'param' | 'never') => {
    const rule = visibleCypher('x', { asOf: 'asOf', includeRetired: includeRetired === 'param' ? 'includeRetired' : false });
    const match = on === 'node' ? `MATCH (x:VisibilityFixture)` : `MATCH ()-[x:VISIBILITY_FIXTURE]->()`;
    const res = await driver.executeQuery(`${match} WHERE x.namespace = $ns AND ${rule} RETURN x.id AS id`, {
      ns,
      asOf: v.asOf?.toISOString() ?? null,
      includeRetired: v.includeRetired,
    });
    return res.records.map((r) => r.get('id') as string).sort();
  };

  it('pins the rule itself on the fixtures (so the three cannot agree on a wrong answer)', () => {
    expect(inMemory({ asOf: null, includeRetired: false })).toEqual(['current', 'late-start']);
    expect(inMemory({ asOf: null, includeRetired: true })).toEqual(ROWS.map((r) => r.id).sort());
    expect(inMemory({ asOf: new Date('2026-02-28T23:59:59Z'), includeRetired: false })).toEqual(['closed', 'current']);
    expect(inMemory({ asOf: new Date('2026-02-28T23:59:59Z'), includeRetired: true })).toEqual(['closed', 'current', 'retired']);
    // Half-open: at its end a closed row is gone; a row closed at its own start is never valid.
    expect(inMemory({ asOf: t('2026-03-01'), includeRetired: false })).toEqual(['current']);
    expect(inMemory({ asOf: t('2026-01-01'), includeRetired: true })).toEqual(['closed', 'closed-retired', 'current']);
    expect(inMemory({ asOf: t('2025-01-01'), includeRetired: true })).toEqual([]);
  });

  it.each(SCOPES.map((v) => [label(v), v] as const))('%s: Postgres and Neo4j (nodes and edges) answer as the TypeScript predicate', async (_name, v) => {
    const expected = inMemory(v);
    expect(await inPostgres(v)).toEqual(expected);
    expect(await inNeo4j(v, 'node', 'param')).toEqual(expected);
    expect(await inNeo4j(v, 'edge', 'param')).toEqual(expected);
    // Where retired rows never show (relationships in graph exploration), the fixed form answers as includeRetired = false.
    expect(await inNeo4j(v, 'edge', 'never')).toEqual(inMemory({ ...v, includeRetired: false }));
  });

  it('keeps the current-rows SQL the plain predicate the partial indexes match, and refuses a non-identifier alias', () => {
    expect(visibleSql('f', { asOf: null, includeRetired: false }, [])).toBe('f.valid_to IS NULL AND f.retired_at IS NULL');
    expect(visibleSql('f', { asOf: null, includeRetired: true }, [])).toBe('true');
    const params: unknown[] = ['ns'];
    expect(visibleSql('f', { asOf: t('2026-01-01'), includeRetired: false }, params)).toBe(
      'f.valid_from <= $2::timestamptz AND (f.valid_to IS NULL OR $2::timestamptz < f.valid_to) AND f.retired_at IS NULL',
    );
    expect(params).toEqual(['ns', t('2026-01-01')]);
    // GraphQL resolvers pass an absent asOf as undefined: the same as null.
    expect(visibleSql('f', { asOf: undefined as unknown as null, includeRetired: false }, [])).toBe('f.valid_to IS NULL AND f.retired_at IS NULL');
    expect(() => visibleSql('f; DROP TABLE x', { asOf: null, includeRetired: false }, [])).toThrow(/not an identifier/);
    expect(() => visibleCypher('x) DETACH DELETE (x')).toThrow(/not an identifier/);
  });
});
