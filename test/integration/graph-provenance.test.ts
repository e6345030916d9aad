import { Client } from 'pg';
import { createLoaders } from '../../src/scope/request-scope';
import { ChangeRepository } from '../../src/graph/change.repository';
import { GraphExceptionCode } from '../../src/graph/graph.exception';
import { provenanceLimits, ProvenanceService } from '../../src/graph/provenance.service';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status event { id } } }`;
const PENDING = `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`;
const ENTITIES = `query($ns: String!) { entities(namespace: $ns, first: 100) { edges { node { id name type } } } }`;
const FACTS = `query($ns: String!) { facts(namespace: $ns, includeRetired: true, first: 100) { edges { node { id statement validTo supersededBy { id } } } } }`;

const PROVENANCE = `query($id: ID!) { provenance(factId: $id) {
  fact { id statement }
  steps { via distance spanStart spanEnd quote fact { id statement namespace } event { id content namespace } } } }`;
const DERIVED = `query($id: ID!) { derivedFrom(eventId: $id) {
  event { id }
  facts { spanStart spanEnd quote fact { id statement namespace } }
  entities { id name namespace }
  relationships { id type source { name } target { name } } } }`;
const SUBGRAPH = `root { id name } entities { id name namespace } relationships { id type validFrom validTo source { name } target { name } }`;
const NEIGHBOURHOOD = `query($id: ID!, $depth: Int, $asOf: DateTime, $types: [String!]) {
  neighbourhood(entityId: $id, depth: $depth, asOf: $asOf, relationshipTypes: $types) { ${SUBGRAPH} } }`;
const PATH = `query($from: ID!, $to: ID!, $max: Int) { shortestPath(fromEntityId: $from, toEntityId: $to, maxDepth: $max) { ${SUBGRAPH} } }`;
const CHANGES = `query($ns: String!, $since: DateTime!, $first: Int) { changes(namespace: $ns, since: $since, first: $first) { kind at fact { id statement namespace } } }`;

interface Step {
  via: string;
  distance: number;
  spanStart: number | null;
  spanEnd: number | null;
  quote: string | null;
  fact: { id: string; statement: string; namespace: string };
  event: { id: string; content: string; namespace: string };
}
interface Sub {
  root: { id: string; name: string } | null;
  entities: Array<{ id: string; name: string; namespace: string }>;
  relationships: Array<{ id: string; type: string; validFrom: string; validTo: string | null; source: { name: string }; target: { name: string } }>;
}

describe("Graph provenance: traversals through Neo4j, scoped to the start node's namespace", () => {
  let t: TestApp;
  let pg: Client;
  let token: string;
  const ns = uniqueNamespace('prov'); // the vim -> neovim classic
  const tech = uniqueNamespace('prov'); // a small entity graph
  const other = uniqueNamespace('prov-other'); // someone else's memory
  let startedAt: string;
  let vimEvent: string;
  let neovimEvent: string;
  let otherEvent: string;
  const ids: Record<string, string> = {}; // entity name -> id in `tech`

  const ingest = async (events: unknown[]): Promise<string[]> =>
    (await gqlOk<{ ingestEvents: Array<{ event: { id: string } }> }>(t.url, t.adminToken, INGEST, { input: events })).ingestEvents.map((e) => e.event.id);
  const settled = async (namespace: string) => {
    await eventually(
      async () => (await gqlOk<{ pipelineStatus: { pending: number } }>(t.url, t.adminToken, PENDING, { ns: namespace })).pipelineStatus.pending === 0,
      `derivation in ${namespace}`,
      60_000,
    );
    await eventually(
      async () => {
        const res = await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM ops.outbox WHERE processed_at IS NULL AND namespace = $1`, [namespace]);
        return res.rows[0]?.n === 0;
      },
      `the outbox of ${namespace} to drain`,
      30_000,
    );
  };
  const facts = async (namespace: string) =>
    (
      await gqlOk<{ facts: { edges: Array<{ node: { id: string; statement: string; validTo: string | null; supersededBy: { id: string } | null } }> } }>(
        t.url,
        t.adminToken,
        FACTS,
        { ns: namespace },
      )
    ).facts.edges.map((e) => e.node);
  const names = (s: Sub) => s.entities.map((e) => e.name).sort();
  const edges = (s: Sub) => s.relationships.map((r) => `${r.source.name} -${r.type}-> ${r.target.name}`).sort();

  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50', PROJECTOR_POLL_MS: '50' });
    pg = new Client({ connectionString: t.databaseUrl });
    await pg.connect();
    token = (await createToken(t, [{ namespacePattern: 'prov-*', capabilities: ['READ', 'LIST'] }])).token;
    startedAt = new Date(Date.now() - 1000).toISOString();

    [vimEvent] = (await ingest([anEvent(ns).inConversation('c1', 1).by('USER').saying('I use vim for everything').at('2026-01-10T09:00:00.000Z').build()])) as [
      string,
    ];
    await settled(ns);
    [neovimEvent] = (await ingest([
      anEvent(ns).inConversation('c1', 2).by('USER').saying('I switched to neovim last week').at('2026-03-08T09:00:00.000Z').build(),
    ])) as [string];
    [otherEvent] = (await ingest([
      anEvent(other).inConversation('o1', 1).by('USER').saying('I use emacs for everything').at('2026-03-10T09:00:00.000Z').build(),
    ])) as [string];
    await ingest([
      anEvent(tech).inConversation('t1', 1).by('USER').saying('We switched from MySQL to PostgreSQL.').at('2026-01-10T09:00:00.000Z').build(),
      anEvent(tech).inConversation('t1', 2).by('USER').saying('The database runs on AWS RDS now.').at('2026-02-10T09:00:00.000Z').build(),
      anEvent(tech).inConversation('t1', 3).by('USER').saying('I work on Orion, our analytics tool.').at('2026-03-10T09:00:00.000Z').build(),
      anEvent(tech).inConversation('t1', 4).by('USER').saying("It's built with React.").at('2026-03-11T09:00:00.000Z').build(),
    ]);
    for (const n of [ns, other, tech]) await settled(n);
    const ents = await gqlOk<{ entities: { edges: Array<{ node: { id: string; name: string } }> } }>(t.url, token, ENTITIES, { ns: tech });
    for (const e of ents.entities.edges) ids[e.node.name] = e.node.id;
  }, 180_000);
  afterAll(async () => {
    await pg?.end();
    await t?.stop();
  });

  it('provenance(neovim fact) reaches the vim event through SUPERSEDED, with its span and quote', async () => {
    const all = await facts(ns);
    const neovim = all.find((f) => /neovim/i.test(f.statement) && f.validTo === null);
    const vim = all.find((f) => f.supersededBy?.id === neovim?.id);
    expect(neovim && vim).toBeTruthy();
    const p = (await gqlOk<{ provenance: { fact: { id: string }; steps: Step[] } }>(t.url, token, PROVENANCE, { id: neovim?.id })).provenance;
    expect(p.fact.id).toBe(neovim?.id);
    const direct = p.steps.filter((s) => s.via === 'DIRECT');
    expect(direct).toEqual([
      expect.objectContaining({ distance: 0, fact: expect.objectContaining({ id: neovim?.id }), event: expect.objectContaining({ id: neovimEvent }) }),
    ]);
    expect(direct[0]?.quote).toBe('I switched to neovim last week'.slice(direct[0]?.spanStart ?? 0, direct[0]?.spanEnd ?? 0));
    const superseded = p.steps.filter((s) => s.via === 'SUPERSEDED');
    expect(superseded).toHaveLength(1);
    expect(superseded[0]).toMatchObject({ distance: 1, fact: { id: vim?.id }, event: { id: vimEvent, content: 'I use vim for everything' } });
    expect(superseded[0]?.quote).toBe('I use vim for everything');
    expect('I use vim for everything'.slice(superseded[0]?.spanStart ?? -1, superseded[0]?.spanEnd ?? -1)).toBe(superseded[0]?.quote);
    expect(p.steps.every((s) => s.fact.namespace === ns && s.event.namespace === ns)).toBe(true);

    // From the old fact, the newer one is SUPERSEDING.
    const back = (await gqlOk<{ provenance: { steps: Step[] } }>(t.url, token, PROVENANCE, { id: vim?.id })).provenance.steps;
    expect(back.map((s) => [s.via, s.event.id])).toEqual([
      ['DIRECT', vimEvent],
      ['SUPERSEDING', neovimEvent],
    ]);
  });

  it('derivedFrom(event) lists its facts with spans, their entities and its relationships', async () => {
    const d = (
      await gqlOk<{
        derivedFrom: {
          event: { id: string };
          facts: Array<{ quote: string; fact: { statement: string; namespace: string } }>;
          entities: Array<{ name: string; namespace: string }>;
          relationships: Array<{ type: string; source: { name: string }; target: { name: string } }>;
        };
      }>(t.url, token, DERIVED, { id: neovimEvent })
    ).derivedFrom;
    expect(d.event.id).toBe(neovimEvent);
    expect(d.facts.map((f) => f.fact.statement)).toEqual(['The user switched to Neovim in the week before 8 March 2026']);
    expect(d.facts[0]?.quote).toBe('I switched to neovim last week');
    expect(d.entities.map((e) => e.name).sort()).toEqual(['Neovim', 'the user']);
    expect(d.relationships.map((r) => `${r.source.name} -${r.type}-> ${r.target.name}`)).toEqual(['the user -uses-> Neovim']);
    expect([...d.facts.map((f) => f.fact.namespace), ...d.entities.map((e) => e.namespace)].every((n) => n === ns)).toBe(true);
  });

  it('neighbourhood follows RELATED edges by depth, type and validity at asOf', async () => {
    expect(Object.keys(ids)).toEqual(expect.arrayContaining(['PostgreSQL', 'Amazon RDS', 'Orion', 'React', 'the user']));
    const n = async (vars: Record<string, unknown>) =>
      (await gqlOk<{ neighbourhood: Sub }>(t.url, token, NEIGHBOURHOOD, { id: ids.PostgreSQL, ...vars })).neighbourhood;

    const one = await n({});
    expect(one.root?.name).toBe('PostgreSQL');
    expect(names(one)).toEqual(['Amazon RDS', 'PostgreSQL', 'the user']);
    expect(edges(one)).toEqual(['PostgreSQL -depends_on-> Amazon RDS', 'the user -uses-> PostgreSQL']);
    expect(names(await n({ depth: 2 }))).toEqual(['Amazon RDS', 'Orion', 'PostgreSQL', 'the user']);
    const three = await n({ depth: 3 });
    expect(names(three)).toEqual(['Amazon RDS', 'Orion', 'PostgreSQL', 'React', 'the user']);
    expect(edges(three)).toContain('Orion -uses-> React');
    expect(three.entities.every((e) => e.namespace === tech)).toBe(true);

    expect(names(await n({ depth: 3, types: ['uses'] }))).toEqual(['PostgreSQL', 'the user']);
    // On 2026-02-01 the RDS edge (from the 2026-02-10 event) and Orion (March) were not true yet.
    const feb = await n({ depth: 3, asOf: '2026-02-01T00:00:00.000Z' });
    expect(names(feb)).toEqual(['PostgreSQL', 'the user']);
    expect(feb.relationships.every((r) => Date.parse(r.validFrom) <= Date.parse('2026-02-01T00:00:00.000Z'))).toBe(true);
    expect(names(await n({ depth: 3, asOf: '2025-01-01T00:00:00.000Z' }))).toEqual(['PostgreSQL']);
  });

  it('refuses a depth above 3 or below 1 with a clear error', async () => {
    const tooDeep = await gql(t.url, token, NEIGHBOURHOOD, { id: ids.PostgreSQL, depth: 4 });
    expect(tooDeep.errors?.[0]?.extensions?.code).toBe('LIMIT_EXCEEDED');
    expect(tooDeep.errors?.[0]?.message).toMatch(/depth 4 is above the limit of 3/);
    const zero = await gql(t.url, token, NEIGHBOURHOOD, { id: ids.PostgreSQL, depth: 0 });
    expect(zero.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const longPath = await gql(t.url, token, PATH, { from: ids.PostgreSQL, to: ids.React, max: 99 });
    expect(longPath.errors?.[0]?.extensions?.code).toBe('LIMIT_EXCEEDED');
  });

  it('refuses a neighbourhood above the node cap instead of returning part of it', async () => {
    const small = new ProvenanceService(t.app.neo4j, new ChangeRepository(t.app.ds), t.app.services.facts, {
      ...provenanceLimits(t.app.config.limits),
      maxSubgraphNodes: 3,
    });
    const auth = await t.app.services.tokens.authenticate(`Bearer ${token}`);
    const loaders = createLoaders(t.app.services);
    expect((await small.neighbourhood(auth, loaders, ids.PostgreSQL as string, 1, {})).entities).toHaveLength(3);
    await expect(small.neighbourhood(auth, loaders, ids.PostgreSQL as string, 2, {})).rejects.toMatchObject({
      code: GraphExceptionCode.SUBGRAPH_TOO_LARGE,
      message: expect.stringMatching(/more than 3 entities/),
    });
  });

  it('shortestPath finds the chain in path order, or null when it is longer than maxDepth', async () => {
    const p = (await gqlOk<{ shortestPath: Sub | null }>(t.url, token, PATH, { from: ids['Amazon RDS'], to: ids.React })).shortestPath;
    expect(p?.entities.map((e) => e.name)).toEqual(['Amazon RDS', 'PostgreSQL', 'the user', 'Orion', 'React']);
    expect(p?.relationships.map((r) => r.type)).toEqual(['depends_on', 'uses', 'works_on', 'uses']);
    expect((await gqlOk<{ shortestPath: Sub | null }>(t.url, token, PATH, { from: ids['Amazon RDS'], to: ids.React, max: 3 })).shortestPath).toBeNull();
    const self = (await gqlOk<{ shortestPath: Sub | null }>(t.url, token, PATH, { from: ids.Orion, to: ids.Orion })).shortestPath;
    expect(self?.entities.map((e) => e.name)).toEqual(['Orion']);
  });

  it('changes(since) lists ADDED and SUPERSEDED facts of the namespace, oldest first', async () => {
    const all = (
      await gqlOk<{ changes: Array<{ kind: string; at: string; fact: { id: string; statement: string; namespace: string } }> }>(t.url, token, CHANGES, {
        ns,
        since: startedAt,
      })
    ).changes;
    const kinds = all.map((c) => `${c.kind} ${c.fact.statement}`);
    expect(kinds).toEqual(
      expect.arrayContaining(['ADDED The user uses Vim', 'ADDED The user switched to Neovim in the week before 8 March 2026', 'SUPERSEDED The user uses Vim']),
    );
    expect(all.every((c) => c.fact.namespace === ns)).toBe(true);
    const times = all.map((c) => Date.parse(c.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(kinds.indexOf('SUPERSEDED The user uses Vim')).toBeGreaterThan(kinds.indexOf('ADDED The user uses Vim'));
    const [firstOnly] = [(await gqlOk<{ changes: unknown[] }>(t.url, token, CHANGES, { ns, since: startedAt, first: 1 })).changes];
    expect(firstOnly).toHaveLength(1);
    expect((await gqlOk<{ changes: unknown[] }>(t.url, token, CHANGES, { ns, since: new Date(Date.now() + 60_000).toISOString() })).changes).toEqual([]);
    expect((await gql(t.url, token, CHANGES, { ns, since: startedAt, first: 0 })).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('gives a token without "read" on the namespace (search-only, ingest-only) no provenance and no derivation of its own facts and events', async () => {
    const searchOnly = (await createToken(t, [{ namespacePattern: ns, capabilities: ['SEARCH', 'LIST'] }], 'search-only')).token;
    const ingestOnly = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST'] }], 'ingest-only')).token;
    const own = (await facts(ns))[0];
    expect(own).toBeDefined();
    // The reader with "read" sees both: the refusals below are about capability, not absence.
    expect((await gqlOk<{ provenance: { fact: unknown } }>(t.url, token, PROVENANCE, { id: own?.id })).provenance.fact).not.toBeNull();
    expect((await gqlOk<{ derivedFrom: { event: unknown } }>(t.url, token, DERIVED, { id: vimEvent })).derivedFrom.event).not.toBeNull();
    for (const narrow of [searchOnly, ingestOnly]) {
      expect((await gqlOk<{ provenance: unknown }>(t.url, narrow, PROVENANCE, { id: own?.id })).provenance).toEqual({ fact: null, steps: [] });
      expect((await gqlOk<{ derivedFrom: unknown }>(t.url, narrow, DERIVED, { id: vimEvent })).derivedFrom).toEqual({
        event: null,
        facts: [],
        entities: [],
        relationships: [],
      });
    }
  });

  it('keeps namespaces apart: foreign ids look missing, traversals never return foreign nodes', async () => {
    const narrow = (await createToken(t, [{ namespacePattern: ns, capabilities: ['READ', 'LIST'] }], 'narrow')).token;
    const otherFact = (await facts(other))[0];
    expect(otherFact).toBeDefined();

    // Another namespace's ids give exactly what a missing id gives.
    for (const id of [otherFact?.id, '00000000-0000-0000-0000-000000000000']) {
      expect((await gqlOk<{ provenance: unknown }>(t.url, narrow, PROVENANCE, { id })).provenance).toEqual({ fact: null, steps: [] });
    }
    for (const id of [otherEvent, '00000000-0000-0000-0000-000000000000']) {
      expect((await gqlOk<{ derivedFrom: unknown }>(t.url, narrow, DERIVED, { id })).derivedFrom).toEqual({
        event: null,
        facts: [],
        entities: [],
        relationships: [],
      });
    }
    for (const id of [ids.PostgreSQL, '00000000-0000-0000-0000-000000000000']) {
      expect((await gqlOk<{ neighbourhood: unknown }>(t.url, narrow, NEIGHBOURHOOD, { id, depth: 3 })).neighbourhood).toEqual({
        root: null,
        entities: [],
        relationships: [],
      });
    }
    expect((await gqlOk<{ shortestPath: unknown }>(t.url, narrow, PATH, { from: ids.PostgreSQL, to: ids.React })).shortestPath).toBeNull();
    expect((await gql(t.url, narrow, CHANGES, { ns: tech, since: startedAt })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await gql(t.url, undefined, PROVENANCE, { id: otherFact?.id })).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');

    // Two namespaces the caller can read: a path between them does not exist, even where a
    // foreign edge would connect them.
    const userInNs = (await gqlOk<{ entities: { edges: Array<{ node: { id: string; name: string } }> } }>(t.url, token, ENTITIES, { ns })).entities.edges.find(
      (e) => e.node.name === 'the user',
    )?.node.id;
    expect((await gqlOk<{ shortestPath: unknown }>(t.url, token, PATH, { from: userInNs, to: ids.React })).shortestPath).toBeNull();
    await t.app.neo4j.executeQuery(
      `MATCH (a:Entity {id: $a}), (b:Entity {id: $b}) CREATE (a)-[:RELATED {id: 'planted-cross-edge', type: 'knows', namespace: $other, validFrom: datetime('2020-01-01T00:00:00Z'), sources: []}]->(b)`,
      { a: userInNs, b: ids['the user'], other: tech },
    );
    try {
      const around = (await gqlOk<{ neighbourhood: Sub }>(t.url, token, NEIGHBOURHOOD, { id: userInNs, depth: 3 })).neighbourhood;
      expect(around.entities.every((e) => e.namespace === ns)).toBe(true);
      expect(around.relationships.map((r) => r.id)).not.toContain('planted-cross-edge');
      const fromTech = (await gqlOk<{ neighbourhood: Sub }>(t.url, token, NEIGHBOURHOOD, { id: ids['the user'], depth: 3 })).neighbourhood;
      expect(fromTech.entities.every((e) => e.namespace === tech)).toBe(true);
      expect((await gqlOk<{ shortestPath: unknown }>(t.url, token, PATH, { from: userInNs, to: ids.React })).shortestPath).toBeNull();
      const prov = (await gqlOk<{ provenance: { steps: Step[] } }>(t.url, token, PROVENANCE, { id: otherFact?.id })).provenance.steps;
      expect(prov.every((s) => s.fact.namespace === other && s.event.namespace === other)).toBe(true);
    } finally {
      await t.app.neo4j.executeQuery(`MATCH ()-[x:RELATED {id: 'planted-cross-edge'}]->() DELETE x`);
    }
  });
});
