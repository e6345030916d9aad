import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`;
const STATUS = `query($ns: String!) { pipelineStatus(namespace: $ns) { pending outboxLag } }`;
const REEMBED = `mutation($ns: String) { reembed(namespace: $ns, reason: "new model") { id kind status namespace } }`;
const JOB = `query($id: ID!) { job(id: $id) { status progressDone message error } }`;
const SEARCH = `query($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q, limit: 10) { kind channels } }`;
const OLD = 'retired-model@0';

/**
 * A model change must not make what the old model embedded invisible: re-embedding gives every
 * current fact and every event a vector of the current model and re-projects it.
 */
describe('re-embedding after an embedding-model change', () => {
  let t: TestApp;
  const ns = uniqueNamespace('reembed');
  let token: string;
  const count = async (sql: string) => Number(((await t.app.ds.query(sql, [ns])) as Array<{ n: number }>)[0]?.n);
  const graphCount = async (label: 'Fact' | 'Event', model: string) =>
    Number(
      (
        await t.app.neo4j.executeQuery(`MATCH (n:${label}) WHERE n.namespace = $ns AND n.embeddingModel = $model RETURN count(n) AS n`, { ns, model })
      ).records[0]?.get('n'),
    );
  const settled = () =>
    eventually(
      async () => {
        const s = (await gqlOk<{ pipelineStatus: { pending: number; outboxLag: number } }>(t.url, token, STATUS, { ns })).pipelineStatus;
        return s.pending === 0 && s.outboxLag === 0;
      },
      'the namespace to settle',
      120_000,
    );

  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50', PROJECTOR_POLL_MS: '50' });
    token = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'READ', 'LIST', 'SEARCH', 'ADMIN'] }])).token;
    await gqlOk(t.url, token, INGEST, {
      input: [
        anEvent(ns).inConversation('c1', 1).by('USER').saying('I use vim for everything').build(),
        anEvent(ns).inConversation('c1', 2).by('USER').saying('I live in Berlin').build(),
        anEvent(ns).inConversation('c1', 3).by('USER').saying('Tomorrow we sail to the lighthouse').build(),
      ],
    });
    await settled();
  }, 180_000);
  afterAll(async () => t?.stop());

  it('re-embeds facts and events of the old model, re-projects them, and the vector channels find them again', async () => {
    const models = (await t.app.ds.query(`SELECT DISTINCT model FROM silver.event_embeddings WHERE namespace = $1`, [ns])) as Array<{ model: string }>;
    expect(models).toHaveLength(1);
    const model = (models[0] as { model: string }).model;
    const facts = await count(`SELECT count(*)::int AS n FROM silver.facts WHERE namespace = $1 AND retired_at IS NULL`);
    expect(facts).toBeGreaterThan(0);
    expect(await count(`SELECT count(*)::int AS n FROM silver.event_embeddings WHERE namespace = $1 AND model = '${model}'`)).toBe(3);

    // As if these had been embedded by a model that is no longer configured.
    await t.app.ds.query(`UPDATE silver.facts SET embedding_model = '${OLD}' WHERE namespace = $1`, [ns]);
    await t.app.ds.query(`UPDATE silver.event_embeddings SET model = '${OLD}' WHERE namespace = $1`, [ns]);
    await t.app.neo4j.executeQuery(`MATCH (n) WHERE (n:Fact OR n:Event) AND n.namespace = $ns SET n.embeddingModel = $old`, { ns, old: OLD });
    const before = (await gqlOk<{ searchMemory: Array<{ channels: string[] }> }>(t.url, token, SEARCH, { ns, q: 'sailing to a lighthouse' })).searchMemory;
    expect(before.some((h) => h.channels.includes('vector') || h.channels.includes('event_vector'))).toBe(false);

    // A worker starting with the current model sees the change and queues one job for every namespace (and not a second).
    const jobId = await t.app.services.reembed.enqueueIfModelChanged();
    expect(jobId).not.toBeNull();
    expect(await t.app.services.reembed.enqueueIfModelChanged()).toBeNull();
    const job = await eventually(
      async () => {
        const j = (
          await gqlOk<{ job: { status: string; progressDone: number; message: string | null; error: string | null } }>(t.url, t.adminToken, JOB, { id: jobId })
        ).job;
        return j.status === 'succeeded' || j.status === 'failed' ? j : undefined;
      },
      'the re-embedding job',
      60_000,
    );
    expect(job).toMatchObject({ status: 'succeeded', error: null });
    expect(job.progressDone).toBeGreaterThanOrEqual(2);
    await settled();

    expect(await count(`SELECT count(*)::int AS n FROM silver.facts WHERE namespace = $1 AND retired_at IS NULL AND embedding_model = '${model}'`)).toBe(facts);
    expect(await count(`SELECT count(*)::int AS n FROM silver.event_embeddings WHERE namespace = $1 AND model = '${model}'`)).toBe(3);
    expect(await graphCount('Event', model)).toBe(3);
    expect(await graphCount('Fact', model)).toBeGreaterThanOrEqual(facts);
    const after = (await gqlOk<{ searchMemory: Array<{ channels: string[] }> }>(t.url, token, SEARCH, { ns, q: 'sailing to a lighthouse' })).searchMemory;
    expect(after.some((h) => h.channels.includes('event_vector'))).toBe(true);
    // Nothing left to do: the check at the next start queues nothing.
    expect(await t.app.services.reembed.enqueueIfModelChanged()).toBeNull();
  });

  it('runs on demand for an admin of the namespace and refuses anyone else', async () => {
    const res = await gqlOk<{ reembed: { id: string; kind: string; status: string; namespace: string } }>(t.url, token, REEMBED, { ns });
    expect(res.reembed).toMatchObject({ kind: 'reembed', status: 'queued', namespace: ns });
    const reader = (await createToken(t, [{ namespacePattern: ns, capabilities: ['READ', 'SEARCH'] }], 'reader')).token;
    expect((await gql(t.url, reader, REEMBED, { ns })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await gql(t.url, token, REEMBED, { ns: null })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});
