import { Client } from 'pg';
import { anEvent } from '../builders/event-input';
import { OpenAIStubServer, startOpenAIStubServer, stubReply, StubHandler } from '../support/openai-stub-server';
import { scriptedStatementsModel } from '../support/scripted-models';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';

const WORD = 'Quokkaberry';
const ERASED_TEXT = `I drink ${WORD} tea`;
const SURVIVOR_TEXT = 'I drink tea';
const script: Record<string, string[]> = {
  [ERASED_TEXT]: [`The user drinks ${WORD} tea`],
  [SURVIVOR_TEXT]: ['The user drinks tea'],
};

/**
 * The scripted extractor, and a judge that merges "The user drinks tea" into any tea fact (SKIP):
 * the kind of merge that left the erased event's words in a fact with another source.
 */
function mergingModel(): StubHandler {
  const base = scriptedStatementsModel(() => script);
  return (req) => {
    const body = req.body as { response_format?: { json_schema?: { name?: string } }; messages?: Array<{ role: string; content: unknown }> } | undefined;
    if (body?.response_format?.json_schema?.name !== 'judge_facts') return base(req);
    const user = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user' && typeof m.content === 'string');
    const payload = JSON.parse((user?.content as string | undefined) ?? '{}') as {
      inputs?: Array<{ index: number; new?: { statement?: string }; candidates: Array<{ id: string; statement?: string }> }>;
    };
    return stubReply.json({
      decisions: (payload.inputs ?? []).map((input) => {
        const tea = input.candidates.find((c) => c.statement?.includes('tea'));
        return tea
          ? { index: input.index, action: 'SKIP', targetId: tea.id, reason: 'the same drink' }
          : { index: input.index, action: 'ADD', targetId: null, reason: 'new' };
      }),
    });
  };
}

/**
 * Erasure holds whatever the judge did: a fact the judge merged from the erased event and a
 * surviving one (SKIP) carries the erased event's word; after destroyEvent the word is in no fact
 * field, no Neo4j property of the namespace, no search result, no overlay and no embedding, and
 * the surviving event's own fact is derived again from its own words.
 */
