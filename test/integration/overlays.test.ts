import { Client } from 'pg';
import { CHANNELS } from '../../src/platform/pubsub/topics';
import { loadEmbedder } from '../../src/app/models';
import { anEvent } from '../builders/event-input';
import { dataOf, mcpClient } from '../support/mcp-client';
import { OpenAIStubServer, startOpenAIStubServer } from '../support/openai-stub-server';
import { scriptedStatementsModel } from '../support/scripted-models';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';
import { collect, wsClient } from '../support/ws-client';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { event { id } } }`;
const ADD = `mutation($input: OverlayInput!) { addOverlay(input: $input) { id kind status author version selector { exact prefix suffix start end } textHash } }`;

/**
 * Human overlays against the real stores: an EDIT wins on every read path, a redaction hides the
 * words from search and Neo4j, event redactions hide content from non-admins while Bronze keeps
 * the bytes, namespaces and capabilities fence every query, mutation and field, and another
 * principal's overlay needs an approval.
 */
describe('overlays: humans win on read', () => {
  let t: TestApp;
  let stub: OpenAIStubServer;
  let pg: Client;
  const ns = uniqueNamespace('overlay');
  const other = uniqueNamespace('overlay-other');
  const script: Record<string, string[]> = {
    'I moved to Lisbon in March': ['The user moved to Lisbon in March'],
    'I drink green tea every morning': ['The user drinks green tea every morning'],
    'My neighbour is called Ada': ['The user has a neighbour called Ada'],
    'My pin is 4711, keep it safe': ['The user keeps a pin'],
  };
  const eventIds: Record<string, string> = {};

  const settled = async (namespace: string) => {
    await eventually(
      async () =>
        (
          await gqlOk<{ pipelineStatus: { pending: number } }>(t.url, t.adminToken, `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`, {
            ns: namespace,
          })
        ).pipelineStatus.pending === 0,
      'derivation',
      60_000,
    );
    await eventually(
      async () => (await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM ops.outbox WHERE processed_at IS NULL`)).rows[0]?.n === 0,
      'projection',
      30_000,
    );
  };
  const factId = async (namespace: string, statement: string): Promise<string> => {
    const r = await gqlOk<{ facts: { edges: Array<{ node: { id: string; machineStatement: string } }> } }>(
      t.url,
      t.adminToken,
      `query($ns: String!) { facts(namespace: $ns) { edges { node { id machineStatement } } } }`,
      { ns: namespace },
    );
    const f = r.facts.edges.find((e) => e.node.machineStatement === statement);
    if (!f) throw new Error(`no fact "${statement}" in ${namespace}: ${JSON.stringify(r)}`);
    return f.node.id;
  };

  beforeAll(async () => {
    stub = await startOpenAIStubServer({ handler: scriptedStatementsModel(() => script) });
    t = await startTestApp(
      {
        OPENAI_BASE_URL: stub.baseUrl,
        OPENAI_API_KEY: 'stub',
        EXTRACTION_MODEL: 'stub',
        OFFLINE_EMBEDDER: 'hashing',
        DERIVE_MAX_WAIT_MS: '0',
        DERIVE_POLL_MS: '50',
        EXPLORE_TIMEOUT_MS: '120000',
      },
      { api: true, worker: true },
    );
    pg = new Client({ connectionString: t.databaseUrl });
    await pg.connect();
    for (const [namespace, contents] of [
      [ns, Object.keys(script)],
      [other, ['I drink green tea every morning']],
    ] as const) {
      const r = await gqlOk<{ ingestEvents: Array<{ event: { id: string } }> }>(t.url, t.adminToken, INGEST, {
        input: contents.map((c, i) =>
          anEvent(namespace)
            .inConversation('c1', i + 1)
            .by('USER')
            .saying(c)
            .build(),
        ),
      });
      if (namespace === ns) contents.forEach((c, i) => (eventIds[c] = r.ingestEvents[i]?.event.id as string));
      await settled(namespace);
    }
  }, 240_000);
  afterAll(async () => {
    await pg?.end();
    await t?.stop();
    await stub?.close();
  });

  it('an EDIT wins on every read path: fact, facts, searchMemory, provenance, derivedFrom, subscription, graph exploration, MCP get_fact', async () => {
    const id = await factId(ns, 'The user drinks green tea every morning');
    const ws = wsClient(t.url, t.adminToken);
    const added = collect<{ factAdded: { id: string; statement: string } }>(ws, `subscription($ns: String!) { factAdded(namespace: $ns) { id statement } }`, {
      ns,
    });
    await added.ready;
    try {
      const edit = (
        await gqlOk<{ addOverlay: { id: string; status: string; version: number } }>(t.url, t.adminToken, ADD, {
          input: { factId: id, kind: 'EDIT', exact: 'green tea', body: 'black coffee', reason: 'the user corrected it' },
        })
      ).addOverlay;
      expect(edit).toMatchObject({ status: 'ANCHORED', version: 1 });
      await settled(ns);
      const edited = 'The user drinks black coffee every morning';
      const texts: string[] = [];

      const one = await gqlOk<{ fact: { statement: string; machineStatement: string; overlays: Array<{ id: string; body: string }> } }>(
        t.url,
        t.adminToken,
        `query($id: ID!) { fact(id: $id) { statement machineStatement overlays { id body } } }`,
        { id },
      );
      expect(one.fact).toEqual({
        statement: edited,
        machineStatement: 'The user drinks green tea every morning',
        overlays: [{ id: edit.id, body: 'black coffee' }],
      });
      const listed = await gqlOk<{ facts: { edges: Array<{ node: { id: string; statement: string } }> } }>(
        t.url,
        t.adminToken,
        `query($ns: String!) { facts(namespace: $ns) { edges { node { id statement } } } }`,
        { ns },
      );
      texts.push(...listed.facts.edges.filter((e) => e.node.id === id).map((e) => e.node.statement));
      const searched = await gqlOk<{ searchMemory: Array<{ fact: { id: string; statement: string } | null }> }>(
        t.url,
        t.adminToken,
        `query($ns: String!) { searchMemory(namespace: $ns, query: "black coffee morning") { fact { id statement } } }`,
        { ns },
      );
      texts.push(...searched.searchMemory.filter((h) => h.fact?.id === id).map((h) => h.fact?.statement as string));
      const prov = await gqlOk<{ provenance: { fact: { statement: string } }; derivedFrom: { facts: Array<{ fact: { id: string; statement: string } }> } }>(
        t.url,
        t.adminToken,
        `query($id: ID!, $e: ID!) { provenance(factId: $id) { fact { statement } } derivedFrom(eventId: $e) { facts { fact { id statement } } } }`,
        { id, e: eventIds['I drink green tea every morning'] },
      );
      texts.push(prov.provenance.fact.statement, ...prov.derivedFrom.facts.filter((f) => f.fact.id === id).map((f) => f.fact.statement));
      // Graph exploration filters on Neo4j's copy: the composed text is what is there.
      const explored = await gqlOk<{ coffee: Array<{ statement: string }>; tea: Array<{ statement: string }> }>(
        t.url,
        t.adminToken,
        `query($ns: String!) { coffee: graphFacts(where: { namespace: { eq: $ns }, statement: { contains: "black coffee" } }) { statement }
           tea: graphFacts(where: { namespace: { eq: $ns }, statement: { contains: "green tea" } }) { statement } }`,
        { ns },
      );
      expect(explored.tea).toEqual([]);
      texts.push(...explored.coffee.map((f) => f.statement));
      // MCP get_fact.
      const mcp = await mcpClient(t.url, t.adminToken);
      try {
        texts.push(dataOf<{ fact: { statement: string } }>(await mcp.callTool({ name: 'get_fact', arguments: { id } })).fact.statement);
      } finally {
        await mcp.close();
      }
      // Subscription: a factAdded notification for the fact (as a write sends it) is delivered with the text read fresh.
      await pg.query(`SELECT pg_notify($1, $2)`, [CHANNELS.facts, JSON.stringify({ namespace: ns, added: [id], superseded: [] })]);
      await eventually(async () => added.received.next.length > 0, 'factAdded');
      const delivered = added.received.next.map((m) => m.factAdded).filter((f) => f.id === id);
      texts.push(...delivered.map((f) => f.statement));

      expect(texts.length).toBeGreaterThanOrEqual(7);
      expect(texts.filter((s) => s !== edited)).toEqual([]);
    } finally {
      added.stop();
      await ws.dispose();
    }
  }, 120_000);

  it('a redacted word is found by the keyword channel before and not after; Neo4j holds the composed text and its embedding (what the vector channel compares)', async () => {
    const id = await factId(ns, 'The user moved to Lisbon in March');
    const eventId = eventIds['I moved to Lisbon in March'] as string;
    const find = async () =>
      (
        await gqlOk<{ searchMemory: Array<{ kind: string; channels: string[]; fact: { id: string } | null; event: { id: string } | null }> }>(
          t.url,
          t.adminToken,
          `query($ns: String!) { searchMemory(namespace: $ns, query: "Lisbon", limit: 20) { kind channels fact { id } event { id } } }`,
          { ns },
        )
      ).searchMemory.filter((h) => h.fact?.id === id || h.event?.id === eventId);
    const before = await find();
    expect(before.flatMap((h) => h.channels)).toEqual(expect.arrayContaining(['keyword']));
    const node = async () =>
      (await t.app.neo4j.executeQuery(`MATCH (f:Fact {id: $id}) RETURN f.statement AS s, f.embedding AS e`, { id })).records[0]?.toObject() as {
        s: string;
        e: number[];
      };
    const vectorBefore = (await node()).e;

    await gqlOk(t.url, t.adminToken, ADD, { input: { factId: id, kind: 'REDACTION', exact: 'Lisbon', reason: 'forget where I live' } });
    await gqlOk(t.url, t.adminToken, ADD, { input: { eventId, kind: 'REDACTION', exact: 'Lisbon', reason: 'forget where I live' } });
    await settled(ns);

    const after = await find();
    expect(after.flatMap((h) => h.channels).filter((c) => c === 'keyword' || c === 'event_keyword')).toEqual([]);
    const projected = await node();
    expect(projected.s).toBe('The user moved to [redacted] in March');
    // The vector channel compares against the composed text's embedding, not the Silver one.
    const silverVector = (await pg.query<{ v: number[] }>(`SELECT embedding::float8[] AS v FROM silver.facts WHERE id = $1`, [id])).rows[0]?.v as number[];
    expect(vectorBefore.map((x) => Math.fround(x))).toEqual(silverVector.map((x) => Math.fround(x)));
    expect(projected.e).not.toEqual(vectorBefore);
    const embedder = await loadEmbedder(t.app.config, () => undefined);
    const [composedVector] = await embedder.embed(['The user moved to [redacted] in March']).finally(() => embedder.close?.());
    expect(projected.e.map((x) => Math.fround(x))).toEqual((composedVector as number[]).map((x) => Math.fround(x)));
    const eventNode = (await t.app.neo4j.executeQuery(`MATCH (e:Event {id: $id}) RETURN e.content AS c`, { id: eventId })).records[0]?.get('c');
    expect(eventNode).toBe('I moved to [redacted] in March');
    // Every read path shows the placeholder.
    const read = await gqlOk<{ fact: { statement: string } }>(t.url, t.adminToken, `query($id: ID!) { fact(id: $id) { statement } }`, { id });
    expect(read.fact.statement).toBe('The user moved to [redacted] in March');
  }, 120_000);

  it('an event redaction hides the span from Event.content and quotes for non-admins; admin sees it; Bronze keeps the bytes', async () => {
    const eventId = eventIds['My pin is 4711, keep it safe'] as string;
    const bronzeBefore = (await pg.query(`SELECT content, checksum FROM bronze.events WHERE id = $1`, [eventId])).rows[0];
    const reader = (await createToken(t, [{ namespacePattern: ns, capabilities: ['READ', 'LIST', 'SEARCH'] }], 'reader')).token;
    await gqlOk(t.url, t.adminToken, ADD, { input: { eventId, kind: 'REDACTION', exact: '4711' } });
    await settled(ns);
    const q = `query($e: ID!) { event(id: $e) { content facts { sources { quote } } } }`;
    const asReader = await gqlOk<{ event: { content: string; facts: Array<{ sources: Array<{ quote: string }> }> } }>(t.url, reader, q, { e: eventId });
    expect(asReader.event.content).toBe('My pin is [redacted], keep it safe');
    expect(asReader.event.facts.flatMap((f) => f.sources.map((x) => x.quote))).toEqual(['My pin is [redacted], keep it safe']);
    // Neo4j's copies (event content, the quote on DERIVED_FROM) are the redacted ones, so neither search nor `where` matches the digits.
    const projected = await t.app.neo4j.executeQuery(`MATCH (f:Fact)-[d:DERIVED_FROM]->(e:Event {id: $id}) RETURN e.content AS c, d.quote AS q`, {
      id: eventId,
    });
    expect(projected.records.map((r) => [r.get('c'), r.get('q')])).toEqual([['My pin is [redacted], keep it safe', 'My pin is [redacted], keep it safe']]);
    const asAdmin = await gqlOk<{ event: { content: string } }>(t.url, t.adminToken, q, { e: eventId });
    expect(asAdmin.event.content).toBe('My pin is 4711, keep it safe');
    const mcp = await mcpClient(t.url, reader);
    try {
      const hits = dataOf<{ hits: Array<{ evidence: Array<{ content: string }> }> }>(
        await mcp.callTool({ name: 'search_memory', arguments: { namespace: ns, query: 'pin keep safe' } }),
      );
      expect(JSON.stringify(hits)).not.toContain('4711');
      expect(JSON.stringify(hits)).toContain('[redacted]');
    } finally {
      await mcp.close();
    }
    expect((await pg.query(`SELECT content, checksum FROM bronze.events WHERE id = $1`, [eventId])).rows[0]).toEqual(bronzeBefore);
    // Only REDACTION is possible on an event.
    const edit = await gql(t.url, t.adminToken, ADD, { input: { eventId, kind: 'EDIT', exact: 'pin', body: 'code' } });
    expect(edit.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  }, 120_000);

  it('validates the selector: exact must occur, start must match, an ambiguous quote asks for a prefix or start', async () => {
    const id = await factId(ns, 'The user has a neighbour called Ada');
    const missing = await gql(t.url, t.adminToken, ADD, { input: { factId: id, kind: 'ANNOTATION', exact: 'Grace', body: 'x' } });
    expect(missing.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' }, message: expect.stringMatching(/does not occur/) });
    const wrongStart = await gql(t.url, t.adminToken, ADD, { input: { factId: id, kind: 'ANNOTATION', exact: 'Ada', start: 3, body: 'x' } });
    expect(wrongStart.errors?.[0]?.message).toMatch(/not at start 3/);
    const ambiguous = await gql(t.url, t.adminToken, ADD, { input: { factId: id, kind: 'ANNOTATION', exact: 'a', body: 'x' } });
    expect(ambiguous.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' }, message: expect.stringMatching(/give a prefix, suffix or start/) });
    const both = await gql(t.url, t.adminToken, ADD, {
      input: { factId: id, eventId: eventIds['My neighbour is called Ada'], kind: 'REDACTION', exact: 'Ada' },
    });
    expect(both.errors?.[0]?.message).toMatch(/exactly one of input.factId/);
    const placed = (
      await gqlOk<{ addOverlay: { selector: { exact: string; prefix: string; suffix: string; start: number; end: number }; textHash: string } }>(
        t.url,
        t.adminToken,
        ADD,
        { input: { factId: id, kind: 'ANNOTATION', exact: 'Ada', body: 'Ada Lovelace, the neighbour' } },
      )
    ).addOverlay;
    expect(placed.selector).toEqual({ exact: 'Ada', prefix: 'The user has a neighbour called ', suffix: '', start: 32, end: 35 });
    expect(placed.textHash).toMatch(/^[0-9a-f]{64}$/);
    // An annotation leaves the text unchanged.
    const read = await gqlOk<{ fact: { statement: string } }>(t.url, t.adminToken, `query($id: ID!) { fact(id: $id) { statement } }`, { id });
    expect(read.fact.statement).toBe('The user has a neighbour called Ada');
  });

  it('fences namespaces and capabilities: overlays(factId), addOverlay, Fact.overlays, overlaysForReview', async () => {
    const mine = await factId(ns, 'The user has a neighbour called Ada');
    const foreign = await factId(other, 'The user drinks green tea every morning');
    await gqlOk(t.url, t.adminToken, ADD, { input: { factId: foreign, kind: 'ANNOTATION', exact: 'tea', body: 'secret note' } });
    const outsider = (await createToken(t, [{ namespacePattern: ns, capabilities: ['READ', 'LIST', 'OVERLAY'] }], 'outsider')).token;
    const readOnly = (await createToken(t, [{ namespacePattern: ns, capabilities: ['READ', 'LIST'] }], 'read-only')).token;

    // Another namespace's fact looks like no fact at all.
    const list = await gql(t.url, outsider, `query($id: ID!) { overlays(factId: $id) { id } }`, { id: foreign });
    const none = await gql(t.url, outsider, `query($id: ID!) { overlays(factId: $id) { id } }`, { id: '00000000-0000-4000-8000-000000000000' });
    expect(list.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(list.errors?.[0]?.message).toBe(none.errors?.[0]?.message?.replace('00000000-0000-4000-8000-000000000000', foreign));
    const add = await gql(t.url, outsider, ADD, { input: { factId: foreign, kind: 'REDACTION', exact: 'tea' } });
    expect(add.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(JSON.stringify(add)).not.toContain('secret');
    expect((await pg.query(`SELECT count(*)::int AS n FROM gold.overlays WHERE fact_id = $1`, [foreign])).rows[0]?.n).toBe(1);
    const nested = await gqlOk<{ fact: null }>(t.url, outsider, `query($id: ID!) { fact(id: $id) { overlays { body } } }`, { id: foreign });
    expect(nested.fact).toBeNull();
    const review = await gql(t.url, outsider, `query($ns: String!) { overlaysForReview(namespace: $ns) { id } }`, { ns: other });
    expect(review.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    // Without "overlay": FORBIDDEN, naming the capability; reading overlays needs only "read".
    const denied = await gql(t.url, readOnly, ADD, { input: { factId: mine, kind: 'REDACTION', exact: 'Ada' } });
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(denied.errors?.[0]?.message).toMatch(/overlay/);
    const visible = await gqlOk<{ overlays: Array<{ body: string }>; fact: { overlays: Array<{ body: string }> } }>(
      t.url,
      readOnly,
      `query($id: ID!) { overlays(factId: $id) { body } fact(id: $id) { overlays { body } } }`,
      { id: mine },
    );
    expect(visible.overlays.map((o) => o.body)).toContain('Ada Lovelace, the neighbour');
    expect(visible.fact.overlays).toEqual(visible.overlays);
  });

  it('revising or retracting your own overlay needs no approval; another principal’s needs an OVERWRITE_OVERLAY approval consumed in the write', async () => {
    const id = await factId(ns, 'The user has a neighbour called Ada');
    const alice = (await createToken(t, [{ namespacePattern: ns, capabilities: ['READ', 'LIST', 'OVERLAY'] }], 'alice')).token;
    const bob = (await createToken(t, [{ namespacePattern: ns, capabilities: ['READ', 'LIST', 'OVERLAY'] }], 'bob')).token;
    const o = (
      await gqlOk<{ addOverlay: { id: string; author: string } }>(t.url, alice, ADD, { input: { factId: id, kind: 'EDIT', exact: 'Ada', body: 'Grace' } })
    ).addOverlay;
    expect(o.author).toBe('alice');
    const REVISE = `mutation($id: ID!, $input: OverlayInput!, $a: ID) { reviseOverlay(id: $id, input: $input, approvalId: $a) { version body status } }`;
    const own = await gqlOk<{ reviseOverlay: { version: number; body: string } }>(t.url, alice, REVISE, {
      id: o.id,
      input: { factId: id, kind: 'EDIT', exact: 'Ada', body: 'Grace Hopper' },
    });
    expect(own.reviseOverlay).toMatchObject({ version: 2, body: 'Grace Hopper' });

    const withoutApproval = await gql(t.url, bob, REVISE, { id: o.id, input: { factId: id, kind: 'EDIT', exact: 'Ada', body: 'Bob was here' } });
    expect(withoutApproval.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(withoutApproval.errors?.[0]?.message).toMatch(/requestApproval/);
    const retractWithout = await gql(t.url, bob, `mutation($id: ID!) { retractOverlay(id: $id) { status } }`, { id: o.id });
    expect(retractWithout.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    const unknown = '11111111-1111-4111-8111-111111111111';
    const revise = (body: string, a?: string) => gql(t.url, bob, REVISE, { id: o.id, input: { factId: id, kind: 'EDIT', exact: 'Ada', body }, a });
    expect((await revise('Bob was here', unknown)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');

    // The real flow: bob asks for this exact change, carol (approve, not the requester) approves it, bob applies it once.
    const carol = (await createToken(t, [{ namespacePattern: ns, capabilities: ['APPROVE'] }], 'carol')).token;
    const change = { overlayId: o.id, operation: 'REVISE', kind: 'EDIT', body: 'Ada (per Bob)' };
    const request = await gqlOk<{ requestApproval: { id: string } }>(
      t.url,
      bob,
      `mutation($input: ApprovalRequestInput!) { requestApproval(input: $input) { id } }`,
      { input: { namespace: ns, action: 'OVERWRITE_OVERLAY', params: change, reason: 'the name was wrong' } },
    );
    const approval = request.requestApproval.id;
    expect((await revise('Ada (per Bob)', approval)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN'); // not approved yet
    await gqlOk(t.url, carol, `mutation($id: ID!) { approve(id: $id) { status } }`, { id: approval });
    expect((await revise('Bob was here', approval)).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT'); // not the approved change
    const revised = await gqlOk<{ reviseOverlay: { version: number; body: string } }>(t.url, bob, REVISE, {
      id: o.id,
      input: { factId: id, kind: 'EDIT', exact: 'Ada', body: 'Ada (per Bob)' },
      a: approval,
    });
    expect(revised.reviseOverlay).toMatchObject({ version: 3, body: 'Ada (per Bob)' });
    expect((await revise('Ada (per Bob)', approval)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN'); // single use
    const steps = await pg.query<{ step: string }>(`SELECT step FROM access.approval_log WHERE request_id = $1 ORDER BY id`, [approval]);
    expect(steps.rows.map((r) => r.step)).toEqual(['REQUESTED', 'REFUSED', 'APPROVED', 'REFUSED', 'EXECUTED', 'REFUSED']);
    // The refused attempt wrote nothing; versions are append-only rows.
    expect((await pg.query(`SELECT version, body FROM gold.overlays WHERE id = $1 ORDER BY version`, [o.id])).rows).toEqual([
      { version: 1, body: 'Grace' },
      { version: 2, body: 'Grace Hopper' },
      { version: 3, body: 'Ada (per Bob)' },
    ]);
    const retracted = await gqlOk<{ retractOverlay: { status: string; version: number } }>(
      t.url,
      alice,
      `mutation($id: ID!) { retractOverlay(id: $id) { status version } }`,
      { id: o.id },
    );
    expect(retracted.retractOverlay).toEqual({ status: 'RETRACTED', version: 4 });
    const read = await gqlOk<{ fact: { statement: string } }>(t.url, alice, `query($id: ID!) { fact(id: $id) { statement } }`, { id });
    expect(read.fact.statement).toBe('The user has a neighbour called Ada');
    await expect(pg.query(`UPDATE gold.overlays SET body = 'x' WHERE id = $1`, [o.id])).rejects.toThrow(/append-only/);
    await expect(pg.query(`DELETE FROM gold.overlays WHERE id = $1`, [o.id])).rejects.toThrow(/append-only/);
  });
});
