import { anEvent } from '../builders/event-input';
import { applyNeo4jSchema } from '../../src/platform/neo4j/neo4j-client';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`;
const PENDING = `query($ns: String!) { pipelineStatus(namespace: $ns) { pending outboxLag } }`;
const SEARCH = `query($ns: String!, $q: String!) {
  searchMemory(namespace: $ns, query: $q, limit: 5) { kind score channels updatedBy fact { id statement } event { id content } evidence { content } }
}`;

interface Hit {
  kind: 'FACT' | 'EVENT';
  score: number;
  channels: string[];
  updatedBy: string[];
  evidence: Array<{ content: string }>;
  fact: { id: string; statement: string } | null;
  event: { id: string; content: string } | null;
}
const text = (h: Hit | undefined): string => h?.fact?.statement ?? h?.event?.content ?? '';

/**
 * Issue 44 through the public path (GraphQL, default settings, the offline models): what search
 * does on data no rule was written for. Word forms meet in the keyword channels ("allergies"
 * finds "allergic", also on nodes projected before word keys existed, once the schema step has
 * given them keys).
 */
describe('search that generalises', () => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    t = await startTestApp({ DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50', PROJECTOR_POLL_MS: '50' });
    token = (await createToken(t, [{ namespacePattern: 'generalises-*', capabilities: ['INGEST', 'SEARCH', 'READ', 'LIST'] }])).token;
  }, 300_000);
  afterAll(async () => t?.stop());

  /** One conversation of the user's, a turn every `minutesApart` minutes, the last one on 2026-11-20 (in the past). */
  const chat = async (prefix: string, turns: string[], minutesApart = 1): Promise<string> => {
    const ns = uniqueNamespace(`generalises-${prefix}`);
    await gqlOk(t.url, token, INGEST, {
      input: turns.map((content, i) =>
        anEvent(ns)
          .inConversation('c1', i + 1)
          .by('USER')
          .saying(content)
          .at(new Date(Date.UTC(2026, 10, 20, 10, (i - turns.length + 1) * minutesApart)).toISOString())
          .build(),
      ),
    });
    await eventually(async () => {
      const s = (await gqlOk<{ pipelineStatus: { pending: number; outboxLag: number } }>(t.url, token, PENDING, { ns })).pipelineStatus;
      return s.pending + s.outboxLag === 0;
    }, 'derivation and projection');
    return ns;
  };
  const search = async (ns: string, q: string): Promise<Hit[]> => (await gqlOk<{ searchMemory: Hit[] }>(t.url, token, SEARCH, { ns, q })).searchMemory;

  it('meets word forms in the keyword channels: "allergies" finds what "allergic" said, also after the schema step keys older nodes', async () => {
    const ns = await chat('forms', [
      "I'm allergic to peanuts, so be careful with recipes.",
      'I love Thai food, the spicier the better',
      'We moved to Lisbon in October',
    ]);
    const allergy = await search(ns, 'does the user have any food allergies?');
    expect(text(allergy[0])).toBe('The user is allergic to peanuts');
    expect(allergy[0]?.channels).toEqual(expect.arrayContaining(['keyword', 'event_keyword']));
    const moving = (await search(ns, 'when is the user moving?')).find((h) => /Lisbon/.test(text(h)));
    expect(moving?.channels).toEqual(expect.arrayContaining(['keyword']));

    // Nodes projected before word keys existed have none: no keyword match, until the schema step keys them.
    await t.app.neo4j.executeQuery(`MATCH (n) WHERE (n:Fact OR n:Event) AND n.namespace = $ns REMOVE n.stems`, { ns });
    // (The turn after it still matches "food" in its context, the turn before it, which keeps its analyzer.)
    const keywordOf = async () =>
      ((await search(ns, 'any food allergies?')).find((h) => /allergic/.test(text(h)))?.channels ?? []).filter((c) => c === 'keyword' || c === 'event_keyword');
    expect(await keywordOf()).toEqual([]);
    await applyNeo4jSchema(t.app.neo4j);
    expect((await keywordOf()).sort()).toEqual(['event_keyword', 'keyword']);
  }, 120_000);

  it('has the older hit name what was said later about the same thing, when the judge did not supersede it (different verbs)', async () => {
    const ns = await chat(
      'updated',
      ['I drink three coffees a day.', 'I love Thai food, the spicier the better', 'I quit coffee completely, only green tea now.'],
      60 * 24 * 10,
    );
    const hits = await search(ns, 'how much coffee does the user drink?');
    const id = (h: Hit): string => h.fact?.id ?? h.event?.id ?? '';
    const saidIn = (h: Hit, turn: RegExp): boolean => h.evidence.some((e) => turn.test(e.content));
    const old = hits.find((h) => saidIn(h, /three coffees/));
    const later = hits.filter((h) => saidIn(h, /quit coffee/)).map(id);
    expect(old).toBeDefined();
    expect(later.length).toBeGreaterThan(0);
    expect(old?.updatedBy.length).toBeGreaterThan(0);
    // It names hits of this page, and only ones said later about coffee.
    expect(later).toEqual(expect.arrayContaining(old?.updatedBy ?? []));
    for (const h of hits.filter((x) => saidIn(x, /Thai|quit coffee/))) expect(h.updatedBy).toEqual([]);
  }, 120_000);
});
