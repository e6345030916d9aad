import { getNamedType, GraphQLObjectType, GraphQLSchema, isListType, isNonNullType, GraphQLOutputType } from 'graphql';
import { Client } from 'pg';
import { buildAppSchema } from '../../src/api/schema';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status event { id } } }`;
const PENDING = `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`;
const NODE_TYPES = ['GraphEvent', 'GraphFact', 'GraphEntity'] as const;
type NodeType = (typeof NODE_TYPES)[number];
const ROOTS: Record<NodeType, string[]> = {
  GraphEvent: ['graphEvents', 'graphEventsConnection'],
  GraphFact: ['graphFacts', 'graphFactsConnection'],
  GraphEntity: ['graphEntities', 'graphEntitiesConnection'],
};

interface RelField {
  name: string;
  target: NodeType;
  connection: boolean;
}

const isList = (t: GraphQLOutputType): boolean => isListType(isNonNullType(t) ? t.ofType : t);

/** The fields of a generated node type that lead to other nodes, read from the schema itself (so a new one is covered too). */
function relationshipFields(schema: GraphQLSchema, typeName: NodeType): RelField[] {
  const type = schema.getType(typeName) as GraphQLObjectType;
  const out: RelField[] = [];
  for (const f of Object.values(type.getFields())) {
    const named = getNamedType(f.type).name;
    if ((NODE_TYPES as readonly string[]).includes(named) && isList(f.type)) out.push({ name: f.name, target: named as NodeType, connection: false });
    if (named.endsWith('Connection')) {
      const edges = (getNamedType(f.type) as GraphQLObjectType).getFields().edges;
      const node = edges && (getNamedType(edges.type) as GraphQLObjectType).getFields().node;
      const target = node && getNamedType(node.type).name;
      if (target && (NODE_TYPES as readonly string[]).includes(target)) out.push({ name: f.name, target: target as NodeType, connection: true });
    }
  }
  return out;
}

/** `namespace` of every node anywhere in a response, and every (totalCount, edges) pair. */
function walk(value: unknown, namespaces: string[], counts: Array<{ totalCount: number; edges: number }>): void {
  if (Array.isArray(value)) return value.forEach((v) => walk(v, namespaces, counts));
  if (value === null || typeof value !== 'object') return;
  const o = value as Record<string, unknown>;
  if (typeof o.namespace === 'string') namespaces.push(o.namespace);
  if (typeof o.totalCount === 'number' && Array.isArray(o.edges)) counts.push({ totalCount: o.totalCount, edges: o.edges.length });
  Object.values(o).forEach((v) => walk(v, namespaces, counts));
}

describe('Graph exploration (@neo4j/graphql): read-only, namespace-isolated, bounded', () => {
  let t: TestApp;
  let pg: Client;
  let schema: GraphQLSchema;
  let lister: string; // `list` on `mine` only, by exact name
  let prefixLister: string; // `list` through a prefix grant that covers `mine` only
  let reader: string; // `read` without `list`
  const mine = uniqueNamespace('explore');
  const other = uniqueNamespace('explore-other');
  const planted: Record<NodeType, string> = { GraphEvent: '', GraphFact: '', GraphEntity: '' };
  const foreign: Record<NodeType, string> = { GraphEvent: '', GraphFact: '', GraphEntity: '' };

  const ingest = async (events: unknown[]) => gqlOk(t.url, t.adminToken, INGEST, { input: events });
  const settled = async (ns: string) => {
    await eventually(
      async () => (await gqlOk<{ pipelineStatus: { pending: number } }>(t.url, t.adminToken, PENDING, { ns })).pipelineStatus.pending === 0,
      `derivation in ${ns}`,
      60_000,
    );
    await eventually(
      async () =>
        (await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM ops.outbox WHERE processed_at IS NULL AND namespace = $1`, [ns])).rows[0]?.n === 0,
      `outbox of ${ns}`,
      30_000,
    );
  };
  const one = async (cypher: string, ns: string): Promise<string> => {
    const res = await t.app.neo4j.executeQuery(cypher, { ns });
    const id = res.records[0]?.get('id') as string | undefined;
    if (!id) throw new Error(`no node for ${cypher} in ${ns}`);
    return id;
  };
  const exploreCount = async (): Promise<number> => {
    const text = await (await fetch(`${t.url}/metrics`)).text();
    return text
      .split('\n')
      .filter((l) => l.startsWith('medallion_graph_explore_queries_total'))
      .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
  };

  beforeAll(async () => {
    // Each new query shape costs Neo4j's planner ~1 s here, several on a busy CI machine: the
    // default 5 s transaction timeout would turn that into LIMIT_EXCEEDED, which is not under test.
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50', EXPLORE_TIMEOUT_MS: '120000' });
    pg = new Client({ connectionString: t.databaseUrl });
    await pg.connect();
    schema = await buildAppSchema();
    lister = (await createToken(t, [{ namespacePattern: mine, capabilities: ['LIST', 'READ'] }])).token;
    prefixLister = (await createToken(t, [{ namespacePattern: `${mine.slice(0, -2)}*`, capabilities: ['LIST'] }])).token;
    reader = (await createToken(t, [{ namespacePattern: mine, capabilities: ['READ', 'SEARCH'] }])).token;

    for (const ns of [mine, other]) {
      await ingest([anEvent(ns).inConversation('c1', 1).by('USER').saying('I use vim for everything').at('2026-01-10T09:00:00.000Z').build()]);
      await settled(ns);
      await ingest([
        anEvent(ns).inConversation('c1', 2).by('USER').saying('I switched to neovim last week').at('2026-03-08T09:00:00.000Z').build(),
        anEvent(ns).inConversation('c1', 3).by('USER').saying('We switched from MySQL to PostgreSQL.').at('2026-03-09T09:00:00.000Z').build(),
        anEvent(ns).inConversation('c1', 4).by('USER').saying('The database runs on AWS RDS now.').at('2026-03-10T09:00:00.000Z').build(),
      ]);
      await settled(ns);
    }
    // Edges a bug elsewhere could create: every relationship type, in both directions, across the boundary.
    planted.GraphFact = await one(`MATCH (f:Fact)-[:ABOUT]->() WHERE f.namespace = $ns RETURN f.id AS id LIMIT 1`, mine);
    planted.GraphEntity = await one(`MATCH (n:Entity)<-[:ABOUT]-() WHERE n.namespace = $ns RETURN n.id AS id LIMIT 1`, mine);
    planted.GraphEvent = await one(`MATCH (e:Event)<-[:DERIVED_FROM]-() WHERE e.namespace = $ns RETURN e.id AS id LIMIT 1`, mine);
    foreign.GraphFact = await one(`MATCH (f:Fact)-[:ABOUT]->() WHERE f.namespace = $ns RETURN f.id AS id LIMIT 1`, other);
    foreign.GraphEntity = await one(`MATCH (n:Entity)<-[:ABOUT]-() WHERE n.namespace = $ns RETURN n.id AS id LIMIT 1`, other);
    foreign.GraphEvent = await one(`MATCH (e:Event)<-[:DERIVED_FROM]-() WHERE e.namespace = $ns RETURN e.id AS id LIMIT 1`, other);
    await t.app.neo4j.executeQuery(
      `MATCH (f:Fact {id: $mf}), (n:Entity {id: $me}), (e:Event {id: $mv}), (of:Fact {id: $of}), (on:Entity {id: $oe}), (ov:Event {id: $ov})
       CREATE (f)-[:DERIVED_FROM {spanStart: 0, spanEnd: 1, quote: 'x', planted: true}]->(ov),
              (of)-[:DERIVED_FROM {spanStart: 0, spanEnd: 1, quote: 'x', planted: true}]->(e),
              (f)-[:ABOUT {role: 'object', planted: true}]->(on),
              (of)-[:ABOUT {role: 'object', planted: true}]->(n),
              (f)-[:SUPERSEDES {planted: true}]->(of),
              (of)-[:SUPERSEDES {planted: true}]->(f),
              (n)-[:RELATED {id: 'planted-1', type: 'knows', planted: true}]->(on),
              (on)-[:RELATED {id: 'planted-2', type: 'knows', planted: true}]->(n)`,
      { mf: planted.GraphFact, me: planted.GraphEntity, mv: planted.GraphEvent, of: foreign.GraphFact, oe: foreign.GraphEntity, ov: foreign.GraphEvent },
    );
  }, 240_000);
  afterAll(async () => {
    await t?.app.neo4j.executeQuery(`MATCH ()-[x {planted: true}]->() DELETE x`);
    await pg?.end();
    await t?.stop();
  });

  it('merges into the one schema with Graph-prefixed names, no mutations and no clash with the code-first types', () => {
    const query = schema.getQueryType()?.getFields() ?? {};
    expect(
      Object.keys(query)
        .filter((f) => f.startsWith('graph') && f !== 'graphConsistency')
        .sort(),
    ).toEqual(['graphEntities', 'graphEntitiesConnection', 'graphEvents', 'graphEventsConnection', 'graphFacts', 'graphFactsConnection']);
    const mutations = Object.keys(schema.getMutationType()?.getFields() ?? {});
    expect(mutations.filter((m) => /graph|create|update|delete|merge|connect/i.test(m) && !['rebuildGraph', 'createToken'].includes(m))).toEqual([]);
    // The code-first DateTime is still graphql-scalars' (the generated one is GraphDateTime).
    expect(schema.getType('DateTime')?.description).toMatch(/date-time/i);
    expect(schema.getType('GraphDateTime')).toBeDefined();
    expect(schema.getType('Fact')?.toString()).toBe('Fact');
  });

  it("explores facts with nested traversals (events with spans, entities, supersession) in the caller's namespace", async () => {
    const res = await gqlOk<{
      graphFacts: Array<{
        statement: string;
        namespace: string;
        supersededBy: Array<{ statement: string }>;
        derivedFromConnection: { edges: Array<{ properties: { quote: string }; node: { kind: string } }> };
        about: Array<{ name: string }>;
      }>;
    }>(
      t.url,
      lister,
      `query($stmt: String!) { graphFacts(where: { statement: { contains: $stmt } }, sort: [{ statement: ASC }]) {
         statement namespace supersededBy { statement } about { name }
         derivedFromConnection { edges { properties { quote } node { kind } } } } }`,
      { stmt: 'Vim' },
    );
    const vim = res.graphFacts.find((f) => f.statement === 'The user uses Vim');
    expect(vim).toMatchObject({ namespace: mine, supersededBy: [{ statement: 'The user switched to Neovim in the week before 8 March 2026' }] });
    expect(vim?.derivedFromConnection.edges).toEqual([{ properties: { quote: 'I use vim for everything' }, node: { kind: 'message' } }]);
    expect(vim?.about.map((e) => e.name).sort()).toEqual(['Vim', 'the user']);
    expect(res.graphFacts.every((f) => f.namespace === mine)).toBe(true);
  });

  it("never returns another namespace's node or count through any generated root or relationship field", async () => {
    const queries: Array<{ path: string; query: string; type: NodeType }> = [];
    for (const type of NODE_TYPES) {
      for (const root of ROOTS[type]) {
        for (const f1 of relationshipFields(schema, type)) {
          const inner = relationshipFields(schema, f1.target)
            .map((f2) => sel(f2, 'id namespace'))
            .join(' ');
          const body = `id namespace ${sel(f1, `id namespace ${inner}`)}`;
          const rootSel = root.endsWith('Connection')
            ? `${root}(first: 5, where: $where) { totalCount edges { node { ${body} } } }`
            : `${root}(limit: 5, where: $where) { ${body} }`;
          queries.push({ path: `${root}.${f1.name}`, type, query: `query($where: ${type}Where) { ${rootSel} }` });
        }
      }
    }
    // From the node with planted edges, two hops out through every pair of relationship fields.
    // Each query is new to Neo4j's planner (~1 s each on a busy 2-core machine), so two run at once.
    const paths: string[] = [];
    for (let i = 0; i < queries.length; i += 2) {
      await Promise.all(
        queries.slice(i, i + 2).map(async ({ path, type, query }) => {
          const res = await gql(t.url, lister, query, { where: { id: { eq: planted[type] } } });
          expect(res.errors).toBeUndefined();
          const namespaces: string[] = [];
          const counts: Array<{ totalCount: number; edges: number }> = [];
          walk(res.data, namespaces, counts);
          expect(namespaces.length).toBeGreaterThan(0); // the root at least; its planted foreign neighbour must not appear
          expect(new Set(namespaces)).toEqual(new Set([mine]));
          for (const c of counts) if (c.edges < 5) expect(c.totalCount).toBe(c.edges); // a hidden edge would still be counted
          paths.push(path);
        }),
      );
    }
    // Every relationship field of every type was walked from every root (2 fields × Event, 8 × Fact, 6 × Entity).
    expect(new Set(paths).size).toBe(2 * (2 + 8 + 6));
  }, 180_000);

  it('neither finds nor confirms foreign nodes through filters, ids or prefix grants', async () => {
    for (const type of NODE_TYPES) {
      const [list] = ROOTS[type] as [string];
      const q = `query($where: ${type}Where) { ${list}(where: $where) { id namespace } }`;
      for (const token of [lister, prefixLister]) {
        expect(await gqlOk(t.url, token, q, { where: { id: { eq: foreign[type] } } })).toEqual({ [list]: [] });
        expect(await gqlOk(t.url, token, q, { where: { namespace: { eq: other } } })).toEqual({ [list]: [] });
        const all = (await gqlOk<Record<string, Array<{ namespace: string }>>>(t.url, token, q, {}))[list] ?? [];
        expect(all.length).toBeGreaterThan(0);
        expect(all.every((n) => n.namespace === mine)).toBe(true);
      }
    }
    // Relationship filters are not offered: @neo4j/graphql would not apply the target's
    // authorization inside them, so "links to a foreign entity named X" would be an oracle.
    const byFilter = (where: Record<string, unknown>) => gql(t.url, lister, `query($where: GraphFactWhere) { graphFacts(where: $where) { id } }`, { where });
    for (const where of [
      { about: { some: { namespace: { eq: other } } } },
      { derivedFromConnection: { some: { node: { id: { eq: foreign.GraphEvent } } } } },
      { supersedes: { some: { id: { eq: foreign.GraphFact } } } },
    ]) {
      expect((await byFilter(where)).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
    expect(await byFilter({ factType: { eq: 'preference' } })).toMatchObject({ data: { graphFacts: expect.any(Array) } });
    // Nested connection filters only narrow what is already visible.
    const narrowed = await gqlOk<{ graphFacts: Array<{ aboutConnection: { totalCount: number; edges: unknown[] } }> }>(
      t.url,
      lister,
      `query($id: ID!, $other: String!) { graphFacts(where: { id: { eq: $id } }) { aboutConnection(where: { node: { namespace: { eq: $other } } }) { totalCount edges { node { id } } } } }`,
      { id: planted.GraphFact, other },
    );
    expect(narrowed.graphFacts).toEqual([{ aboutConnection: { totalCount: 0, edges: [] } }]);
    // The admin (`*`) sees both namespaces.
    const admin = (
      await gqlOk<{ graphEvents: Array<{ namespace: string }> }>(
        t.url,
        t.adminToken,
        `{ graphEvents(limit: 100, where: { namespace: { in: ["${mine}", "${other}"] } }) { namespace } }`,
      )
    ).graphEvents;
    expect(new Set(admin.map((e) => e.namespace))).toEqual(new Set([mine, other]));
  });

  it('refuses callers without a token or without `list`, and offers no way to write', async () => {
    const q = `{ graphFacts(limit: 1) { id } }`;
    expect((await gql(t.url, undefined, q)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const forbidden = await gql(t.url, reader, q);
    expect(forbidden.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(forbidden.errors?.[0]?.message).toMatch(/"list" capability/);
    const write = await gql(
      t.url,
      t.adminToken,
      `mutation { graphCreateFacts(input: [{ id: "x", namespace: "${mine}", statement: "s", factType: "t" }]) { info { nodesCreated } } }`,
    );
    expect(write.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('refuses abusive nested traversals and filters with LIMIT_EXCEEDED before any Cypher runs', async () => {
    const before = await exploreCount();
    const nested = await gql(t.url, t.adminToken, `{ graphFacts { about { facts { about { facts { id } } } } } }`);
    expect(nested.data ?? null).toBeNull();
    expect(nested.errors?.[0]?.extensions).toMatchObject({ code: 'LIMIT_EXCEEDED', limit: 'complexity' });
    const wide = await gql(t.url, t.adminToken, `{ graphEntities(limit: 100) { related(limit: 100) { related(limit: 100) { id } } } }`);
    expect(wide.errors?.[0]?.extensions).toMatchObject({ code: 'LIMIT_EXCEEDED', limit: 'complexity' });
    // Deeply nested logical filters (neo4j/graphql#2032-style blow-ups): refused on nesting.
    const nest = (n: number): Record<string, unknown> => (n === 0 ? { name: { eq: 'Vim' } } : { NOT: { OR: [nest(n - 1)] } });
    expect(
      (await gql(t.url, t.adminToken, `query($where: GraphEntityWhere) { graphEntities(where: $where) { id } }`, { where: nest(3) })).errors,
    ).toBeUndefined();
    const filter = await gql(t.url, t.adminToken, `query($where: GraphEntityWhere) { graphEntities(where: $where) { id } }`, { where: nest(10) });
    expect(filter.errors?.[0]?.extensions).toMatchObject({ code: 'LIMIT_EXCEEDED', limit: 'inputDepth' });
    expect(await exploreCount()).toBe(before + 1); // only the nest(3) query ran
    // A modest nested query runs (and is counted).
    await gqlOk(t.url, t.adminToken, `{ graphFacts(limit: 10) { about(limit: 5) { facts(limit: 10) { id } } } }`);
    expect(await exploreCount()).toBe(before + 2);
  });

  it('returns 25 nodes by default and at most 100 whatever the caller asks', async () => {
    await t.app.neo4j.executeQuery(`UNWIND range(1, 120) AS i CREATE (:Event {id: 'planted-event-' + i, namespace: $ns, kind: 'MESSAGE', planted: true})`, {
      ns: mine,
    });
    try {
      const count = async (args: string) => (await gqlOk<{ graphEvents: unknown[] }>(t.url, lister, `{ graphEvents${args} { id } }`)).graphEvents.length;
      expect(await count('')).toBe(25);
      expect(await count('(limit: 1000)')).toBe(100);
      expect(await count('(limit: 7)')).toBe(7);
      const total = (
        await gqlOk<{ graphEventsConnection: { totalCount: number; edges: unknown[] } }>(
          t.url,
          lister,
          `{ graphEventsConnection(first: 1000) { totalCount edges { node { id } } } }`,
        )
      ).graphEventsConnection;
      expect(total.totalCount).toBeGreaterThanOrEqual(120);
      expect(total.edges).toHaveLength(100);
    } finally {
      await t.app.neo4j.executeQuery(`MATCH (e:Event {planted: true}) DETACH DELETE e`);
    }
  });
});

function sel(f: RelField, body: string): string {
  return f.connection ? `${f.name}(first: 5) { totalCount edges { node { ${body} } } }` : `${f.name}(limit: 5) { ${body} }`;
}
