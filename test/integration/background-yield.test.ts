import { anEvent } from '../builders/event-input';
import { scrape, total } from '../support/prometheus';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`;
const SEARCH = `query($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q, limit: 5) { kind } }`;
const STATUS = `query($ns: String!) { pipelineStatus(namespace: $ns) { pending outboxLag } }`;
const PAUSED = 'medallion_background_yield_seconds_total';

const LINES = [
  'I moved to Lisbon last spring for a new job at a design studio',
  'my sister Ana lives in Porto and visits most weekends',
  'I drink two espressos every morning before work',
  'we adopted a grey cat called Miso in March',
  'I started learning the cello in September',
  'my manager Rui wants the redesign shipped by Friday',
  'I am allergic to shellfish so I skip the seafood places',
  'on Thursdays I climb at the gym near the river',
];

const chat = (ns: string, n: number) =>
  Array.from({ length: n }, (_, i) =>
    anEvent(ns)
      .inConversation('c1', i + 1)
      .by(i % 2 === 0 ? 'USER' : 'ASSISTANT')
      .saying(`${LINES[i % LINES.length] as string} (note ${i + 1})`)
      .at(new Date(Date.UTC(2026, 2, 1, 9, i)).toISOString())
      .build(),
  );

/**
 * Readers first (platform/foreground.ts, docs/operations.md "Searches while the memory works"):
 * with the default BACKGROUND_YIELD, a search served by the API is heard through PostgreSQL
 * (NOTIFY medallion_reads) by the process running the stages, which then pause after each step
 * that did work; derivation still finishes. Without searches the same work runs without a pause.
 */
describe('background work yields to searches', () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    // BACKGROUND_YIELD as shipped (the test app turns it off for the other tests).
    t = await startTestApp({ BACKGROUND_YIELD: '1', DERIVE_QUIET_MS: '200', DERIVE_BATCH_SIZE: '4' });
    token = (await createToken(t, [{ namespacePattern: 'yield*', capabilities: ['INGEST', 'READ', 'SEARCH'] }])).token;
  }, 180_000);
  afterAll(async () => {
    await t?.stop();
  });

  const paused = async (stage: string) => total(await scrape(t.url), PAUSED, { stage });
  const settled = async (ns: string) => {
    const { pipelineStatus } = await gqlOk<{ pipelineStatus: { pending: number; outboxLag: number } }>(t.url, token, STATUS, { ns });
    return pipelineStatus.pending === 0 && pipelineStatus.outboxLag === 0;
  };

  it('derives without pausing while no one searches', async () => {
    const ns = uniqueNamespace('yield-quiet');
    const before = await paused('derivation');
    await gqlOk(t.url, token, INGEST, { input: chat(ns, 24) });
    await eventually(() => settled(ns), 'the chat derived and projected', 120_000);
    expect(await paused('derivation')).toBe(before);
  }, 180_000);

  it('pauses derivation between its steps while searches are served, and still derives everything', async () => {
    const ns = uniqueNamespace('yield-busy');
    const before = await paused('derivation');
    await gqlOk(t.url, token, INGEST, { input: chat(ns, 24) });
    let searches = 0;
    await eventually(
      async () => {
        await gqlOk(t.url, token, SEARCH, { ns, q: 'where does the user live?' });
        searches += 1;
        return settled(ns);
      },
      'the chat derived and projected while searched',
      120_000,
    );
    expect(searches).toBeGreaterThan(1);
    expect(await paused('derivation')).toBeGreaterThan(before);
    // Derivation went on: every event was derived (pending 0 above) and has its facts.
    const { searchMemory } = await gqlOk<{ searchMemory: Array<{ kind: string }> }>(t.url, token, SEARCH, { ns, q: 'cello' });
    expect(searchMemory.some((h) => h.kind === 'FACT')).toBe(true);
  }, 180_000);
});
