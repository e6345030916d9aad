import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { graphRebuildService } from '../../src/app/app';
import { GraphRebuildService } from '../../src/graph/graph-rebuild.service';
import { bucketOf } from '../../src/graph/key-buckets';
import { countNeo4jRoundTrips } from '../support/neo4j-round-trips';
import { seedSilver } from '../support/silver-seed';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

const CONSISTENCY = `query($ns: String!) { graphConsistency(namespace: $ns) { ok missingInNeo4j extraInNeo4j counts { kind postgres neo4j } } }`;

interface Report {
  ok: boolean;
  missingInNeo4j: string[];
  extraInNeo4j: string[];
  counts: Array<{ kind: string; postgres: number; neo4j: number }>;
}

/**
 * graphConsistency compares per-bucket digests computed in each store and reads keys only for the
 * buckets that differ: differences planted in one bucket among hundreds are reported exactly,
 * as the full read of every key reports them.
 */
describe('graphConsistency by bucket digests', () => {
  let t: TestApp;
  let graph: GraphRebuildService;
  let db: Client;
  const ns = uniqueNamespace('consist');
  const other = uniqueNamespace('consist-other');
  const MENTIONS = 600;
  const LONELY = 60;
  let planted: { missing: string[]; extra: string[] } = { missing: [], extra: [] };

  const report = async (namespace: string, token = t.adminToken): Promise<Report> =>
    (await gqlOk<{ graphConsistency: Report }>(t.url, token, CONSISTENCY, { ns: namespace })).graphConsistency;
  const drained = (namespace: string) =>
    eventually(
      async () => {
        const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ops.outbox WHERE processed_at IS NULL AND namespace = $1`, [namespace]);
        return rows[0]?.n === 0;
      },
      `the outbox of ${namespace} to drain`,
      120_000,
    );

  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', PROJECTOR_POLL_MS: '50' });
    graph = graphRebuildService(t.app.ds, t.app.neo4j);
    db = new Client({ connectionString: t.databaseUrl });
    await db.connect();
    // 20 mentioned entities with 600 facts (each resting on its own event), and 60 entities no fact
    // is about: nodes without edges, so deleting one in Neo4j removes exactly one key.
    const entities = [
      ...Array.from({ length: 20 }, (_, i) => ({ key: `e${i}`, name: `Entity ${i}`, type: 'person' })),
      ...Array.from({ length: LONELY }, (_, i) => ({ key: `lonely${i}`, name: `Lonely ${i}`, type: 'place' })),
    ];
    const mentions = Array.from({ length: MENTIONS }, (_, i) => ({ entity: `e${i % 20}`, conversation: `c${i}` }));
    await seedSilver(t, ns, { entities, mentions });
    await seedSilver(t, other, {
      entities: entities.slice(0, 5),
      mentions: mentions.slice(0, 10).map((m) => ({ ...m, entity: `e${Number(m.entity.slice(1)) % 5}` })),
    });
    await drained(ns);
    await drained(other);
  }, 300_000);

  afterAll(async () => {
    await db?.end();
    await t?.stop();
  });

  it('is ok on a consistent namespace, with the counts of every kind', async () => {
    const r = await report(ns);
    expect(r).toMatchObject({ ok: true, missingInNeo4j: [], extraInNeo4j: [] });
    const counts = Object.fromEntries(r.counts.map((c) => [c.kind, c]));
    expect(counts.Fact).toEqual({ kind: 'Fact', postgres: MENTIONS, neo4j: MENTIONS });
    expect(counts.Event).toEqual({ kind: 'Event', postgres: MENTIONS, neo4j: MENTIONS });
    expect(counts.Entity).toEqual({ kind: 'Entity', postgres: 20 + LONELY, neo4j: 20 + LONELY });
    expect(counts.DERIVED_FROM).toEqual({ kind: 'DERIVED_FROM', postgres: MENTIONS, neo4j: MENTIONS });
    expect(counts.ABOUT).toEqual({ kind: 'ABOUT', postgres: MENTIONS, neo4j: MENTIONS });
    expect(await graph.checkConsistencyByFullRead(ns)).toEqual(await graph.checkConsistency(ns));
  });

  it('reports exactly a missing node, an extra node and a missing edge planted in one bucket among hundreds, reading two buckets', async () => {
    // A bucket holding both an edge-less entity and a DERIVED_FROM edge.
    const { rows: lonely } = await db.query<{ id: string }>(`SELECT id::text FROM silver.entities WHERE namespace = $1 AND name LIKE 'Lonely %'`, [ns]);
    const { rows: sources } = await db.query<{ fact: string; event: string; k: string }>(
      `SELECT s.fact_id::text AS fact, s.event_id::text AS event, s.fact_id || '->' || s.event_id || '@' || s.span_start || ':' || s.span_end AS k
         FROM silver.fact_sources s JOIN silver.facts f ON f.id = s.fact_id WHERE f.namespace = $1`,
      [ns],
    );
    const edgeBuckets = new Map(sources.map((s) => [bucketOf(s.k), s]));
    expect(edgeBuckets.size).toBeGreaterThan(200); // the 600 edges spread over most of the 256 buckets
    const gone = lonely.find((e) => edgeBuckets.has(bucketOf(e.id)));
    expect(gone).toBeDefined();
    const bucket = bucketOf(gone?.id as string);
    const edge = edgeBuckets.get(bucket) as { fact: string; event: string; k: string };
    let stray = randomUUID();
    while (bucketOf(stray) !== bucket) stray = randomUUID();

    await t.app.stages.stop(); // nothing re-projects what is planted, and only the check's round trips are counted
    await t.app.neo4j.executeQuery(`MATCH (n:Entity {id: $id}) DETACH DELETE n`, { id: gone?.id });
    await t.app.neo4j.executeQuery(`CREATE (:Entity {id: $id, namespace: $ns})`, { id: stray, ns });
    await t.app.neo4j.executeQuery(`MATCH (:Fact {id: $fact})-[d:DERIVED_FROM]->(:Event {id: $event}) DELETE d`, edge);

    const { counter, restore } = countNeo4jRoundTrips(t.app.neo4j);
    let r: Report;
    try {
      t.app.queryCounter.reset();
      r = await report(ns);
      // One digest statement for every kind, then one key read per kind with a differing bucket (Entity, DERIVED_FROM).
      expect(counter.statements).toBe(3);
    } finally {
      restore();
    }
    expect(r.ok).toBe(false);
    expect(r.missingInNeo4j).toEqual([`Entity:${gone?.id}`, `DERIVED_FROM:${edge.k}`]);
    expect(r.extraInNeo4j).toEqual([`Entity:${stray}`]);
    const counts = Object.fromEntries(r.counts.map((c) => [c.kind, c]));
    expect(counts.Entity).toEqual({ kind: 'Entity', postgres: 20 + LONELY, neo4j: 20 + LONELY }); // one missing, one extra: same count, another digest
    expect(counts.DERIVED_FROM).toEqual({ kind: 'DERIVED_FROM', postgres: MENTIONS, neo4j: MENTIONS - 1 });

    // The full read of every key says the same.
    const full = await graph.checkConsistencyByFullRead(ns);
    const bucketed = await graph.checkConsistency(ns);
    expect(bucketed).toEqual(full);
    expect(bucketed.missingInNeo4j).toEqual([`Entity:${gone?.id}`, `DERIVED_FROM:${edge.k}`]);
    planted = { missing: bucketed.missingInNeo4j, extra: bucketed.extraInNeo4j };

    // The other namespace is untouched and still consistent.
    expect(await report(other)).toMatchObject({ ok: true, missingInNeo4j: [], extraInNeo4j: [] });
  });

  it('caps the lists at maxIds and still counts every kind', async () => {
    expect(planted.missing).toHaveLength(2);
    const capped = await graph.checkConsistency(ns, { maxIds: 1 });
    expect(capped.missingInNeo4j).toEqual([planted.missing[0]]);
    expect(capped.extraInNeo4j).toEqual(planted.extra);
    expect(capped.neo4j.DERIVED_FROM).toBe(MENTIONS - 1);
    expect(capped.ok).toBe(false);
  });

  it('needs "read" on the namespace: a token of another namespace is refused', async () => {
    const { token } = await createToken(t, [{ namespacePattern: other, capabilities: ['READ'] }]);
    expect(await report(other, token)).toMatchObject({ ok: true });
    const refused = await gql(t.url, token, CONSISTENCY, { ns });
    expect(refused.data).toBeNull();
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});