describe('destroyEvent: a fact merged from the erased event and another source', () => {
  let t: TestApp;
  let stub: OpenAIStubServer;
  let owner: Client;
  let admin: string;
  let approver: string;
  const ns = uniqueNamespace('erase-merged');
  let erased: string;
  let survivor: string;
  let merged: string;

  const settled = () =>
    eventually(
      async () => {
        const s = (
          await gqlOk<{ pipelineStatus: { pending: number; outboxLag: number } }>(
            t.url,
            admin,
            `query($ns: String!) { pipelineStatus(namespace: $ns) { pending outboxLag } }`,
            { ns },
          )
        ).pipelineStatus;
        return s.pending === 0 && s.outboxLag === 0;
      },
      'derivation and projection',
      60_000,
    );
  const ingest = async (text: string, seq: number) =>
    (
      await gqlOk<{ ingestEvent: { event: { id: string } } }>(t.url, admin, `mutation($input: EventInput!) { ingestEvent(input: $input) { event { id } } }`, {
        input: anEvent(ns).inConversation('drinks', seq).by('USER').saying(text).build(),
      })
    ).ingestEvent.event.id;
  /** Every node and relationship property of the namespace (strings and string lists) that holds the word. */
  const neo4jHolding = async (): Promise<string[]> =>
    (
      await t.app.neo4j.executeQuery(
        `MATCH (n) WHERE n.namespace = $ns
         UNWIND keys(n) AS k
         WITH coalesce(n.id, elementId(n)) AS id, k, n[k] AS v
         WHERE (v IS :: STRING AND toLower(v) CONTAINS $w) OR (v IS :: LIST<STRING NOT NULL> AND any(s IN v WHERE toLower(s) CONTAINS $w))
         RETURN DISTINCT id + '.' + k AS at
         UNION
         MATCH (n)-[r]-() WHERE n.namespace = $ns
         UNWIND keys(r) AS k
         WITH elementId(r) AS id, k, r[k] AS v
         WHERE (v IS :: STRING AND toLower(v) CONTAINS $w) OR (v IS :: LIST<STRING NOT NULL> AND any(s IN v WHERE toLower(s) CONTAINS $w))
         RETURN DISTINCT id + '.' + k AS at`,
        { ns, w: WORD.toLowerCase() },
      )
    ).records.map((r) => r.get('at') as string);
  const search = async (token: string) =>
    JSON.stringify(
      await gqlOk(
        t.url,
        token,
        `query($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q, limit: 20) { kind channels fact { id statement object } event { id content } evidence { id content } } }`,
        { ns, q: WORD.toLowerCase() },
      ),
    ).toLowerCase();

  beforeAll(async () => {
    stub = await startOpenAIStubServer({ handler: mergingModel() });
    t = await startTestApp({
      OPENAI_BASE_URL: stub.baseUrl,
      OPENAI_API_KEY: 'stub',
      EXTRACTION_MODEL: 'stub',
      OFFLINE_EMBEDDER: 'hashing',
      DERIVE_MAX_WAIT_MS: '0',
      DERIVE_POLL_MS: '50',
    });
    admin = (await createToken(t, [{ namespacePattern: ns, capabilities: ['ADMIN'] }], 'erasing-admin')).token;
    approver = (await createToken(t, [{ namespacePattern: ns, capabilities: ['APPROVE'] }], 'dpo')).token;
    owner = new Client({ connectionString: t.databaseUrl });
    await owner.connect();
    erased = await ingest(ERASED_TEXT, 1);
    await settled();
    survivor = await ingest(SURVIVOR_TEXT, 2);
    await settled();
  }, 240_000);
  afterAll(async () => {
    await owner?.end();
    await t?.stop();
    await stub?.close();
  });

  it('before: the judge merged the survivor into the fact that carries the erased word', async () => {
    const facts = (
      await owner.query(
        `SELECT f.id, f.statement, array(SELECT s.event_id::text FROM silver.fact_sources s WHERE s.fact_id = f.id ORDER BY s.event_id) AS sources
           FROM silver.facts f WHERE f.namespace = $1 AND f.retired_at IS NULL`,
        [ns],
      )
    ).rows as Array<{ id: string; statement: string; sources: string[] }>;
    expect(facts).toEqual([{ id: expect.any(String), statement: `The user drinks ${WORD} tea`, sources: [erased, survivor].sort() }]);
    merged = (facts[0] as { id: string }).id;
    // An annotation quoting the word, on the merged fact.
    await gqlOk(t.url, admin, `mutation($input: OverlayInput!) { addOverlay(input: $input) { id } }`, {
      input: { factId: merged, kind: 'ANNOTATION', exact: WORD, body: `${WORD} is a brand` },
    });
    await settled();
    expect(await neo4jHolding()).not.toEqual([]);
    expect(await search(admin)).toContain(WORD.toLowerCase());
  }, 60_000);

  it('after destroyEvent: the word survives nowhere readable, and the survivor is derived again from its own words', async () => {
    const approval = (
      await gqlOk<{ requestApproval: { id: string } }>(t.url, admin, `mutation($input: ApprovalRequestInput!) { requestApproval(input: $input) { id } }`, {
        input: { namespace: ns, action: 'DESTROY_EVENT', params: { eventId: erased }, reason: 'erasure request' },
      })
    ).requestApproval.id;
    await gqlOk(t.url, approver, `mutation($id: ID!) { approve(id: $id, reason: "verified") { status } }`, { id: approval });
    await gqlOk(t.url, admin, `mutation($e: ID!, $a: ID!) { destroyEvent(eventId: $e, approvalId: $a) { id } }`, { e: erased, a: approval });
    await settled();

    // Silver: no fact field, quote, decision, entity, overlay or event embedding holds the word.
    const like = `%${WORD}%`;
    const left = (
      await owner.query(
        `SELECT (SELECT count(*)::int FROM silver.facts WHERE namespace = $2 AND (statement ILIKE $1 OR object_value ILIKE $1 OR predicate ILIKE $1)) AS facts,
                (SELECT count(*)::int FROM silver.fact_sources s JOIN silver.facts f ON f.id = s.fact_id WHERE f.namespace = $2 AND s.quote ILIKE $1) AS quotes,
                (SELECT count(*)::int FROM silver.judge_decisions WHERE namespace = $2 AND (statement ILIKE $1 OR candidates::text ILIKE $1 OR reason ILIKE $1)) AS decisions,
                (SELECT count(*)::int FROM silver.entities WHERE namespace = $2 AND (name ILIKE $1 OR array_to_string(aliases, ' ') ILIKE $1)) AS entities,
                (SELECT count(*)::int FROM gold.overlays WHERE namespace = $2 AND concat_ws(' ', exact, prefix, suffix, body, reason) ILIKE $1) AS overlays,
                (SELECT count(*)::int FROM silver.event_embeddings WHERE event_id = $3) AS event_embeddings,
                (SELECT count(*)::int FROM silver.facts WHERE id = $4 AND embedding IS NOT NULL) AS fact_embeddings`,
        [like, ns, erased, merged],
      )
    ).rows[0];
    expect(left).toEqual({ facts: 0, quotes: 0, decisions: 0, entities: 0, overlays: 0, event_embeddings: 0, fact_embeddings: 0 });
    const m = (await owner.query(`SELECT statement, retired_at, erased_at FROM silver.facts WHERE id = $1`, [merged])).rows[0];
    expect(m).toMatchObject({ statement: '[erased]' });
    expect(m.retired_at).not.toBeNull();
    expect(m.erased_at).not.toBeNull();

    // The survivor's own statement is back, from its own words, as a new fact.
    const live = await eventually(async () => {
      const rows = (
        await owner.query(
          `SELECT f.id, f.statement, array(SELECT s.event_id::text FROM silver.fact_sources s WHERE s.fact_id = f.id) AS sources
             FROM silver.facts f WHERE f.namespace = $1 AND f.retired_at IS NULL`,
          [ns],
        )
      ).rows as Array<{ id: string; statement: string; sources: string[] }>;
      return rows.length > 0 ? rows : null;
    }, 're-derivation of the survivor');
    expect(live.map((f) => ({ statement: f.statement, sources: f.sources }))).toEqual([{ statement: 'The user drinks tea', sources: [survivor] }]);
    await settled();

    // Neo4j: no property of any node or relationship of the namespace; search finds nothing of it.
    expect(await neo4jHolding()).toEqual([]);
    expect(await search(admin)).not.toContain(WORD.toLowerCase());
    const graph = await gqlOk<{ graphFacts: Array<{ id: string; statement: string }> }>(
      t.url,
      admin,
      `query($ns: String!) { graphFacts(where: { namespace: { eq: $ns } }) { id statement } }`,
      { ns },
    );
    expect(graph.graphFacts.map((f) => f.statement)).toEqual(['The user drinks tea']);
  }, 120_000);
});
