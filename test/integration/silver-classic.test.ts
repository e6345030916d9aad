import { OFFLINE_RULES_MODEL } from '../../src/models/offline/rule-set';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status event { id } } }`;
const FACTS = `query($ns: String!, $asOf: DateTime, $retired: Boolean) {
  facts(namespace: $ns, asOf: $asOf, includeRetired: $retired, first: 10) { edges { node {
    id statement factType predicate object isNegation validFrom validTo supersededBy { id statement } supersedes { id statement }
    subject { name type } extractionModel confidence importance
    sources { spanStart spanEnd quote event { id content } }
    decisions { action reason targetFactId candidates { statement } }
  } } } }`;

interface FactNode {
  id: string;
  statement: string;
  factType: string;
  predicate: string | null;
  object: string | null;
  validFrom: string;
  validTo: string | null;
  supersededBy: { id: string; statement: string } | null;
  supersedes: Array<{ id: string; statement: string }>;
  subject: { name: string; type: string } | null;
  extractionModel: string;
  sources: Array<{ spanStart: number; spanEnd: number; quote: string; event: { id: string; content: string } }>;
  decisions: Array<{ action: string; reason: string; targetFactId: string | null; candidates: Array<{ statement: string }> }>;
}
type Facts = { facts: { edges: Array<{ node: FactNode }> } };

describe('Silver, the classic case: vim, then neovim', () => {
  let t: TestApp;
  const ns = uniqueNamespace('classic');
  let token: string;
  const t1 = '2026-01-10T09:00:00.000Z';
  const t2 = '2026-03-08T09:00:00.000Z';
  let vimEvent: string;
  let neovimEvent: string;

  beforeAll(async () => {
    t = await startTestApp({ DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50' });
    token = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'READ', 'LIST'] }])).token;
    const first = await gqlOk<{ ingestEvents: Array<{ event: { id: string } }> }>(t.url, token, INGEST, {
      input: [anEvent(ns).inConversation('c1', 1).by('USER').saying('I use vim for everything').at(t1).build()],
    });
    vimEvent = first.ingestEvents[0]?.event.id as string;
    await eventually(
      async () =>
        (await gqlOk<{ pipelineStatus: { pending: number } }>(t.url, token, `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`, { ns }))
          .pipelineStatus.pending === 0,
      'the first derivation',
    );
    const second = await gqlOk<{ ingestEvents: Array<{ event: { id: string } }> }>(t.url, token, INGEST, {
      input: [anEvent(ns).inConversation('c1', 2).by('USER').saying('I switched to neovim last week').at(t2).build()],
    });
    neovimEvent = second.ingestEvents[0]?.event.id as string;
    await eventually(
      async () =>
        (await gqlOk<{ pipelineStatus: { pending: number } }>(t.url, token, `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`, { ns }))
          .pipelineStatus.pending === 0,
      'the second derivation',
    );
  });
  afterAll(async () => t?.stop());

  it('believes neovim now, with vim closed and linked, both traced to their events and spans', async () => {
    const current = (await gqlOk<Facts>(t.url, token, FACTS, { ns })).facts.edges.map((e) => e.node);
    const neovim = current.find((f) => /neovim/i.test(f.object ?? f.statement));
    expect(neovim).toBeDefined();
    expect(current.some((f) => /\bvim\b/i.test(f.object ?? '') && !/neovim/i.test(f.object ?? ''))).toBe(false);
    expect(neovim?.subject?.type).toBe('person');
    expect(neovim?.sources[0]?.event.id).toBe(neovimEvent);
    expect(neovim?.sources[0]?.quote).toBe(neovim?.sources[0]?.event.content.slice(neovim.sources[0].spanStart, neovim.sources[0].spanEnd));
    expect(neovim?.sources[0]?.quote).toMatch(/neovim/);
    // "last week" puts the switch about a week before t2.
    const days = (Date.parse(t2) - Date.parse(neovim?.validFrom as string)) / 86_400_000;
    expect(days).toBeGreaterThanOrEqual(5);
    expect(days).toBeLessThanOrEqual(9);
    expect(neovim?.decisions[0]?.action).toBe('SUPERSEDE');
    expect(neovim?.decisions[0]?.reason.length).toBeGreaterThan(10);

    const vim = neovim?.supersedes[0];
    expect(vim?.statement).toMatch(/\bvim\b/i);
    const all = (await gqlOk<Facts>(t.url, token, FACTS, { ns, retired: true })).facts.edges.map((e) => e.node);
    const vimFull = all.find((f) => f.id === vim?.id) as FactNode;
    expect(vimFull.validTo).toBe(neovim?.validFrom);
    expect(vimFull.supersededBy?.id).toBe(neovim?.id);
    expect(vimFull.sources[0]?.event.id).toBe(vimEvent);
    expect(vimFull.sources[0]?.quote).toMatch(/vim/);
    expect(vimFull.extractionModel).toBe(OFFLINE_RULES_MODEL);
  });

  it('answers asOf t1 with vim and asOf t2 with neovim', async () => {
    const at = async (asOf: string) => (await gqlOk<Facts>(t.url, token, FACTS, { ns, asOf })).facts.edges.map((e) => e.node.object ?? e.node.statement);
    const before = await at('2026-01-20T00:00:00Z');
    expect(before.some((o) => /\bvim\b/i.test(o) && !/neovim/i.test(o))).toBe(true);
    expect(before.some((o) => /neovim/i.test(o))).toBe(false);
    const after = await at(t2);
    expect(after.some((o) => /neovim/i.test(o))).toBe(true);
    expect(after.some((o) => /\bvim\b/i.test(o) && !/neovim/i.test(o))).toBe(false);
  });

  it('lists the facts of each event on the event', async () => {
    const res = await gqlOk<{ event: { facts: Array<{ statement: string }> } }>(
      t.url,
      token,
      `query($id: ID!) { event(id: $id) { derivationStatus facts { statement } } }`,
      { id: neovimEvent },
    );
    expect(res.event.facts.map((f) => f.statement).join(' ')).toMatch(/neovim/i);
  });
});

describe('Silver entities: coreference within a batch, aliases across batches', () => {
  let t: TestApp;
  const ns = uniqueNamespace('aliases');
  let token: string;
  const settle = async () =>
    eventually(
      async () =>
        (await gqlOk<{ pipelineStatus: { pending: number } }>(t.url, token, `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`, { ns }))
          .pipelineStatus.pending === 0,
      'derivation',
    );

  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50' });
    token = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'READ', 'LIST'] }])).token;
  });
  afterAll(async () => t?.stop());

  it('keeps one PostgreSQL entity whose aliases grow with each way people name it', async () => {
    await gqlOk(t.url, token, INGEST, {
      input: [
        anEvent(ns).inConversation('db', 1).by('USER').saying('We switched from MySQL to PostgreSQL.').at('2026-04-01T10:00:00Z').build(),
        anEvent(ns).inConversation('db', 2).by('USER').saying('The database runs on AWS RDS now.').at('2026-04-01T10:01:00Z').build(),
      ],
    });
    await settle();
    await gqlOk(t.url, token, INGEST, {
      input: [anEvent(ns).inConversation('db', 3).by('USER').saying('I use pg for analytics every day.').at('2026-04-02T10:00:00Z').build()],
    });
    await settle();
    const res = await gqlOk<{
      entities: { edges: Array<{ node: { id: string; name: string; type: string; aliases: string[]; facts: Array<{ statement: string }> } }> };
    }>(
      t.url,
      token,
      `query($ns: String!) { entities(namespace: $ns, filter: { nameContains: "postgres" }) { edges { node { id name type aliases facts { statement } } } } }`,
      { ns },
    );
    const pg = res.entities.edges.map((e) => e.node).filter((e) => e.name === 'PostgreSQL');
    expect(pg).toHaveLength(1);
    expect(pg[0]?.type).toBe('technology');
    expect(pg[0]?.aliases.map((a) => a.toLowerCase())).toEqual(expect.arrayContaining(['the database', 'pg']));
    expect(pg[0]?.facts.map((f) => f.statement).join(' | ')).toMatch(/runs on/i);
  });
});
