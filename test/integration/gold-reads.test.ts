import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { dataOf, errorOf, mcpClient } from '../support/mcp-client';
import { expandGoldFrontier } from '../../src/graph/cypher/gold-related';
import { countNeo4jRoundTrips } from '../support/neo4j-round-trips';
import { SeedEntity, SeedMention, SeedRelationship, seedSilver, SeededSilver } from '../support/silver-seed';
import { uniqueNamespace } from '../support/stores';
import { createToken, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';
import { outboxDrained, runPromotion } from '../support/gold';

interface FactOut {
  id: string;
  namespace: string;
  statement: string;
  validFrom: string;
  validTo: string | null;
  sources: Array<{ event: { id: string; namespace: string } }>;
}
interface PreferenceOut {
  fact: FactOut;
  replaced: FactOut[];
}
interface GoldOut {
  id: string;
  namespace: string;
  name: string;
}
interface SubgraphOut {
  namespace: string;
  root: GoldOut | null;
  entities: GoldOut[];
  relationships: Array<{ id: string; namespace: string; type: string; source: GoldOut; target: GoldOut; sources: Array<{ event: { id: string } }> }>;
  facts: Array<{ entityId: string; fact: FactOut }>;
}

const FACT = `id namespace statement validFrom validTo sources { event { id namespace } }`;
const PREFERENCES = `query($ns: String!, $name: String!, $asOf: DateTime) { about(namespace: $ns, name: $name, asOf: $asOf) {
  id preferences { fact { ${FACT} } replaced { ${FACT} } } } }`;
const RELATED = `query($ns: String!, $topic: String!, $depth: Int) { relatedContext(namespace: $ns, topic: $topic, depth: $depth) {
  namespace root { id namespace name }
  entities { id namespace name facts { id namespace } preferences { fact { id namespace } replaced { id namespace } } }
  relationships { id namespace type source { id namespace name } target { id namespace name } sources { event { id namespace } } }
  facts { entityId fact { ${FACT} } } } }`;
const CHANGES = `query($ns: String!, $since: DateTime!, $subjects: [ChangeSubject!]) { changes(namespace: $ns, since: $since, subjects: $subjects) {
  namespace subject kind at reason fact { id } goldEntity { id namespace name } goldRelationship { id namespace } } }`;

/** Every `namespace` anywhere in a response. */
function namespacesIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => namespacesIn(v, out));
  else if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.namespace === 'string') out.push(o.namespace);
    Object.values(o).forEach((v) => namespacesIn(v, out));
  }
  return out;
}

/** Bob (and Bob Smith, merged) works on Acme, in Lisbon, in Portugal: a chain of three Gold relationships. Carol stands apart. */
function world(extra: { entities?: SeedEntity[]; mentions?: SeedMention[]; relationships?: SeedRelationship[] } = {}) {
  const two = (entity: string): SeedMention[] => [
    { entity, conversation: 'c1' },
    { entity, conversation: 'c2' },
  ];
  const both = (type: string, source: string, target: string): SeedRelationship[] => [
    { type, source, target, conversation: 'c1' },
    { type, source, target, conversation: 'c2' },
  ];
  return {
    entities: [
      { key: 'bob', name: 'Bob', type: 'person' },
      { key: 'bobSmith', name: 'Bob Smith', type: 'person' },
      { key: 'acme', name: 'Acme Corp', type: 'organization' },
      { key: 'lisbon', name: 'Lisbon', type: 'place' },
      { key: 'portugal', name: 'Portugal', type: 'place' },
      { key: 'carol', name: 'Carol', type: 'person' },
      ...(extra.entities ?? []),
    ],
    mentions: [
      ...two('bob'),
      { entity: 'bobSmith', conversation: 'c1' },
      ...two('acme'),
      ...two('lisbon'),
      ...two('portugal'),
      ...two('carol'),
      ...(extra.mentions ?? []),
    ],
    relationships: [
      { type: 'works_on', source: 'bob', target: 'acme', conversation: 'c1' },
      { type: 'works_on', source: 'bobSmith', target: 'acme', conversation: 'c2' },
      ...both('located_in', 'acme', 'lisbon'),
      ...both('located_in', 'lisbon', 'portugal'),
      ...(extra.relationships ?? []),
    ],
  };
}

