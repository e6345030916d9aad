import { Client } from 'pg';
import { anEvent } from '../builders/event-input';
import { createDefaultHandler, startOpenAIStubServer, OpenAIStubServer, StubHandler, stubReply } from '../support/openai-stub-server';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';
import { scrape, total } from '../support/prometheus';

const STATUS = `query($ns: String!) { pipelineStatus(namespace: $ns) { pending deadLetters } }`;

/** A model that answers garbage whenever the batch contains the word POISON. */
function poisonedModel(): StubHandler {
  const normal = createDefaultHandler({ embeddingDimensions: 8 });
  return (req) => {
    const body = JSON.stringify(req.body ?? {});
    return body.includes('POISON') && body.includes('extract_facts') ? stubReply.text('Sorry, I cannot help with that. {not json') : normal(req);
  };
}

describe('dead letters: a bad event never blocks the pipeline', () => {
  let t: TestApp;
  let stub: OpenAIStubServer;
  let sql: Client;
  const ns = uniqueNamespace('dead');
  let admin: string;
  let user: string;

  beforeAll(async () => {
    stub = await startOpenAIStubServer({ handler: poisonedModel() });
    t = await startTestApp({
      OPENAI_BASE_URL: stub.baseUrl,
      OPENAI_API_KEY: 'stub',
      EXTRACTION_MODEL: 'stub',
      OFFLINE_EMBEDDER: 'hashing',
      DERIVE_MAX_WAIT_MS: '0',
      DERIVE_POLL_MS: '50',
      DERIVE_MAX_ATTEMPTS: '2',
      DERIVE_RETRY_BASE_SECONDS: '0',
      MODEL_MAX_RETRIES: '0',
    });
    admin = (await createToken(t, [{ namespacePattern: ns, capabilities: ['ADMIN'] }])).token;
    user = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'READ', 'LIST'] }])).token;
    sql = new Client({ connectionString: t.databaseUrl });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await t?.stop();
    await stub?.close();
  });

  it('derives the good events of a batch, parks the bad one with its error and the raw output, and retries it on request', async () => {
    const res = await gqlOk<{ ingestEvents: Array<{ event: { id: string } }> }>(
      t.url,
      user,
      `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { event { id } } }`,
      {
        input: [anEvent(ns).saying('first good note').build(), anEvent(ns).saying('POISON pill').build(), anEvent(ns).saying('second good note').build()],
      },
    );
    const [good1, bad, good2] = res.ingestEvents.map((r) => r.event.id);
    const settled = await eventually(
      async () => {
        const s = (await gqlOk<{ pipelineStatus: { pending: number; deadLetters: number } }>(t.url, user, STATUS, { ns })).pipelineStatus;
        const attempts = (await sql.query(`SELECT attempts FROM ops.derivation_queue WHERE event_id = $1`, [bad])).rows[0]?.attempts;
        return s.pending === 0 && s.deadLetters === 1 && attempts === 2 ? s : undefined;
      },
      'the bad event to exhaust its attempts',
      30_000,
    );
    expect(settled).toEqual({ pending: 0, deadLetters: 1 });

    const status = async (id: string) =>
      (
        await gqlOk<{ event: { derivationStatus: string; facts: unknown[] } }>(
          t.url,
          user,
          `query($id: ID!) { event(id: $id) { derivationStatus facts { id } } }`,
          { id },
        )
      ).event;
    expect(await status(good1 as string)).toMatchObject({ derivationStatus: 'DONE', facts: [{}] });
    expect(await status(good2 as string)).toMatchObject({ derivationStatus: 'DONE', facts: [{}] });
    expect(await status(bad as string)).toMatchObject({ derivationStatus: 'FAILED', facts: [] });
    const letter = (
      await sql.query(`SELECT error_code, error, raw_output, attempts, next_retry_at FROM silver.dead_letters WHERE event_id = $1 AND resolved_at IS NULL`, [
        bad,
      ])
    ).rows[0];
    expect(letter).toMatchObject({ error_code: 'MALFORMED_OUTPUT', attempts: 2, next_retry_at: null });
    expect(letter.raw_output).toContain('cannot help');

    // The operator sees it in /metrics: the batch fell back to one event at a time, and each failed attempt left a dead letter.
    const metric = async (name: string) => total(await scrape(t.url), name);
    expect(await metric('medallion_derive_batch_fallbacks_total')).toBeGreaterThanOrEqual(1);
    expect(await metric('medallion_derive_dead_letters_total')).toBe(2);
    expect(await metric('medallion_derive_dead_letters_open')).toBe(1);

    // Nothing keeps new work waiting behind it.
    await gqlOk(t.url, user, `mutation($input: EventInput!) { ingestEvent(input: $input) { status } }`, {
      input: anEvent(ns).saying('third good note').build(),
    });
    await eventually(
      async () => (await gqlOk<{ pipelineStatus: { pending: number } }>(t.url, user, STATUS, { ns })).pipelineStatus.pending === 0,
      'the new event',
    );

    expect((await gql(t.url, user, `mutation($ns: String!) { retryDeadLetters(namespace: $ns) }`, { ns })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    stub.setHandler(createDefaultHandler({ embeddingDimensions: 8 })); // the model is fixed
    expect(
      (await gqlOk<{ retryDeadLetters: number }>(t.url, admin, `mutation($ns: String!) { retryDeadLetters(namespace: $ns) }`, { ns })).retryDeadLetters,
    ).toBe(1);
    await eventually(async () => (await status(bad as string)).derivationStatus === 'DONE', 'the retried event');
    expect((await gqlOk<{ pipelineStatus: { deadLetters: number } }>(t.url, user, STATUS, { ns })).pipelineStatus.deadLetters).toBe(0);
    expect((await sql.query(`SELECT resolved_at IS NOT NULL AS resolved FROM silver.dead_letters WHERE event_id = $1`, [bad])).rows).toEqual([
      { resolved: true },
    ]);
  });
});
