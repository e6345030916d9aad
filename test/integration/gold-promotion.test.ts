import { Client } from 'pg';
import { buildAppSchema } from '../../src/api/schema';
import { Sql } from '../../src/platform/postgres/sql';
import { GoldProjectionJob } from '../../src/gold/promotion/gold-projection.job';
import { PromotionRepository } from '../../src/gold/promotion/promotion.repository';
import { cypher, dumpNamespace } from '../support/graph-dump';
import { reDeriveSilver, seedSilver } from '../support/silver-seed';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';
import { outboxDrained, runPromotion } from '../support/gold';

const GOLD = `query($ns: String!) { goldEntities(namespace: $ns, first: 100) { edges { node {
  id type name aliases version confidence sourceCount mergedFrom { id name type } } } } }`;

interface GoldNode {
  id: string;
  type: string;
  name: string;
  aliases: string[];
  version: number;
  confidence: number;
  sourceCount: number;
  mergedFrom: Array<{ id: string; name: string; type: string }>;
}

describe('Gold promotion: entity resolution, idempotence, rebuilds, split', () => {
  let t: TestApp;
  let db: Client;

  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50', GOLD_PROMOTE_EVERY_SECONDS: '0' });
    db = new Client({ connectionString: t.databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await db.end();
    await t.stop();
  });

  const promoteAndWait = (ns: string, token = t.adminToken) => runPromotion(t, ns, token);
  const gold = async (ns: string): Promise<GoldNode[]> =>
    (await gqlOk<{ goldEntities: { edges: Array<{ node: GoldNode }> } }>(t.url, t.adminToken, GOLD, { ns })).goldEntities.edges.map((e) => e.node);
  const settled = (namespace: string) => outboxDrained(db, namespace);
  const tableCounts = async (ns: string) => {
    const { rows } = await db.query(
      `SELECT (SELECT count(*) FROM gold.entities WHERE namespace = $1)::int AS entities,
              (SELECT count(*) FROM gold.entity_members WHERE namespace = $1)::int AS members,
              (SELECT count(*) FROM gold.relationships WHERE namespace = $1)::int AS relationships,
              (SELECT count(*) FROM gold.promotion_log WHERE namespace = $1)::int AS log,
              (SELECT coalesce(sum(version), 0) FROM gold.entities WHERE namespace = $1)::int AS versions`,
      [ns],
    );
    return rows[0];
  };

  const threeBobs = {
    entities: [
      { key: 'bob', name: 'Bob', type: 'person' },
      { key: 'bobSmith', name: 'Bob Smith', type: 'person' },
      // The fallback type: an extractor that did not know what "bob" is.
      { key: 'lower', name: 'bob', type: 'concept' },
      { key: 'acme', name: 'Acme Corp', type: 'organization' },
    ],
    mentions: [
      { entity: 'bob', conversation: 'c1' },
      { entity: 'bob', conversation: 'c2' },
      { entity: 'bobSmith', conversation: 'c1' },
      { entity: 'lower', conversation: 'c2' },
      { entity: 'acme', conversation: 'c1' },
      { entity: 'acme', conversation: 'c3' },
    ],
    relationships: [
      { type: 'works_on', source: 'bobSmith', target: 'acme', conversation: 'c1' },
      { type: 'works_on', source: 'bob', target: 'acme', conversation: 'c3' },
    ],
  };

  it('resolves "Bob", "Bob Smith" and "bob" to one Gold entity merged from all three, logging each step', async () => {
    const ns = uniqueNamespace('bobs');
    const seeded = await seedSilver(t, ns, threeBobs);
    const job = await promoteAndWait(ns);
    expect(job.status).toBe('succeeded');
    const entities = await gold(ns);
    expect(entities).toHaveLength(2);
    const bob = entities.find((e) => e.type === 'person') as GoldNode;
    expect(bob.mergedFrom.map((m) => m.id).sort()).toEqual([seeded.ids.bob, seeded.ids.bobSmith, seeded.ids.lower].sort());
    expect(bob.name).toBe('Bob');
    expect(bob.aliases).toEqual(['Bob Smith']);
    const { rows } = await db.query(`SELECT action, step, judge_model FROM gold.promotion_log WHERE gold_entity_id = $1 ORDER BY id`, [bob.id]);
    expect(rows.map((r) => `${r.action}:${r.step}`)).toEqual(['create:new', 'merge:cooccurrence', 'merge:judge']);
    expect(rows[2].judge_model).toBe('offline-entity-rules@1');
    // The two Silver works_on edges become one Gold relationship with two sources.
    const rel = await gqlOk<{ goldEntity: { relationships: Array<{ type: string; sourceCount: number; target: { name: string }; sources: unknown[] }> } }>(
      t.url,
      t.adminToken,
      `query($id: ID!) { goldEntity(id: $id) { relationships { type sourceCount target { name } sources { quote } } } }`,
      { id: bob.id },
    );
    expect(rel.goldEntity.relationships).toEqual([
      { type: 'works_on', sourceCount: 2, target: { name: 'Acme Corp' }, sources: [{ quote: 'ok' }, { quote: 'ok' }] },
    ]);
    // Neo4j: the node with its type label and MERGED_FROM edges to the three Silver entities.
    await settled(ns);
    const [node] = await cypher<{ labels: string[]; merged: number }>(
      t.app.neo4j,
      `MATCH (g:GoldEntity {id: $id}) OPTIONAL MATCH (g)-[:MERGED_FROM]->(e:Entity) RETURN labels(g) AS labels, count(e) AS merged`,
      { id: bob.id },
    );
    expect(node?.labels.sort()).toEqual(['GoldEntity', 'Person']);
    expect(Number(node?.merged)).toBe(3);
    const consistency = await gqlOk<{ graphConsistency: { ok: boolean; missingInNeo4j: string[]; extraInNeo4j: string[] } }>(
      t.url,
      t.adminToken,
      `query($ns: String!) { graphConsistency(namespace: $ns) { ok missingInNeo4j extraInNeo4j } }`,
      { ns },
    );
    expect(consistency.graphConsistency).toEqual({ ok: true, missingInNeo4j: [], extraInNeo4j: [] });
  });

  it('lists the namespaces with live Silver entities (what the worker schedules), the same as a DISTINCT over every row', async () => {
    const listed = await new PromotionRepository(Sql.of(t.app.ds)).namespacesWithEntities();
    const all = (await db.query(`SELECT DISTINCT namespace FROM silver.entities WHERE retired_at IS NULL ORDER BY 1`)).rows.map((r) => r.namespace);
    expect(all.length).toBeGreaterThan(0);
    expect(listed).toEqual(all);
  });

  it('candidate pairs: the cap keeps each entity its most similar names, and chunking changes nothing', async () => {
    const ns = uniqueNamespace('pairs');
    const names = ['Robert', 'Roberta', 'Roberto', 'Roberts', 'Robertson', 'Robart', 'Rober', 'Robertino', 'Bertrand'];
    await seedSilver(t, ns, {
      entities: names.map((name, i) => ({ key: `e${i}`, name, type: 'person' })),
      mentions: names.map((_, i) => ({ entity: `e${i}`, conversation: `c${i}` })),
    });
    const repo = new PromotionRepository(Sql.of(t.app.ds));
    const sorted = (ps: Array<{ a: string; b: string; trigram: number }>) => [...ps].sort((x, y) => x.a.localeCompare(y.a) || x.b.localeCompare(y.b));
    const all = await repo.pairs(ns, { threshold: 0.3, perEntity: null });
    const progress: Array<[number, number]> = [];
    const chunked = await repo.pairs(ns, {
      threshold: 0.3,
      perEntity: null,
      chunkSize: 2,
      concurrency: 3,
      onChunk: async (done, total) => void progress.push([done, total]),
    });
    expect(sorted(chunked)).toEqual(sorted(all));
    expect(progress).toHaveLength(5);
    expect(progress.at(-1)).toEqual([names.length, names.length]);

    // Every entity is the `a` of its own candidates; similar names pair both ways.
    const byA = new Map<string, Array<{ b: string; trigram: number }>>();
    for (const p of all) byA.set(p.a, [...(byA.get(p.a) ?? []), p]);
    const crowded = [...byA.values()].filter((ps) => ps.length > 2);
    expect(crowded.length).toBeGreaterThan(3);

    const capped = await repo.pairs(ns, { threshold: 0.3, perEntity: 2, chunkSize: 4, concurrency: 2 });
    const cappedByA = new Map<string, Array<{ b: string; trigram: number }>>();
    for (const p of capped) cappedByA.set(p.a, [...(cappedByA.get(p.a) ?? []), p]);
    for (const [a, ps] of byA) {
      const best = [...ps].sort((x, y) => y.trigram - x.trigram || x.b.localeCompare(y.b)).slice(0, 2);
      const kept = [...(cappedByA.get(a) ?? [])].sort((x, y) => y.trigram - x.trigram || x.b.localeCompare(y.b));
      expect(kept.map((p) => p.b)).toEqual(best.map((p) => p.b));
    }
  });

  it('keeps two people with similar names and different contexts apart (the judge says why)', async () => {
    const ns = uniqueNamespace('smiths');
    await seedSilver(t, ns, {
      entities: [
        { key: 'jon', name: 'Jon Smith', type: 'person' },
        { key: 'john', name: 'John Smyth', type: 'person' },
      ],
      mentions: [
        { entity: 'jon', conversation: 'work-1' },
        { entity: 'jon', conversation: 'work-2' },
        { entity: 'john', conversation: 'family-1' },
        { entity: 'john', conversation: 'family-2' },
      ],
    });
    expect((await promoteAndWait(ns)).status).toBe('succeeded');
    const entities = await gold(ns);
    expect(entities.map((e) => e.name).sort()).toEqual(['John Smyth', 'Jon Smith']);
    expect(entities.every((e) => e.mergedFrom.length === 1)).toBe(true);
    const { rows } = await db.query(
      `SELECT reason, (scores->>'trigram')::float8 AS trigram FROM gold.promotion_log WHERE namespace = $1 AND action = 'keep_apart'`,
      [ns],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].trigram).toBeGreaterThanOrEqual(0.3);
    expect(rows[0].reason).toMatch(/names differ/);
  });

  it('defers what lacks corroboration or confidence, and a second run changes nothing', async () => {
    const ns = uniqueNamespace('idem');
    await seedSilver(t, ns, {
      ...threeBobs,
      entities: [...threeBobs.entities, { key: 'once', name: 'Zed', type: 'person' }, { key: 'weak', name: 'Quill', type: 'technology' }],
      mentions: [
        ...threeBobs.mentions,
        { entity: 'once', conversation: 'c9' },
        { entity: 'weak', conversation: 'c7', confidence: 0.5 },
        // Below GOLD_MIN_CONFIDENCE (0.6), however corroborated.
        { entity: 'weak', conversation: 'c8', confidence: 0.55 },
      ],
    });
    await promoteAndWait(ns);
    await settled(ns);
    const first = await tableCounts(ns);
    const firstGold = await gold(ns);
    const firstGraph = await dumpNamespace(t.app.neo4j, ns);
    expect(firstGold.map((g) => g.name).sort()).toEqual(['Acme Corp', 'Bob']);
    const again = await promoteAndWait(ns);
    expect(again.message).toMatch(/0 Gold entities created, 0 updated, 0 retired, 2 clusters deferred; relationships 0 created, 0 updated; 0 batches/);
    // Where the run's time went, for an operator reading jobProgress.
    expect(again.message).toMatch(/; \d+ candidate pairs; ms: read \d+, compare \d+, resolve \d+, write \d+, conflicts \d+$/);
    await settled(ns);
    expect(await tableCounts(ns)).toEqual(first);
    expect(await gold(ns)).toEqual(firstGold);
    expect(await dumpNamespace(t.app.neo4j, ns)).toEqual(firstGraph);
  });

  it('a Silver re-derivation followed by promotion gives the same Gold (ids, names, members by name)', async () => {
    const ns = uniqueNamespace('rederive');
    await seedSilver(t, ns, threeBobs);
    await promoteAndWait(ns);
    const before = await gold(ns);
    await reDeriveSilver(t, ns);
    expect((await promoteAndWait(ns)).status).toBe('succeeded');
    const after = await gold(ns);
    const shape = (gs: GoldNode[]) =>
      gs.map((g) => ({ id: g.id, type: g.type, name: g.name, aliases: g.aliases, members: g.mergedFrom.map((m) => `${m.type}:${m.name}`).sort() }));
    expect(shape(after)).toEqual(shape(before));
    // The members are the new Silver rows.
    const beforeIds = new Set(before.flatMap((g) => g.mergedFrom.map((m) => m.id)));
    expect(after.flatMap((g) => g.mergedFrom.map((m) => m.id)).some((id) => beforeIds.has(id))).toBe(false);
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM gold.relationships WHERE namespace = $1 AND retired_at IS NULL`, [ns]);
    expect(rows[0].n).toBe(1);
  });

  it('rebuildGraph re-creates the Gold nodes and edges identically', async () => {
    const ns = uniqueNamespace('regraph');
    await seedSilver(t, ns, threeBobs);
    await promoteAndWait(ns);
    await settled(ns);
    const before = await dumpNamespace(t.app.neo4j, ns);
    expect(before.nodes.filter((n) => n.includes('GoldEntity'))).toHaveLength(2);
    await t.app.neo4j.executeQuery(`MATCH (g:GoldEntity) WHERE g.namespace = $ns DETACH DELETE g`, { ns });
    const { rebuildGraph } = await gqlOk<{ rebuildGraph: { id: string } }>(
      t.url,
      t.adminToken,
      `mutation($ns: String!) { rebuildGraph(namespace: $ns) { id } }`,
      { ns },
    );
    await eventually(async () => {
      const { rows } = await db.query(`SELECT status FROM ops.jobs WHERE id = $1`, [rebuildGraph.id]);
      return rows[0]?.status === 'succeeded';
    }, 'the graph rebuild');
    expect(await dumpNamespace(t.app.neo4j, ns)).toEqual(before);
  });

  it('split undoes a merge, survives the next promotion, and moves both versions on', async () => {
    const ns = uniqueNamespace('split');
    const seeded = await seedSilver(t, ns, threeBobs);
    await promoteAndWait(ns);
    const bob = (await gold(ns)).find((g) => g.type === 'person') as GoldNode;
    const split = await gqlOk<{ splitGoldEntity: GoldNode[] }>(
      t.url,
      t.adminToken,
      `mutation($id: ID!, $ids: [ID!]!) { splitGoldEntity(id: $id, silverEntityIds: $ids, reason: "the concept bob is a band") { id name version mergedFrom { id } } }`,
      { id: bob.id, ids: [seeded.ids.lower] },
    );
    expect(split.splitGoldEntity).toHaveLength(2);
    expect(split.splitGoldEntity[0]?.mergedFrom.map((m) => m.id).sort()).toEqual([seeded.ids.bob, seeded.ids.bobSmith].sort());
    expect(split.splitGoldEntity[0]?.version).toBe(bob.version + 1);
    expect(split.splitGoldEntity[1]?.mergedFrom.map((m) => m.id)).toEqual([seeded.ids.lower]);
    await promoteAndWait(ns);
    const after = await gold(ns);
    expect(after.find((g) => g.id === bob.id)?.mergedFrom).toHaveLength(2);
    expect(after).toHaveLength(3);
    await settled(ns);
    const [edges] = await cypher<{ n: number }>(t.app.neo4j, `MATCH (g:GoldEntity {id: $id})-[:MERGED_FROM]->(e) RETURN count(e) AS n`, { id: bob.id });
    expect(Number(edges?.n)).toBe(2);
    const bad = await gql(
      t.url,
      t.adminToken,
      `mutation($id: ID!, $ids: [ID!]!) { splitGoldEntity(id: $id, silverEntityIds: $ids, reason: "all of it") { id } }`,
      {
        id: bob.id,
        ids: [seeded.ids.bob, seeded.ids.bobSmith],
      },
    );
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('writes each batch to Neo4j in one transaction: the batch outbox rows are claimed together', async () => {
    const ns = uniqueNamespace('batch');
    await seedSilver(t, ns, threeBobs);
    await promoteAndWait(ns);
    await settled(ns);
    const r2 = await db.query(
      `SELECT count(DISTINCT payload->>'batch')::int AS batches, count(*)::int AS n FROM ops.outbox WHERE namespace = $1 AND aggregate_type LIKE 'gold_%'`,
      [ns],
    );
    expect(r2.rows[0]).toEqual({ batches: 2, n: 3 }); // the entity batch (2 rows) and the relationship batch
    expect((await new GoldProjectionJob(Sql.of(t.app.ds), t.app.neo4j).runOnce()).kind).toBe('skipped');
  });

  it('refuses promote without "review" and hides Gold from other namespaces', async () => {
    const ns = uniqueNamespace('iso');
    await seedSilver(t, ns, threeBobs);
    await promoteAndWait(ns);
    const bob = (await gold(ns)).find((g) => g.type === 'person') as GoldNode;
    const reader = (await createToken(t, [{ namespacePattern: ns, capabilities: ['READ', 'LIST'] }])).token;
    const stranger = (await createToken(t, [{ namespacePattern: 'elsewhere-*', capabilities: ['READ', 'LIST', 'REVIEW'] }])).token;
    const denied = await gql(t.url, reader, `mutation($ns: String!) { promote(namespace: $ns) { id } }`, { ns });
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(
      (await gqlOk<{ goldEntity: { id: string } | null }>(t.url, reader, `query($id: ID!) { goldEntity(id: $id) { id } }`, { id: bob.id })).goldEntity?.id,
    ).toBe(bob.id);
    expect((await gqlOk<{ goldEntity: unknown }>(t.url, stranger, `query($id: ID!) { goldEntity(id: $id) { id } }`, { id: bob.id })).goldEntity).toBeNull();
    // Every Gold operation in the schema is in the list below: a new one fails this test until it is added.
    const covered = ['goldEntity', 'goldEntities', 'promote', 'splitGoldEntity', 'about', 'reviewQueue', 'resolveReview', 'relatedContext'];
    const schema = await buildAppSchema();
    const goldOps = [schema.getQueryType(), schema.getMutationType()].flatMap((type) =>
      Object.values(type?.getFields() ?? {})
        .filter((f) => /gold/i.test(f.name) || /Gold|ReviewItem/.test(String(f.type)) || f.name === 'promote')
        .map((f) => f.name),
    );
    expect(goldOps.sort()).toEqual([...covered].sort());
    for (const op of [
      `query { goldEntities(namespace: "${ns}") { edges { node { id } } } }`,
      `query { about(namespace: "${ns}", name: "Bob") { id } }`,
      `query { relatedContext(namespace: "${ns}", topic: "Bob", depth: 2) { entities { id } } }`,
      `query { changes(namespace: "${ns}", since: "2000-01-01T00:00:00Z", subjects: [GOLD_ENTITY, GOLD_RELATIONSHIP]) { kind goldEntity { id } } }`,
      `mutation { promote(namespace: "${ns}") { id } }`,
      `mutation { splitGoldEntity(id: "${bob.id}", silverEntityIds: ["${bob.mergedFrom[0]?.id}"], reason: "not mine") { id } }`,
      `query { reviewQueue(namespace: "${ns}") { edges { node { id } } } }`,
      // Review items of other namespaces: gold-review.test.ts (this namespace has none).
      `mutation { resolveReview(id: "${bob.id}", decision: "KEEP_ALL") { id } }`,
    ]) {
      const r = await gql(t.url, stranger, op);
      expect(r.errors?.[0]?.extensions?.code).toMatch(/FORBIDDEN|NOT_FOUND/);
    }
  });
});
