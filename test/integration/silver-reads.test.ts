import { anEvent } from '../builders/event-input';
import { startOpenAIStubServer, OpenAIStubServer } from '../support/openai-stub-server';
import { livesInModel } from '../support/scripted-models';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';
import { collect, wsClient } from '../support/ws-client';

const NESTED = `query($ns: String!, $first: Int) {
  facts(namespace: $ns, includeRetired: true, first: $first) { edges { node {
    id statement validFrom validTo
    subject { id name aliases }
    sources { spanStart spanEnd quote event { id content occurredAt } }
    supersededBy { id statement subject { name } }
    supersedes { id statement sources { quote } }
    decisions { action reason }
  } } } }`;

describe('Silver reads: batched relations and the namespace firewall', () => {
  let t: TestApp;
  let stub: OpenAIStubServer;
  const ns = uniqueNamespace('reads');
  const other = uniqueNamespace('other');
  let token: string;
  let otherToken: string;

  beforeAll(async () => {
    stub = await startOpenAIStubServer({ handler: livesInModel() });
    t = await startTestApp({
      OPENAI_BASE_URL: stub.baseUrl,
      OPENAI_API_KEY: 'stub',
      EXTRACTION_MODEL: 'stub',
      OFFLINE_EMBEDDER: 'hashing',
      DERIVE_MAX_WAIT_MS: '0',
      DERIVE_POLL_MS: '50',
    });
    token = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'READ', 'LIST'] }])).token;
    otherToken = (await createToken(t, [{ namespacePattern: other, capabilities: ['INGEST', 'READ', 'LIST'] }])).token;
    const cities = Array.from({ length: 50 }, (_, i) =>
      anEvent(ns)
        .inConversation('moves', i)
        .by('USER')
        .saying(`City${i}`)
        .at(new Date(Date.UTC(2020, 0, 1 + i * 7)).toISOString())
        .build(),
    );
    await gqlOk(t.url, token, `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`, { input: cities });
    await gqlOk(t.url, otherToken, `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`, {
      input: [anEvent(other).saying('Secretville').build()],
    });
    await eventually(
      async () => {
        const a = await gqlOk<{ pipelineStatus: { pending: number } }>(t.url, token, `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`, {
          ns,
        });
        const b = await gqlOk<{ pipelineStatus: { pending: number } }>(
          t.url,
          otherToken,
          `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`,
          { ns: other },
        );
        return a.pipelineStatus.pending === 0 && b.pipelineStatus.pending === 0;
      },
      'derivation',
      60_000,
    );
    // Quiet the background loops so the counter sees only the request.
    await t.app.stages.stop();
  });
  afterAll(async () => {
    await t?.stop();
    await stub?.close();
  });

  it('answers 50 facts with sources, events, subjects and supersession links in a constant number of SQL round trips', async () => {
    t.app.queryCounter.reset();
    const res = await gqlOk<{
      facts: {
        edges: Array<{ node: { validTo: string | null; sources: unknown[]; supersedes: unknown[]; supersededBy: unknown; subject: { name: string } } }>;
      };
    }>(t.url, token, NESTED, { ns, first: 50 });
    const fifty = t.app.queryCounter.count;
    expect(res.facts.edges).toHaveLength(50);
    expect(res.facts.edges.filter((e) => e.node.supersededBy !== null)).toHaveLength(49);
    expect(res.facts.edges.every((e) => e.node.sources.length === 1 && e.node.subject.name === 'the user')).toBe(true);

    t.app.queryCounter.reset();
    await gqlOk(t.url, token, NESTED, { ns, first: 5 });
    const five = t.app.queryCounter.count;
    // token lookup, facts page, subjects, sources, events, superseding facts (+ their subjects), superseded facts (+ sources), decisions,
    // the overlays of each batch of facts the FactReader composes (docs/overlays.md), and the namespace's
    // active event redactions for the names it hides (silver/hidden-names.ts);
    // an N+1 anywhere would cost 50+ here. Ten times the rows, no more round trips than five rows needed.
    expect(fifty).toBeLessThanOrEqual(14);
    expect(fifty).toBeLessThanOrEqual(five);
  });

  it("keeps another namespace's facts, entities and pushes out of reach", async () => {
    const mine = await gqlOk<{ facts: { edges: Array<{ node: { id: string } }> } }>(
      t.url,
      otherToken,
      `query($ns: String!) { facts(namespace: $ns) { edges { node { id subject { id } } } } }`,
      { ns: other },
    );
    const secretId = mine.facts.edges[0]?.node.id as string;
    expect(secretId).toBeDefined();
    expect((await gqlOk<{ fact: unknown }>(t.url, token, `query($id: ID!) { fact(id: $id) { id } }`, { id: secretId })).fact).toBeNull();
    expect(
      (await gql(t.url, token, `query($ns: String!) { facts(namespace: $ns) { edges { node { id } } } }`, { ns: other })).errors?.[0]?.extensions?.code,
    ).toBe('FORBIDDEN');
    expect(
      (await gql(t.url, token, `query($ns: String!) { entities(namespace: $ns) { edges { node { id } } } }`, { ns: other })).errors?.[0]?.extensions?.code,
    ).toBe('FORBIDDEN');
    expect((await gql(t.url, token, `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`, { ns: other })).errors?.[0]?.extensions?.code).toBe(
      'FORBIDDEN',
    );
    const entities = await gqlOk<{ entities: { edges: Array<{ node: { id: string; name: string } }> } }>(
      t.url,
      token,
      `query($ns: String!) { entities(namespace: $ns) { edges { node { id name } } } }`,
      { ns },
    );
    for (const e of entities.entities.edges) {
      expect(
        (
          await gqlOk<{ entity: { facts: Array<{ statement: string }> } }>(t.url, token, `query($id: ID!) { entity(id: $id) { facts { statement } } }`, {
            id: e.node.id,
          })
        ).entity.facts.some((f) => f.statement.includes('Secretville')),
      ).toBe(false);
    }
    const ws = wsClient(t.url, token);
    for (const sub of ['factAdded(namespace: $ns) { id }', 'factSuperseded(namespace: $ns) { old { id } }']) {
      const c = collect(ws, `subscription($ns: String!) { ${sub} }`, { ns: other });
      await eventually(async () => c.received.errors.length > 0 || c.received.done, 'the refusal');
      expect(JSON.stringify(c.received.errors)).toContain('FORBIDDEN');
      c.stop();
    }
    await ws.dispose();
  });
});
