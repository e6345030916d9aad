import {
  buildClientSchema,
  getIntrospectionQuery,
  getNamedType,
  GraphQLField,
  GraphQLNamedType,
  GraphQLSchema,
  IntrospectionQuery,
  isInputObjectType,
  isListType,
  isNonNullType,
} from 'graphql';
import { Client } from 'pg';
import { CHANNELS } from '../../src/platform/pubsub/topics';
import { anEvent } from '../builders/event-input';
import { mcpClient } from '../support/mcp-client';
import { Args, argumentText, literal, queryInChunks, selectParts, strings } from '../support/schema-sweep';
import { OpenAIStubServer, startOpenAIStubServer } from '../support/openai-stub-server';
import { livesInModel } from '../support/scripted-models';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gqlOk, startTestApp, TestApp, settledNamespace } from '../support/test-app';
import { collect, wsClient } from '../support/ws-client';

const SECRET = 'ZORBLAX';
const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { event { id } } }`;
const ADD = `mutation($input: OverlayInput!) { addOverlay(input: $input) { id } }`;

/** Roots that read facts, events, overlays or the graph derived from them: the read surface a redaction must cover. */
const QUERY_ROOTS = [
  'about',
  'changes',
  'conversation',
  'derivedFrom',
  'entities',
  'entity',
  'event',
  'eventNode',
  'events',
  'fact',
  'facts',
  'goldEntities',
  'goldEntity',
  'graphEntities',
  'graphEntitiesConnection',
  'graphEvents',
  'graphEventsConnection',
  'graphFacts',
  'graphFactsConnection',
  'neighbourhood',
  'overlays',
  'overlaysForReview',
  'provenance',
  'relatedContext',
  'reviewQueue',
  'searchMemory',
  'shortestPath',
] as const;
const SUBSCRIPTION_ROOTS = ['factAdded', 'factSuperseded', 'eventIngested'] as const;
const DEPTH = 4;

/**
 * Redaction is total for everyone without "admin": after a whole fact and its event are redacted,
 * a reader (READ, LIST, SEARCH) gets the hidden word from no field of the schema reachable from
 * the fact and event read roots (enumerated from the introspected schema to depth 4), no
 * subscription payload, no MCP tool, and no `contains`/`where` filter answers yes/no about it.
 * Admin still sees the Silver text through machineStatement.
 */
describe('redaction is total for readers without admin', () => {
  let t: TestApp;
  let stub: OpenAIStubServer;
  let pg: Client;
  let reader: string;
  /** Without admin too, with the capabilities the review roots need. */
  let reviewer: string;
  let currentRoot = '';
  let schema: GraphQLSchema;
  const ns = uniqueNamespace('redact-total');
  const ids: { factA: string; factB: string; eventA: string; eventB: string; entity: string } = { factA: '', factB: '', eventA: '', eventB: '', entity: '' };
  const leaks: string[] = [];
  let checked = 0;
  const textFields = new Set<string>();

  const settled = () => settledNamespace(t, pg, ns);
  const ingest = async (content: string, seq: number): Promise<string> =>
    (
      await gqlOk<{ ingestEvents: Array<{ event: { id: string } }> }>(t.url, t.adminToken, INGEST, {
        input: [
          {
            ...anEvent(ns).inConversation('c1', seq).by('USER').saying(content).build(),
            rawPayload: { said: content, nested: { again: `${content} twice` } },
          },
        ],
      })
    ).ingestEvents[0]?.event.id as string;

  /** Records every string in `data` that holds the secret, under `where`. */
  const inspect = (where: string, data: unknown) => {
    for (const s of strings(data)) {
      checked += 1;
      if (s.value.toUpperCase().includes(SECRET)) leaks.push(`${where}: ${s.path} = ${JSON.stringify(s.value.slice(0, 120))}`);
    }
  };

  const argValues = (f: GraphQLField<unknown, unknown>): Args | null => {
    const out: Args = {};
    for (const a of f.args) {
      const v = valueFor(a.name, getNamedType(a.type));
      if (v !== undefined) out[a.name] = v;
      else if (isNonNullType(a.type)) return null;
    }
    return out;
  };
  const valueFor = (name: string, type: GraphQLNamedType): unknown => {
    if (isInputObjectType(type) || isListType(type)) return undefined;
    switch (name) {
      case 'namespace':
        return ns;
      case 'id':
        return ['event', 'eventNode'].includes(currentRoot) ? ids.eventA : ['entity', 'neighbourhood'].includes(currentRoot) ? ids.entity : ids.factA;
      case 'factId':
        return ids.factA;
      case 'eventId':
        return ids.eventA;
      case 'entityId':
        return ids.entity;
      case 'fromEntityId':
      case 'toEntityId':
      case 'from':
      case 'to':
        return type.name === 'ID' ? ids.entity : undefined;
      case 'conversationId':
        return 'c1';
      case 'since':
        return '2000-01-01T00:00:00Z';
      // Words of the visible text: an echo of the caller's own argument is no leak (the oracle probes below search for the word).
      case 'query':
      case 'topic':
        return 'user lives';
      case 'name':
        return 'the user';
      case 'includeRetired':
        return true;
      // Small pages keep every generated document under the complexity limit (lists multiply).
      case 'first':
      case 'limit':
        return type.name === 'Int' ? 3 : undefined;
      case 'depth':
        return type.name === 'Int' ? 1 : undefined;
      default:
        return undefined;
    }
  };

  beforeAll(async () => {
    stub = await startOpenAIStubServer({ handler: livesInModel() });
    t = await startTestApp(
      {
        OPENAI_BASE_URL: stub.baseUrl,
        OPENAI_API_KEY: 'stub',
        EXTRACTION_MODEL: 'stub',
        OFFLINE_EMBEDDER: 'hashing',
        DERIVE_MAX_WAIT_MS: '0',
        DERIVE_POLL_MS: '50',
        EXPLORE_TIMEOUT_MS: '120000',
        MAX_QUERY_DEPTH: '30',
        MAX_QUERY_COMPLEXITY: '1000000000',
      },
      { api: true, worker: true },
    );
    pg = new Client({ connectionString: t.databaseUrl });
    await pg.connect();
    reader = (await createToken(t, [{ namespacePattern: ns, capabilities: ['READ', 'LIST', 'SEARCH'] }], 'reader')).token;
    reviewer = (await createToken(t, [{ namespacePattern: ns, capabilities: ['READ', 'LIST', 'SEARCH', 'REVIEW', 'OVERLAY'] }], 'reviewer')).token;
    const introspection = await gqlOk<IntrospectionQuery>(t.url, t.adminToken, getIntrospectionQuery());
    schema = buildClientSchema(introspection);

    ids.eventA = await ingest(SECRET, 1);
    await settled();
    const facts = await gqlOk<{ facts: { edges: Array<{ node: { id: string; machineStatement: string; subject: { id: string } } }> } }>(
      t.url,
      t.adminToken,
      `query($ns: String!) { facts(namespace: $ns) { edges { node { id machineStatement subject { id } } } } }`,
      { ns },
    );
    const a = facts.facts.edges.find((e) => e.node.machineStatement === `The user lives in ${SECRET}`);
    if (!a) throw new Error(`no fact about ${SECRET}: ${JSON.stringify(facts)}`);
    ids.factA = a.node.id;
    ids.entity = a.node.subject.id;
    // An annotation and an edit quoting the word, then the whole statement and the event redacted.
    await gqlOk(t.url, t.adminToken, ADD, { input: { factId: ids.factA, kind: 'ANNOTATION', exact: SECRET, body: `note on ${SECRET}` } });
    await gqlOk(t.url, t.adminToken, ADD, { input: { factId: ids.factA, kind: 'EDIT', exact: SECRET, body: `${SECRET} town` } });
    await gqlOk(t.url, t.adminToken, ADD, { input: { factId: ids.factA, kind: 'REDACTION', exact: `The user lives in ${SECRET}` } });
    await gqlOk(t.url, t.adminToken, ADD, { input: { eventId: ids.eventA, kind: 'REDACTION', exact: SECRET } });
    await settled();
  }, 240_000);
  afterAll(async () => {
    await pg?.end();
    await t?.stop();
    await stub?.close();
  });

  it('no field, filter, subscription payload or MCP tool shows or tests the word for a reader; admin still sees machineStatement', async () => {
    // Subscriptions first: a supersession of the redacted fact, and notifications for it and its event.
    const ws = wsClient(t.url, reader);
    const subs = SUBSCRIPTION_ROOTS.map((root) => {
      const field = schema.getSubscriptionType()?.getFields()[root];
      if (!field) throw new Error(`no subscription ${root}`);
      const sel = selectParts(getNamedType(field.type), DEPTH - 1, argValues, textFields)
        .map((p) => p.text)
        .join(' ');
      const doc = `subscription { ${root}(namespace: ${literal(ns)}) { ${sel} } }`;
      return { root, sub: collect<Record<string, unknown>>(ws, doc, {}) };
    });
    await Promise.all(subs.map((s) => s.sub.ready));
    ids.eventB = await ingest('Quimby', 2);
    await settled();
    await pg.query(`SELECT pg_notify($1, $2)`, [CHANNELS.facts, JSON.stringify({ namespace: ns, added: [ids.factA], superseded: [] })]);
    await pg.query(`SELECT pg_notify($1, $2)`, [CHANNELS.events, JSON.stringify({ namespace: ns, ids: [ids.eventA] })]);
    await eventually(async () => subs.every((s) => s.sub.received.next.length > 0 || s.sub.received.errors.length > 0), 'subscriptions', 30_000).catch(
      (e: unknown) => {
        throw new Error(`${String(e)}: ${JSON.stringify(subs.map((s) => [s.root, s.sub.received]))}`);
      },
    );
    // The superseding fact arrived: the old one in the payload is the redacted fact.
    const superseded = subs.find((s) => s.root === 'factSuperseded');
    expect(JSON.stringify(superseded?.sub.received.next)).toContain(ids.factA);
    for (const s of subs) {
      inspect(`subscription ${s.root}`, s.sub.received.next);
      inspect(`subscription ${s.root} errors`, s.sub.received.errors);
      s.sub.stop();
    }
    await ws.dispose();

    // Every query root of the read surface, every field to depth 4.
    let roots = 0;
    const refused: string[] = [];
    for (const root of QUERY_ROOTS) {
      const field = schema.getQueryType()?.getFields()[root];
      if (!field) throw new Error(`no query ${root}`);
      currentRoot = root;
      const args = argValues(field);
      if (args === null) throw new Error(`no argument values for ${root}`);
      const token = root === 'overlaysForReview' || root === 'reviewQueue' ? reviewer : reader;
      let answered = false;
      // Heavy roots (lists of subgraphs) to depth 3.
      const depth = ['neighbourhood', 'relatedContext', 'searchMemory', 'shortestPath'].includes(root) ? DEPTH - 1 : DEPTH;
      for (const r of await queryInChunks(t.url, token, root, argumentText(args), selectParts(getNamedType(field.type), depth, argValues, textFields))) {
        inspect(`query ${root}`, r);
        if (r.data && r.data[root] !== null && r.data[root] !== undefined) answered = true;
        else if (r.errors?.length) refused.push(`${root}: ${r.errors?.map((e) => `${e.extensions?.code} ${e.message.slice(0, 160)}`).join('; ')}`);
      }
      if (answered) roots += 1;
    }
    currentRoot = '';
    // Roots a reader may not call (review, other capabilities) answer FORBIDDEN; the rest answer.
    expect(refused).toEqual([]);
    expect(roots).toBeGreaterThanOrEqual(15);

    // Filters as a yes/no oracle: on composed text, so the word matches nothing.
    const oracle = await gqlOk<{
      facts: { edges: unknown[] };
      events: { edges: unknown[] };
      byObject: unknown[];
      byStatement: unknown[];
      search: Array<{ channels: string[]; fact: { id: string } | null; event: { id: string } | null }>;
    }>(
      t.url,
      reader,
      `query($ns: String!, $w: String!) {
         facts(namespace: $ns, includeRetired: true, filter: { contains: $w }) { edges { cursor } }
         events(namespace: $ns, filter: { contains: $w }) { edges { cursor } }
         byObject: graphFacts(where: { namespace: { eq: $ns }, object: { contains: $w } }) { id }
         byStatement: graphFacts(where: { namespace: { eq: $ns }, statement: { contains: $w } }) { id }
         search: searchMemory(namespace: $ns, query: $w, limit: 20) { channels fact { id } event { id } }
       }`,
      { ns, w: SECRET },
    );
    const answers = [oracle.facts.edges.length, oracle.events.edges.length, oracle.byObject.length, oracle.byStatement.length];
    checked += answers.length;
    answers.forEach(
      (n, i) => n > 0 && leaks.push(`oracle ${['facts.contains', 'events.contains', 'graphFacts.object', 'graphFacts.statement'][i]}: ${n} match(es)`),
    );
    const keywordHits = oracle.search.filter(
      (h) => (h.fact?.id === ids.factA || h.event?.id === ids.eventA) && h.channels.some((c) => c === 'keyword' || c === 'event_keyword'),
    );
    checked += 1;
    if (keywordHits.length) leaks.push(`oracle searchMemory keyword channels: ${JSON.stringify(keywordHits)}`);
    // A word the composed text does contain still matches (the filters work).
    const visible = await gqlOk<{ facts: { edges: unknown[] } }>(
      t.url,
      reader,
      `query($ns: String!) { facts(namespace: $ns, includeRetired: true, filter: { contains: "[redacted]" }) { edges { cursor } } }`,
      { ns },
    );
    expect(visible.facts.edges.length).toBe(1);

    // Every MCP tool.
    const mcp = await mcpClient(t.url, reader);
    try {
      const tools = (await mcp.listTools()).tools;
      const toolArgs: Record<string, Args> = {
        search_memory: { namespace: ns, query: SECRET.toLowerCase() },
        get_fact: { id: ids.factA },
        get_provenance: { factId: ids.factA },
        list_facts: { namespace: ns, includeRetired: true },
        list_entities: { namespace: ns },
        about: { namespace: ns, name: 'the user' },
        related_context: { namespace: ns, topic: 'user lives' },
        what_changed: { namespace: ns, since: '2000-01-01T00:00:00Z' },
        add_memory: { namespace: ns, content: 'x' },
      };
      for (const tool of tools) {
        const args = toolArgs[tool.name];
        if (!args) throw new Error(`MCP tool ${tool.name} has no probe: add one`);
        // A tool the reader may not use (add_memory needs "ingest") refuses: its message is inspected too.
        inspect(
          `mcp ${tool.name}`,
          await mcp.callTool({ name: tool.name, arguments: args }).catch((e: unknown) => (e instanceof Error ? e.message : String(e))),
        );
      }
      const filtered = await mcp.callTool({ name: 'list_facts', arguments: { namespace: ns, includeRetired: true, contains: SECRET } });
      checked += 1;
      if (JSON.stringify(filtered).includes(ids.factA)) leaks.push('oracle mcp list_facts.contains');
    } finally {
      await mcp.close();
    }

    const fields = [...textFields].sort();
    console.log(`redaction: ${fields.length} text fields enumerated, ${checked} strings/answers checked, ${leaks.length} leak(s)\n${leaks.join('\n')}`);
    expect(fields).toEqual(
      expect.arrayContaining(['Fact.statement', 'Fact.machineStatement', 'Fact.object', 'QuoteSelector.exact', 'Event.rawPayloadText', 'GraphFact.object']),
    );
    expect(leaks).toEqual([]);

    // Admin still sees the Silver text and the payload.
    const admin = await gqlOk<{ fact: { machineStatement: string; statement: string }; event: { rawPayloadText: string } }>(
      t.url,
      t.adminToken,
      `query($id: ID!, $e: ID!) { fact(id: $id) { machineStatement statement } event(id: $e) { rawPayloadText } }`,
      { id: ids.factA, e: ids.eventA },
    );
    expect(admin.fact).toEqual({ machineStatement: `The user lives in ${SECRET}`, statement: '[redacted]' });
    expect(admin.event.rawPayloadText).toContain(SECRET);
  }, 300_000);
});
