import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { dataOf, errorOf, mcpClient, textOf } from '../support/mcp-client';
import { countNeo4jRoundTrips } from '../support/neo4j-round-trips';
import { seedSilver, SeededSilver } from '../support/silver-seed';
import { uniqueNamespace } from '../support/stores';
import { createToken, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';
import { outboxDrained, runPromotion } from '../support/gold';

const ABOUT = `query($ns: String!, $name: String!, $asOf: DateTime) { about(namespace: $ns, name: $name, asOf: $asOf) {
  id name type aliases mergedFrom { id name }
  facts { id statement confidence validFrom validTo sources { quote event { id } } } } }`;

interface AboutFact {
  id: string;
  statement: string;
  confidence: number;
  validFrom: string;
  validTo: string | null;
  sources: Array<{ quote: string | null; event: { id: string } }>;
}
interface About {
  id: string;
  name: string;
  type: string;
  aliases: string[];
  mergedFrom: Array<{ id: string; name: string }>;
  facts: AboutFact[];
}

const people = () => ({
  entities: [
    { key: 'bob', name: 'Bob', type: 'person' },
    { key: 'bobSmith', name: 'Bob Smith', type: 'person' },
    // The fallback type: an extractor that did not know what "bob" is.
    { key: 'lower', name: 'bob', type: 'concept' },
    { key: 'acme', name: 'Acme Corp', type: 'organization', aliases: ['ACME'] },
  ],
  mentions: [
    { entity: 'bob', conversation: 'c1' },
    { entity: 'bob', conversation: 'c2' },
    { entity: 'bobSmith', conversation: 'c1' },
    { entity: 'lower', conversation: 'c2' },
    { entity: 'acme', conversation: 'c1' },
    { entity: 'acme', conversation: 'c3' },
  ],
});

describe('about: "what do I know about X?" over Gold', () => {
  let t: TestApp;
  let db: Client;
  const ns = uniqueNamespace('about');
  const other = uniqueNamespace('about-other');
  let seeded: SeededSilver;
  /** The superseded fact (true 2020–2021) and the one that replaced it. */
  const oldFact = randomUUID();
  const newFact = randomUUID();
  let reader: string;

  const promoteAndWait = async (namespace: string) => expect((await runPromotion(t, namespace)).status).toBe('succeeded');
  const settled = (namespace: string) => outboxDrained(db, namespace);
  const about = async (name: string, asOf: string | null = null, token = reader) =>
    (await gqlOk<{ about: About | null }>(t.url, token, ABOUT, { ns, name, asOf })).about;

  beforeAll(async () => {
    t = await startTestApp(
      { OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50', GOLD_PROMOTE_EVERY_SECONDS: '0' },
      // A text view (where overlays plug in): fact text reaches callers through the FactReader.
      {
        api: true,
        worker: true,
        factTextView: (text, site) => (site.field === 'statement' && text.includes('Globex') ? text.replace('Globex', '[shown]') : text),
      },
    );
    db = new Client({ connectionString: t.databaseUrl });
    await db.connect();
    seeded = await seedSilver(t, ns, people());
    // A fact about "Bob Smith" true from 2020 to 2021, superseded by one about "Bob" from 2021 on.
    await db.query('BEGIN');
    const run = (await db.query(`SELECT derivation_run_id::text AS id FROM silver.entities WHERE id = $1`, [seeded.ids.bob])).rows[0].id;
    for (const [id, entity, statement, from, to, confidence] of [
      [newFact, seeded.ids.bob, 'Bob works at Initech', '2021-01-01T00:00:00Z', null, 0.95],
      [oldFact, seeded.ids.bobSmith, 'Bob Smith works at Globex', '2020-01-01T00:00:00Z', '2021-01-01T00:00:00Z', 0.8],
    ] as const) {
      await db.query(
        `INSERT INTO silver.facts (id, namespace, statement, fact_type, subject_entity_id, confidence, importance, valid_from, valid_to, extraction_model, derivation_run_id)
         VALUES ($1, $2, $3, 'attribute', $4, $5, 0.5, $6, $7, 'seed', $8)`,
        [id, ns, statement, entity, confidence, from, to, run],
      );
      await db.query(`INSERT INTO silver.fact_sources (fact_id, event_id, span_start, span_end, quote) VALUES ($1, $2, 0, 2, 'ok')`, [id, seeded.eventIds[0]]);
      await db.query(`INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload) VALUES ($1, 'fact', $2, 'upsert', $3)`, [ns, id, { id }]);
    }
    await db.query(`UPDATE silver.facts SET superseded_by = $1 WHERE id = $2`, [newFact, oldFact]);
    await db.query('COMMIT');
    // Another namespace with its own people; "Carol" exists only there.
    await seedSilver(t, other, {
      entities: [...people().entities, { key: 'carol', name: 'Carol', type: 'person' }],
      mentions: [...people().mentions, { entity: 'carol', conversation: 'c1' }, { entity: 'carol', conversation: 'c2' }],
    });
    await promoteAndWait(ns);
    await promoteAndWait(other);
    await settled(ns);
    await settled(other);
    reader = (await createToken(t, [{ namespacePattern: ns, capabilities: ['READ'] }], 'about-reader')).token;
  }, 240_000);
  afterAll(async () => {
    await db?.end();
    await t?.stop();
  });

  it('finds the same Gold entity by its name, an alias and a merged member name, with the facts of all three members', async () => {
    const bySmith = await about('Bob Smith');
    const byLower = await about('bob');
    const byBob = await about('Bob');
    const byCase = await about('  BOB   smith ');
    expect(bySmith).not.toBeNull();
    for (const x of [byLower, byBob, byCase]) expect(x?.id).toBe(bySmith?.id);
    const g = bySmith as About;
    expect(g.type).toBe('person');
    expect(g.mergedFrom.map((m) => m.id).sort()).toEqual([seeded.ids.bob, seeded.ids.bobSmith, seeded.ids.lower].sort());
    // Facts from all three members: two about "Bob", one about "Bob Smith", one about "bob", and the current Initech fact.
    const statements = g.facts.map((f) => f.statement);
    expect(statements.sort()).toEqual([
      'Bob works at Initech',
      'statement 0 about bob',
      'statement 1 about bob',
      'statement 2 about bobSmith',
      'statement 3 about lower',
    ]);
    // Ordered by confidence, then recency.
    expect(g.facts[0]?.statement).toBe('Bob works at Initech');
    const confidences = g.facts.map((f) => f.confidence);
    expect([...confidences].sort((a, b) => b - a)).toEqual(confidences);
    // Each fact carries its provenance.
    for (const f of g.facts) expect(f.sources.map((s) => s.event.id).every((id) => seeded.eventIds.includes(id))).toBe(true);
    expect(g.facts.every((f) => f.sources.length > 0)).toBe(true);
  });

  it('leaves the superseded fact out now and shows it as of a time it held', async () => {
    const now = await about('Bob');
    expect(now?.facts.map((f) => f.id)).not.toContain(oldFact);
    const then = await about('Bob', '2020-06-01T00:00:00Z');
    expect(then?.facts.map((f) => f.id)).toEqual([oldFact]);
    // The statement as the FactReader's text view shows it, not the stored one.
    expect(then?.facts[0]).toMatchObject({ statement: 'Bob Smith works at [shown]', validTo: '2021-01-01T00:00:00.000Z' });
    // The field's own asOf wins over about's.
    const nested = await gqlOk<{ about: { facts: Array<{ id: string }> } }>(
      t.url,
      reader,
      `query($ns: String!) { about(namespace: $ns, name: "Bob", asOf: "2020-06-01T00:00:00Z") { facts(asOf: "2021-06-01T00:00:00Z") { id } } }`,
      { ns },
    );
    expect(nested.about.facts.map((f) => f.id)).toEqual([newFact]);
  });

  it('finds an alias of a member, and falls back to a similar name; an unknown name is null', async () => {
    expect((await about('ACME'))?.name).toBe('Acme Corp');
    expect((await about('Acme Corporation'))?.name).toBe('Acme Corp');
    expect(await about('Zebediah Quarnstrom')).toBeNull();
  });

  it('ranks an exact alias above a merely similar name (whatever the similarity and confidence), and an exact name first', async () => {
    const ranked = uniqueNamespace('about-rank');
    await seedSilver(t, ranked, {
      entities: [
        // "initech" is 0.62 trigram-similar to "initech corp": a trigram match, ranked below an exact alias.
        { key: 'org', name: 'Initech Corp', type: 'organization' },
        // A person nicknamed "Initech".
        { key: 'ian', name: 'Ian Tech', type: 'person', aliases: ['Initech'] },
      ],
      mentions: [
        { entity: 'org', conversation: 'c1', confidence: 0.99 },
        { entity: 'org', conversation: 'c2', confidence: 0.99 },
        { entity: 'org', conversation: 'c3', confidence: 0.99 },
        { entity: 'ian', conversation: 'c4', confidence: 0.75 },
        { entity: 'ian', conversation: 'c5', confidence: 0.75 },
      ],
    });
    await promoteAndWait(ranked);
    const ask = async (name: string) => (await gqlOk<{ about: About | null }>(t.url, t.adminToken, ABOUT, { ns: ranked, name, asOf: null })).about;
    expect((await ask('Initech'))?.type).toBe('person');
    expect((await ask('Initech Corp'))?.type).toBe('organization');
    expect((await ask('INITECH   corp'))?.type).toBe('organization');
    expect((await ask('ian  tech'))?.type).toBe('person');
    // A misspelling falls back to the similar name.
    expect((await ask('Initech Crop'))?.type).toBe('organization');
  });

  it('keeps namespaces apart: another namespace is FORBIDDEN, a name known only elsewhere is null', async () => {
    const r = await gql(t.url, reader, ABOUT, { ns: other, name: 'Bob', asOf: null });
    expect(r.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(r.errors?.[0]?.message).toMatch(/read/);
    expect(await about('Carol')).toBeNull();
    // The Bob of the other namespace is another entity; ours never shows its facts.
    const theirs = await gqlOk<{ about: About }>(t.url, t.adminToken, ABOUT, { ns: other, name: 'Bob', asOf: null });
    const ours = await about('Bob');
    expect(theirs.about.id).not.toBe(ours?.id);
    expect(ours?.facts.map((f) => f.id)).not.toEqual(expect.arrayContaining(theirs.about.facts.map((f) => f.id).slice(0, 1)));
    const bad = await gql(t.url, reader, ABOUT, { ns, name: '  ?! ', asOf: null });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('answers the MCP about tool with entity, merged names and top facts with their events; refused without "read"', async () => {
    const client = await mcpClient(t.url, reader);
    try {
      const r = await client.callTool({ name: 'about', arguments: { namespace: ns, name: 'bob' } });
      const data = dataOf<{
        entity: { id: string; name: string; aliases: string[]; mergedFrom: string[] } | null;
        facts: Array<{ id: string; statement: string; validFrom: string; confidence: number; sourceEventIds: string[] }>;
      }>(r);
      const g = await about('bob');
      expect(data.entity?.id).toBe(g?.id);
      expect(data.entity?.mergedFrom.sort()).toEqual(['Bob', 'Bob Smith', 'bob']);
      expect(data.facts.map((f) => f.id)).toEqual(g?.facts.map((f) => f.id));
      expect(data.facts[0]).toMatchObject({ id: newFact, statement: 'Bob works at Initech', validFrom: '2021-01-01T00:00:00.000Z', confidence: 0.95 });
      expect(data.facts.every((f) => f.sourceEventIds.length > 0 && f.sourceEventIds.every((id) => seeded.eventIds.includes(id)))).toBe(true);
      expect(textOf(r)).toMatch(/Bob works at Initech/);
      const then = dataOf<{ facts: Array<{ id: string; statement: string }> }>(
        await client.callTool({ name: 'about', arguments: { namespace: ns, name: 'Bob Smith', asOf: '2020-06-01T00:00:00Z' } }),
      );
      expect(then.facts.map((f) => [f.id, f.statement])).toEqual([[oldFact, 'Bob Smith works at [shown]']]);
      const none = dataOf<{ entity: unknown }>(await client.callTool({ name: 'about', arguments: { namespace: ns, name: 'Carol' } }));
      expect(none.entity).toBeNull();
      expect(errorOf(await client.callTool({ name: 'about', arguments: { namespace: ns, name: '' } })).code).toBe('BAD_USER_INPUT');
    } finally {
      await client.close();
    }
    const lister = (await createToken(t, [{ namespacePattern: ns, capabilities: ['LIST', 'SEARCH', 'INGEST'] }], 'no-read')).token;
    const refused = await mcpClient(t.url, lister);
    try {
      // One error model on every transport: a missing capability is a FORBIDDEN tool error naming it.
      const err = errorOf(await refused.callTool({ name: 'about', arguments: { namespace: ns, name: 'Bob' } }));
      expect(err.code).toBe('FORBIDDEN');
      expect(err.message).toContain('"read"');
    } finally {
      await refused.close();
    }
  });

  it('re-checks the facts of the graph in Postgres: a fact retired there and not yet projected is left out', async () => {
    const before = await about('Bob');
    const victim = before?.facts.find((f) => f.statement === 'statement 3 about lower');
    expect(victim).toBeDefined();
    // Retired in Postgres with no outbox row: the graph still holds it as current.
    await db.query(`UPDATE silver.facts SET retired_at = now() WHERE id = $1`, [victim?.id]);
    const [node] = (await t.app.neo4j.executeQuery(`MATCH (f:Fact {id: $id}) RETURN f.retiredAt IS NULL AS live`, { id: victim?.id })).records;
    expect(node?.get('live')).toBe(true);
    const after = await about('Bob');
    expect(after?.facts.map((f) => f.id)).toEqual(before?.facts.map((f) => f.id).filter((id) => id !== victim?.id));
  });

  it('does not answer with a retired Gold entity', async () => {
    const carol = await gqlOk<{ about: About | null }>(t.url, t.adminToken, ABOUT, { ns: other, name: 'Carol', asOf: null });
    expect(carol.about?.name).toBe('Carol');
    await db.query(`UPDATE gold.entities SET retired_at = now(), retired_reason = 'test' WHERE id = $1`, [carol.about?.id]);
    expect((await gqlOk<{ about: About | null }>(t.url, t.adminToken, ABOUT, { ns: other, name: 'Carol', asOf: null })).about).toBeNull();
  });

  // Last: stops the background loops so that only the request's own round trips are counted.
  it('costs the same Neo4j and SQL round trips for one entity and for several, with their facts', async () => {
    await t.app.stages.stop();
    const { counter, restore } = countNeo4jRoundTrips(t.app.neo4j);
    try {
      const names = ['Bob', 'Acme Corp', 'Bob Smith', 'ACME', 'Nobody Here'];
      const query = (n: number) =>
        `query($ns: String!) { ${names
          .slice(0, n)
          .map(
            (name, i) =>
              `a${i}: about(namespace: $ns, name: ${JSON.stringify(name)}) { id mergedFrom { name } facts { id statement sources { event { id } } } relationships { id } }`,
          )
          .join(' ')} }`;
      const measure = async (n: number) => {
        t.app.queryCounter.reset();
        counter.reset();
        const data = await gqlOk<Record<string, About | null>>(t.url, reader, query(n), { ns });
        return { data, sql: t.app.queryCounter.count, tx: counter.transactions, statements: counter.statements };
      };
      const one = await measure(1);
      const several = await measure(names.length);
      expect(one.data.a0?.facts.length).toBeGreaterThan(0);
      expect(Object.values(several.data).filter((x) => x !== null)).toHaveLength(4);
      expect(Object.values(several.data).reduce((n, x) => n + (x?.facts.length ?? 0), 0)).toBeGreaterThan(one.data.a0?.facts.length ?? 0);
      expect(one.tx).toBe(1);
      expect(one.statements).toBe(1);
      expect(several.tx).toBe(one.tx);
      expect(several.statements).toBe(one.statements);
      // The token, the name lookup, the members, the Gold relationships, the facts stated where
      // an event names a member (silver.entity_mentions), the facts and their overlays, the facts
      // superseded at Gold (docs/gold-review.md), their sources and the redactions on their quotes
      // (the FactReader applies both), their events, and the namespace's active event redactions for
      // the names it hides (silver/hidden-names.ts; read twice, for the names and for the relationships).
      expect(one.sql).toBe(13);
      expect(several.sql).toBe(one.sql);
    } finally {
      restore();
    }
  });
});
