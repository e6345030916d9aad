import { Driver } from 'neo4j-driver';
import { applyNeo4jSchema, createNeo4jDriver } from '../../src/platform/neo4j/neo4j-client';
import { testStores, uniqueNamespace } from '../support/stores';

const OLD_NODES = 2_000;

/**
 * Every process (API, worker) applies the Neo4j schema and its backfills at start, and after an
 * upgrade they start together: each must come up, and the backfill must still rewrite everything.
 */
describe('Neo4j schema at start', () => {
  const ns = uniqueNamespace('schema');
  const drivers: Driver[] = [];
  const driver = () => {
    const d = createNeo4jDriver(testStores().neo4j);
    drivers.push(d);
    return d;
  };

  afterAll(async () => {
    await drivers[0]?.executeQuery(`MATCH (n) WHERE (n:Event OR n:Fact) AND n.namespace = $ns DETACH DELETE n`, { ns });
    await Promise.all(drivers.map((d) => d.close()));
  });

  it('comes up in three processes starting at once, and rewrites vectors stored by an earlier version', async () => {
    const d = driver();
    await applyNeo4jSchema(d);
    // As an earlier version stored them: lists of 64-bit floats, no embeddingDims.
    const rows = Array.from({ length: OLD_NODES }, (_, i) => ({ id: `${ns}-${i}`, v: Array.from({ length: 384 }, (_, j) => Math.sin(i + j)) }));
    await d.executeQuery(
      `UNWIND $rows AS r
       CREATE (:Event {id: 'e-' + r.id, namespace: $ns, embedding: r.v, embeddingModel: 'm'})
       CREATE (:Fact {id: 'f-' + r.id, namespace: $ns, embedding: r.v, embeddingModel: 'm'})`,
      { rows, ns },
    );
    const results = await Promise.allSettled([applyNeo4jSchema(driver()), applyNeo4jSchema(driver()), applyNeo4jSchema(driver())]);
    expect(results.map((r) => (r.status === 'rejected' ? String(r.reason) : r.status))).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    const left = await d.executeQuery(
      `MATCH (n) WHERE (n:Event OR n:Fact) AND n.namespace = $ns
       RETURN count(n) AS all, sum(CASE WHEN n.embeddingDims = 384 THEN 1 ELSE 0 END) AS rewritten`,
      { ns },
    );
    expect(left.records[0]?.toObject()).toEqual({ all: 2 * OLD_NODES, rewritten: 2 * OLD_NODES });
  }, 300_000);
});
