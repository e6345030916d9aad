import { anEvent } from '../builders/event-input';
import { malformedStatement } from '../../src/silver/statement-shape';
import { OFFLINE_RULES_MODEL } from '../../src/models/offline/rule-set';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status event { id } } }`;
const PENDING = `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`;
const FACTS = `query($ns: String!) { facts(namespace: $ns, first: 50) { edges { node { id statement object extractionModel } } } }`;

type FactRow = { id: string; statement: string; object: string | null; extractionModel: string };
type Facts = { facts: { edges: Array<{ node: FactRow }> } };

/**
 * What the offline rules write, through the public path with the default offline models (issue
 * 44): no malformed statement reaches Silver (a list of values ends at the clause after it, and the
 * quality gate removes what is still cut), and every fact names the rule set that made it.
 */
describe('statements the offline rules write', () => {
  let t: TestApp;
  let token: string;
  const ns = uniqueNamespace('statements');

  beforeAll(async () => {
    t = await startTestApp({ DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50' });
    token = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'READ', 'LIST'] }])).token;
    const turns = [
      "I'm allergic to peanuts, so be careful with recipes.",
      'I switched to night shifts, which is tiring but rewarding.',
      'I added the version column and now the client shows stale data errors all the time',
      'I booked a table at Nopa and',
    ];
    await gqlOk(t.url, token, INGEST, {
      input: turns.map((text, i) =>
        anEvent(ns)
          .inConversation('c1', i + 1)
          .by('USER')
          .saying(text)
          .at(`2026-11-20T10:0${i}:00.000Z`)
          .build(),
      ),
    });
    await eventually(
      async () => (await gqlOk<{ pipelineStatus: { pending: number } }>(t.url, token, PENDING, { ns })).pipelineStatus.pending === 0,
      'derivation',
    );
  });
  afterAll(async () => t?.stop());

  it('writes no malformed statement, and keeps the value a turn states before its aside', async () => {
    const facts = (await gqlOk<Facts>(t.url, token, FACTS, { ns })).facts.edges.map((e) => e.node);
    expect(facts.map((f) => f.statement)).toEqual(expect.arrayContaining(['The user is allergic to peanuts', 'The user switched to night shifts']));
    expect(facts.filter((f) => malformedStatement(f.statement, f.object)).map((f) => f.statement)).toEqual([]);
    expect(facts.some((f) => /\band$/.test(f.statement))).toBe(false);
  });

  it('names the rule set on every fact', async () => {
    const facts = (await gqlOk<Facts>(t.url, token, FACTS, { ns })).facts.edges.map((e) => e.node);
    expect(facts.length).toBeGreaterThan(0);
    expect(new Set(facts.map((f) => f.extractionModel))).toEqual(new Set([OFFLINE_RULES_MODEL]));
  });
});