describe('Gold reads: preferences, relatedContext and Gold changes', () => {
  let t: TestApp;
  let db: Client;
  const ns = uniqueNamespace('reads');
  const other = uniqueNamespace('reads-other');
  let seeded: SeededSilver;
  let theirs: SeededSilver;
  let reader: string;
  let lister: string;
  let promotedFrom: string;
  // Bob's preferences: tea (2019–2020) → coffee (2020–2021, said of "Bob Smith") → matcha (2021–); jazz (an attribute with a preference predicate).
  const tea = randomUUID();
  const coffee = randomUUID();
  const matcha = randomUUID();
  const jazz = randomUUID();
  // Acme's preference, with Bob as its object: not one of Bob's.
  const acmeLikesBob = randomUUID();
  const worksAt = randomUUID();

  const promoteAndWait = async (namespace: string) => expect((await runPromotion(t, namespace)).status).toBe('succeeded');
  const settled = (namespace: string) => outboxDrained(db, namespace);
  const dbNow = async () => ((await db.query(`SELECT now() AS t`)).rows[0].t as Date).toISOString();
  const related = async (topic: string, depth: number | null, token = reader, namespace = ns) =>
    (await gqlOk<{ relatedContext: SubgraphOut }>(t.url, token, RELATED, { ns: namespace, topic, depth })).relatedContext;
  const names = (s: SubgraphOut) => s.entities.map((e) => e.name).sort();

  beforeAll(async () => {
    t = await startTestApp(
      { OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50', GOLD_PROMOTE_EVERY_SECONDS: '0' },
      { api: true, worker: true },
    );
    db = new Client({ connectionString: t.databaseUrl });
    await db.connect();
    seeded = await seedSilver(t, ns, world());
    const run = (await db.query(`SELECT derivation_run_id::text AS id FROM silver.entities WHERE id = $1`, [seeded.ids.bob])).rows[0].id;
    await db.query('BEGIN');
    const facts: Array<[string, string, string | null, string, string, string, string | null, number, string | null]> = [
      // id, subject, object entity, statement, fact_type + predicate, valid_from, valid_to, confidence, superseded_by
      [tea, seeded.ids.bob as string, null, 'Bob prefers tea', 'preference:prefers', '2019-01-01T00:00:00Z', '2020-01-01T00:00:00Z', 0.9, coffee],
      [
        coffee,
        seeded.ids.bobSmith as string,
        null,
        'Bob Smith prefers coffee',
        'preference:prefers',
        '2020-01-01T00:00:00Z',
        '2021-01-01T00:00:00Z',
        0.9,
        matcha,
      ],
      [matcha, seeded.ids.bob as string, null, 'Bob prefers matcha', 'preference:prefers', '2021-01-01T00:00:00Z', null, 0.95, null],
      [jazz, seeded.ids.bob as string, null, 'Bob likes jazz', 'attribute:likes', '2022-01-01T00:00:00Z', null, 0.85, null],
      [
        acmeLikesBob,
        seeded.ids.acme as string,
        seeded.ids.bob as string,
        'Acme Corp prefers Bob',
        'preference:prefers',
        '2022-01-01T00:00:00Z',
        null,
        0.9,
        null,
      ],
      [worksAt, seeded.ids.bob as string, null, 'Bob works on Acme', 'attribute:works_on', '2022-01-01T00:00:00Z', null, 0.9, null],
    ];
    for (const [id, subject, object, statement, kind, from, to, confidence] of facts) {
      const [factType, predicate] = kind.split(':');
      await db.query(
        `INSERT INTO silver.facts (id, namespace, statement, fact_type, subject_entity_id, predicate, object_entity_id, confidence, importance, valid_from, valid_to, extraction_model, derivation_run_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0.5, $9, $10, 'seed', $11)`,
        [id, ns, statement, factType, subject, predicate, object, confidence, from, to, run],
      );
      await db.query(`INSERT INTO silver.fact_sources (fact_id, event_id, span_start, span_end, quote) VALUES ($1, $2, 0, 2, 'ok')`, [id, seeded.eventIds[0]]);
      await db.query(`INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload) VALUES ($1, 'fact', $2, 'upsert', $3)`, [ns, id, { id }]);
    }
    for (const [id, , , , , , , , supersededBy] of facts)
      if (supersededBy) await db.query(`UPDATE silver.facts SET superseded_by = $1 WHERE id = $2`, [supersededBy, id]);
    await db.query('COMMIT');
    // The neighbour: the same world, and Globex beside its Acme.
    theirs = await seedSilver(
      t,
      other,
      world({
        entities: [{ key: 'globex', name: 'Globex', type: 'organization' }],
        mentions: [
          { entity: 'globex', conversation: 'c1' },
          { entity: 'globex', conversation: 'c2' },
        ],
        relationships: [
          { type: 'related_to', source: 'acme', target: 'globex', conversation: 'c1' },
          { type: 'related_to', source: 'acme', target: 'globex', conversation: 'c2' },
        ],
      }),
    );
    promotedFrom = await dbNow();
    await promoteAndWait(ns);
    await promoteAndWait(other);
    await settled(ns);
    await settled(other);
    reader = (await createToken(t, [{ namespacePattern: ns, capabilities: ['READ'] }], 'reads-reader')).token;
    lister = (await createToken(t, [{ namespacePattern: ns, capabilities: ['LIST'] }], 'reads-lister')).token;
  }, 240_000);
  afterAll(async () => {
    await db?.end();
    await t?.stop();
  });

  it('gives an entity its current preferences, each with the chain of facts it replaced and their validity', async () => {
    const { about } = await gqlOk<{ about: { id: string; preferences: PreferenceOut[] } }>(t.url, reader, PREFERENCES, { ns, name: 'Bob', asOf: null });
    expect(about.preferences.map((p) => p.fact.id)).toEqual([matcha, jazz]);
    const [now] = about.preferences as [PreferenceOut];
    // Newest first, across members: coffee was said of "Bob Smith", tea of "Bob".
    expect(now.replaced.map((f) => [f.id, f.validFrom, f.validTo])).toEqual([
      [coffee, '2020-01-01T00:00:00.000Z', '2021-01-01T00:00:00.000Z'],
      [tea, '2019-01-01T00:00:00.000Z', '2020-01-01T00:00:00.000Z'],
    ]);
    expect(about.preferences[1]?.replaced).toEqual([]);
    // Provenance: every fact rests on an event of the namespace.
    for (const f of [now.fact, ...now.replaced]) expect(f.sources.map((s) => s.event.id)).toEqual([seeded.eventIds[0]]);
    // Acme's preference about Bob is Acme's, not Bob's.
    const acme = await gqlOk<{ about: { preferences: PreferenceOut[] } }>(t.url, reader, PREFERENCES, { ns, name: 'Acme Corp', asOf: null });
    expect(acme.about.preferences.map((p) => p.fact.id)).toEqual([acmeLikesBob]);
  });

  it('gives the preference held at asOf, with only what it had replaced by then', async () => {
    const then = await gqlOk<{ about: { preferences: PreferenceOut[] } }>(t.url, reader, PREFERENCES, { ns, name: 'Bob', asOf: '2020-06-01T00:00:00Z' });
    expect(then.about.preferences.map((p) => [p.fact.id, p.replaced.map((f) => f.id)])).toEqual([[coffee, [tea]]]);
  });

  it('returns the related context at depth 1, 2 and 3 (default 1), with the relationships between them and the facts about them', async () => {
    const d1 = await related('Bob', null);
    // The Gold name is its best-attested member's: Bob Smith ties with Bob on events and is longer.
    expect(d1.root?.name).toBe('Bob Smith');
    expect(names(d1)).toEqual(['Acme Corp', 'Bob Smith']);
    expect(d1.entities[0]?.name).toBe('Bob Smith');
    expect(d1.relationships.map((r) => [r.source.name, r.type, r.target.name])).toEqual([['Bob Smith', 'works_on', 'Acme Corp']]);
    expect(names(await related('Bob', 2))).toEqual(['Acme Corp', 'Bob Smith', 'Lisbon']);
    const d3 = await related('bob smith', 3);
    expect(names(d3)).toEqual(['Acme Corp', 'Bob Smith', 'Lisbon', 'Portugal']);
    expect(d3.relationships).toHaveLength(3);
    // Every relationship rests on events; every fact is about an entity of the subgraph and rests on events.
    for (const r of d3.relationships) expect(r.sources.length).toBeGreaterThan(0);
    const ids = new Set(d3.entities.map((e) => e.id));
    expect(d3.facts.length).toBeGreaterThan(0);
    for (const f of d3.facts) {
      expect(ids.has(f.entityId)).toBe(true);
      expect(f.fact.sources.length).toBeGreaterThan(0);
    }
    expect(d3.facts.map((f) => f.fact.id)).toEqual(expect.arrayContaining([matcha, acmeLikesBob, worksAt]));
    // Current facts only: the superseded preferences are not in the context.
    expect(d3.facts.map((f) => f.fact.id)).not.toEqual(expect.arrayContaining([tea]));
    // The entities carry their preferences too.
    expect(d3.entities.find((e) => e.name === 'Bob Smith')).toMatchObject({ preferences: [{ fact: { id: matcha } }, { fact: { id: jazz } }] });
    // From the other end.
    expect(names(await related('Portugal', 1))).toEqual(['Lisbon', 'Portugal']);
    expect(names(await related('Carol', 3))).toEqual(['Carol']);
  });

  it('answers an unknown topic with an empty subgraph, and refuses a depth outside 1..3 or an empty topic', async () => {
    expect(await related('Zebediah Quarnstrom', 2)).toMatchObject({ root: null, entities: [], relationships: [], facts: [] });
    for (const depth of [0, 4, -1]) {
      const r = await gql(t.url, reader, RELATED, { ns, topic: 'Bob', depth });
      expect(r.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(r.errors?.[0]?.message).toMatch(/1 to 3/);
    }
    const empty = await gql(t.url, reader, RELATED, { ns, topic: '  ', depth: 1 });
    expect(empty.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('never crosses into another namespace, even along a planted GOLD_RELATED edge; FORBIDDEN without "read"; nested fields re-check', async () => {
    const ourAcme = (await related('Acme Corp', 1)).root as GoldOut;
    const theirGlobex = (await related('Globex', 1, t.adminToken, other)).root as GoldOut;
    const theirBob = (await related('Bob', 1, t.adminToken, other)).root as GoldOut;
    expect(theirGlobex.namespace).toBe(other);
    // Edges across the firewall, one labelled with each namespace (the projection never writes such edges).
    for (const [edgeNs, to] of [
      [ns, theirGlobex.id],
      [other, theirBob.id],
    ] as const)
      await t.app.neo4j.executeQuery(
        `MATCH (a:GoldEntity {id: $a}), (b:GoldEntity {id: $b})
         CREATE (a)-[:GOLD_RELATED {id: $id, namespace: $edgeNs, type: 'related_to', confidence: 1.0, validFrom: datetime('2020-01-01T00:00:00Z'), version: 1}]->(b)`,
        { a: ourAcme.id, b: to, id: randomUUID(), edgeNs },
      );
    for (const topic of ['Bob', 'Acme Corp', 'Lisbon', 'Globex', 'Carol']) {
      const s = await related(topic, 3);
      expect(new Set(namespacesIn(s))).toEqual(new Set([ns]));
      expect(s.entities.map((e) => e.id)).not.toEqual(expect.arrayContaining([theirGlobex.id]));
      expect(s.entities.map((e) => e.name)).not.toContain('Globex');
    }
    // The Cypher itself stops at the firewall (the service's Postgres re-read would hide a leak).
    const session = t.app.neo4j.session({ defaultAccessMode: 'READ' });
    try {
      const hops = await session.executeRead((tx) => expandGoldFrontier(tx, ns, [ourAcme.id], null, 100));
      expect(hops.length).toBeGreaterThan(0);
      expect(hops.map((h) => h.neighbourId)).not.toEqual(expect.arrayContaining([theirGlobex.id]));
      expect(hops.map((h) => h.neighbourId)).not.toEqual(expect.arrayContaining([theirBob.id]));
      expect(await session.executeRead((tx) => expandGoldFrontier(tx, other, [ourAcme.id], null, 100))).toEqual([]);
    } finally {
      await session.close();
    }
    // The neighbour's context, asked with its own grants, shows only its own rows.
    const theirsCtx = await related('Acme Corp', 3, t.adminToken, other);
    expect(names(theirsCtx)).toEqual(['Acme Corp', 'Bob', 'Globex', 'Lisbon', 'Portugal']);
    expect(new Set(namespacesIn(theirsCtx))).toEqual(new Set([other]));
    expect(theirsCtx.entities.map((e) => e.id)).not.toContain(ourAcme.id);

    // Root queries: FORBIDDEN outside the grants, or with "list" but not "read".
    for (const [token, namespace] of [
      [reader, other],
      [lister, ns],
    ] as const) {
      const r = await gql(t.url, token, RELATED, { ns: namespace, topic: 'Bob', depth: 1 });
      expect(r.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect(r.data).toBeNull();
    }
    // Nested: a "list" token reaches Gold entities (goldEntities) but not their preferences.
    const nested = await gql(t.url, lister, `query($ns: String!) { goldEntities(namespace: $ns) { edges { node { id preferences { fact { id } } } } } }`, {
      ns,
    });
    expect(nested.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(JSON.stringify(nested.data ?? {})).not.toContain(matcha);
    // Preferences are never another namespace's: their Bob has none of ours.
    const their = await gqlOk<{ about: { preferences: PreferenceOut[] } }>(t.url, t.adminToken, PREFERENCES, { ns: other, name: 'Bob', asOf: null });
    expect(their.about.preferences).toEqual([]);
    expect(theirs.ids.bob).not.toBe(seeded.ids.bob);
  });

  it('lists Gold changes in the window (merges, a split) and not before it; the default is facts only', async () => {
    const sinceStart = await gqlOk<{ changes: Array<{ subject: string; kind: string; goldEntity: GoldOut | null; namespace: string }> }>(
      t.url,
      t.adminToken,
      CHANGES,
      { ns, since: promotedFrom, subjects: ['GOLD_ENTITY', 'GOLD_RELATIONSHIP'] },
    );
    const kinds = sinceStart.changes.map((c) => `${c.subject}:${c.kind}`);
    // Six Gold entities (Bob merged from two), three Gold relationships.
    expect(kinds.filter((k) => k === 'GOLD_ENTITY:ADDED')).toHaveLength(5);
    expect(kinds.filter((k) => k === 'GOLD_ENTITY:MERGED')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'GOLD_RELATIONSHIP:ADDED')).toHaveLength(3);
    expect(new Set(sinceStart.changes.map((c) => c.namespace))).toEqual(new Set([ns]));
    expect(new Set(sinceStart.changes.flatMap((c) => (c.goldEntity ? [c.goldEntity.namespace] : [])))).toEqual(new Set([ns]));
    // The default: facts only, as before Gold existed.
    const facts = await gqlOk<{ changes: Array<{ subject: string; fact: { id: string } | null }> }>(t.url, t.adminToken, CHANGES, {
      ns,
      since: '2000-01-01T00:00:00Z',
    });
    expect(facts.changes.length).toBeGreaterThan(0);
    expect(facts.changes.every((c) => c.subject === 'FACT' && c.fact !== null)).toBe(true);

    // A split after a mark: the window after it holds the split and the new entity only.
    const bob = (await related('Bob', 1)).root as GoldOut;
    const mark = await dbNow();
    const [, split] = (
      await gqlOk<{ splitGoldEntity: GoldOut[] }>(
        t.url,
        t.adminToken,
        `mutation($id: ID!, $ids: [ID!]!) { splitGoldEntity(id: $id, silverEntityIds: $ids, reason: "Bob Smith is another Bob") { id namespace name } }`,
        { id: bob.id, ids: [seeded.ids.bobSmith] },
      )
    ).splitGoldEntity as [GoldOut, GoldOut];
    const after = await gqlOk<{ changes: Array<{ subject: string; kind: string; reason: string; goldEntity: GoldOut | null }> }>(t.url, lister, CHANGES, {
      ns,
      since: mark,
      subjects: ['FACT', 'GOLD_ENTITY', 'GOLD_RELATIONSHIP'],
    });
    expect(after.changes.map((c) => [c.subject, c.kind, c.goldEntity?.id, c.reason])).toEqual([
      ['GOLD_ENTITY', 'SPLIT', bob.id, 'Bob Smith is another Bob'],
      ['GOLD_ENTITY', 'ADDED', split.id, 'Bob Smith is another Bob'],
    ]);
    // The Silver entities behind a Gold change need "read": the lister is refused, the reader is not asked (no "list").
    const silver = await gql(
      t.url,
      lister,
      `query($ns: String!, $since: DateTime!) { changes(namespace: $ns, since: $since, subjects: [GOLD_ENTITY]) { silverEntities { id } } }`,
      {
        ns,
        since: mark,
      },
    );
    expect(silver.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const refused = await gql(t.url, reader, CHANGES, { ns, since: mark, subjects: ['GOLD_ENTITY'] });
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const withRead = (await createToken(t, [{ namespacePattern: ns, capabilities: ['READ', 'LIST'] }], 'reads-both')).token;
    const members = await gqlOk<{ changes: Array<{ kind: string; silverEntities: Array<{ id: string }> }> }>(
      t.url,
      withRead,
      `query($ns: String!, $since: DateTime!) { changes(namespace: $ns, since: $since, subjects: [GOLD_ENTITY]) { kind silverEntities { id } } }`,
      { ns, since: mark },
    );
    expect(members.changes.map((c) => c.silverEntities.map((e) => e.id))).toEqual([[seeded.ids.bobSmith], [seeded.ids.bobSmith]]);
    // Each namespace's log is its own: the neighbour promoted in the same window, six entities (its Bob merged) and four relationships.
    const theirsLog = await gqlOk<{ changes: Array<{ subject: string; kind: string; goldEntity: GoldOut | null }> }>(t.url, t.adminToken, CHANGES, {
      ns: other,
      since: promotedFrom,
      subjects: ['GOLD_ENTITY', 'GOLD_RELATIONSHIP'],
    });
    expect(theirsLog.changes.map((c) => `${c.subject}:${c.kind}`).sort()).toEqual(
      [...Array(6).fill('GOLD_ENTITY:ADDED'), 'GOLD_ENTITY:MERGED', ...Array(4).fill('GOLD_RELATIONSHIP:ADDED')].sort(),
    );
    const ours = new Set(sinceStart.changes.flatMap((c) => (c.goldEntity ? [c.goldEntity.id] : [])));
    expect(theirsLog.changes.some((c) => c.goldEntity && ours.has(c.goldEntity.id))).toBe(false);

    // The MCP tool what_changed includes Gold changes.
    const client = await mcpClient(t.url, lister);
    try {
      const r = dataOf<{ changes: Array<{ subject: string; kind: string; fact: unknown; gold: { kind: string; id: string; name: string | null } | null }> }>(
        await client.callTool({ name: 'what_changed', arguments: { namespace: ns, since: mark } }),
      );
      expect(r.changes.map((c) => [c.subject, c.kind, c.gold?.id, c.gold?.name, c.fact])).toEqual([
        ['GOLD_ENTITY', 'SPLIT', bob.id, 'Bob', null],
        ['GOLD_ENTITY', 'ADDED', split.id, 'Bob Smith', null],
      ]);
    } finally {
      await client.close();
    }
  });

  it('answers the MCP related_context tool with the same subgraph, top facts and their events; refused without "read"', async () => {
    const client = await mcpClient(t.url, reader);
    try {
      const data = dataOf<{
        root: string | null;
        entities: Array<{ id: string; namespace: string; name: string }>;
        relationships: Array<{ sourceId: string; targetId: string; type: string }>;
        facts: Array<{ entityId: string; id: string; sourceEventIds: string[] }>;
      }>(await client.callTool({ name: 'related_context', arguments: { namespace: ns, topic: 'Lisbon', depth: 2 } }));
      const g = await related('Lisbon', 2);
      expect(data.root).toBe(g.root?.id);
      expect(data.entities.map((e) => e.id)).toEqual(g.entities.map((e) => e.id));
      expect(data.relationships.map((r) => `${r.sourceId}-${r.type}-${r.targetId}`).sort()).toEqual(
        g.relationships.map((r) => `${r.source.id}-${r.type}-${r.target.id}`).sort(),
      );
      expect(data.facts.map((f) => f.id)).toEqual(g.facts.slice(0, 30).map((f) => f.fact.id));
      expect(data.facts.every((f) => f.sourceEventIds.length > 0 && f.sourceEventIds.every((id) => seeded.eventIds.includes(id)))).toBe(true);
      expect(new Set(data.entities.map((e) => e.namespace))).toEqual(new Set([ns]));
      const none = dataOf<{ root: string | null; entities: unknown[] }>(
        await client.callTool({ name: 'related_context', arguments: { namespace: ns, topic: 'Zebediah' } }),
      );
      expect(none).toMatchObject({ root: null, entities: [] });
      expect(errorOf(await client.callTool({ name: 'related_context', arguments: { namespace: ns, topic: 'Bob', depth: 4 } })).code).toBe('BAD_USER_INPUT');
    } finally {
      await client.close();
    }
    const refused = await mcpClient(t.url, lister);
    try {
      // One error model on every transport: a missing capability is a FORBIDDEN tool error naming it.
      const err = errorOf(await refused.callTool({ name: 'related_context', arguments: { namespace: ns, topic: 'Bob' } }));
      expect(err.code).toBe('FORBIDDEN');
      expect(err.message).toContain('"read"');
    } finally {
      await refused.close();
    }
  });

  // Last: stops the background loops so that only the request's own round trips are counted.
  it('costs the same Neo4j statements and SQL round trips for a small and a large subgraph', async () => {
    const hub = uniqueNamespace('reads-hub');
    // Names no promotion step would merge (not similar to each other).
    const spokeNames = ['Apollo', 'Borealis', 'Cygnus', 'Draco', 'Eridanus', 'Fornax', 'Gemini', 'Hydra'];
    const spokes = spokeNames.map((_, i) => `spoke${i}`);
    await seedSilver(t, hub, {
      entities: [{ key: 'hub', name: 'Orion', type: 'project' }, ...spokes.map((k, i) => ({ key: k, name: spokeNames[i] as string, type: 'project' }))],
      mentions: ['hub', ...spokes].flatMap((entity) => [
        { entity, conversation: `m-${entity}-1` },
        { entity, conversation: `m-${entity}-2` },
      ]),
      relationships: spokes.flatMap((k) => [
        { type: 'depends_on', source: 'hub', target: k, conversation: `r-${k}-1` },
        { type: 'depends_on', source: 'hub', target: k, conversation: `r-${k}-2` },
      ]),
    });
    await promoteAndWait(hub);
    await settled(hub);
    await t.app.stages.stop();
    const { counter, restore } = countNeo4jRoundTrips(t.app.neo4j);
    try {
      const measure = async (topic: string) => {
        t.app.queryCounter.reset();
        counter.reset();
        const s = await related(topic, 1, t.adminToken, hub);
        return { s, sql: t.app.queryCounter.count, tx: counter.transactions, statements: counter.statements };
      };
      const small = await measure('Apollo');
      const large = await measure('Orion');
      expect(small.s.entities).toHaveLength(2);
      expect(large.s.entities).toHaveLength(9);
      expect(large.s.relationships).toHaveLength(8);
      // One expansion hop, the facts of every entity, the preferences of every entity.
      expect(small.statements).toBe(3);
      expect(large.statements).toBe(small.statements);
      expect(large.tx).toBe(small.tx);
      expect(large.sql).toBe(small.sql);
    } finally {
      restore();
    }
  });
});
