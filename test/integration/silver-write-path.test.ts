import { Client } from 'pg';
import { LineageRepository } from '../../src/silver/lineage.repository';
import { anEvent } from '../builders/event-input';
import { OpenAIStubServer, startOpenAIStubServer } from '../support/openai-stub-server';
import { scriptedStatementsModel } from '../support/scripted-models';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`;

/**
 * The write path of derivation through the real worker, store and model adapters (the model
 * faked at its HTTP boundary): corroboration stays within its documented cap, runs record what
 * made them, and a rebuild links each re-derived fact to the fact it replaces.
 */
describe('Silver write path: corroboration cap, run provenance, lineage across rebuilds', () => {
  let t: TestApp;
  let stub: OpenAIStubServer;
  let sql: Client;
  let token: string;
  let script: Record<string, string[]> = {};

  beforeAll(async () => {
    stub = await startOpenAIStubServer({ handler: scriptedStatementsModel(() => script) });
    t = await startTestApp({
      OPENAI_BASE_URL: stub.baseUrl,
      OPENAI_API_KEY: 'stub',
      EXTRACTION_MODEL: 'stub',
      OFFLINE_EMBEDDER: 'hashing',
      DERIVE_MAX_WAIT_MS: '0',
      DERIVE_POLL_MS: '50',
    });
    token = (await createToken(t, [{ namespacePattern: 'writepath-*', capabilities: ['INGEST', 'READ', 'LIST', 'ADMIN'] }])).token;
    sql = new Client({ connectionString: t.databaseUrl });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await t?.stop();
    await stub?.close();
  });

  const derived = (ns: string) =>
    eventually(
      async () =>
        (await gqlOk<{ pipelineStatus: { pending: number } }>(t.url, token, `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`, { ns }))
          .pipelineStatus.pending === 0,
      'derivation',
      60_000,
    );
  const ingest = async (ns: string, contents: string[], from = 0) => {
    const input = contents.map((c, i) =>
      anEvent(ns)
        .inConversation('c', from + i)
        .by('USER')
        .saying(c)
        .at(new Date(Date.UTC(2026, 0, 1 + from + i)).toISOString())
        .build(),
    );
    await gqlOk(t.url, token, INGEST, { input });
  };
  const live = async (ns: string) =>
    (
      await sql.query(
        `SELECT f.id, f.statement, f.confidence, f.importance, (SELECT count(*)::int FROM silver.fact_sources s WHERE s.fact_id = f.id) AS sources
           FROM silver.facts f WHERE f.namespace = $1 AND f.retired_at IS NULL ORDER BY f.statement`,
        [ns],
      )
    ).rows as Array<{ id: string; statement: string; confidence: number; importance: number; sources: number }>;

  it('caps the corroboration bonus at +0.2 importance (and 0.99 confidence), whether the repeats land in one batch or one by one', async () => {
    script = { tea: ['The user likes green tea'] };
    const together = uniqueNamespace('writepath-batch');
    await ingest(
      together,
      Array.from({ length: 7 }, () => 'tea'),
    );
    await derived(together);
    // All seven in one batch: the repeats corroborate a fact of the same batch, folded in before it is inserted.
    expect((await sql.query(`SELECT count(*)::int AS n FROM silver.derivation_runs WHERE namespace = $1`, [together])).rows[0].n).toBe(1);
    const apart = uniqueNamespace('writepath-apart');
    for (let i = 0; i < 7; i++) {
      await ingest(apart, ['tea'], i);
      await derived(apart);
    }
    // One fact, six corroborations: confidence 0.9 + 6 × 0.05 → 0.99; importance preference 0.7 + min(0.2, 6 × 0.05) = 0.9.
    for (const ns of [together, apart]) {
      expect(await live(ns)).toEqual([{ id: expect.any(String), statement: 'The user likes green tea', confidence: 0.99, importance: 0.9, sources: 7 }]);
      const skips = await sql.query(`SELECT count(*)::int AS n FROM silver.judge_decisions WHERE namespace = $1 AND action = 'SKIP'`, [ns]);
      expect(skips.rows[0].n).toBe(6);
    }
  });

  it('records the extractor, prompt versions and models on the run of every fact', async () => {
    script = { coffee: ['The user drinks coffee'] };
    const ns = uniqueNamespace('writepath-provenance');
    await ingest(ns, ['coffee']);
    await derived(ns);
    const runs = await sql.query(
      `SELECT f.statement, r.extractor, r.extraction_model, r.extraction_prompt_version, r.judge_model, r.judge_prompt_version, r.embedding_model
         FROM silver.facts f JOIN silver.derivation_runs r ON r.id = f.derivation_run_id WHERE f.namespace = $1`,
      [ns],
    );
    expect(runs.rows).toEqual([
      {
        statement: 'The user drinks coffee',
        extractor: 'openai',
        extraction_model: 'openai:stub',
        extraction_prompt_version: 'extract-facts@1',
        judge_model: 'openai:stub',
        judge_prompt_version: 'judge-facts@1',
        embedding_model: expect.stringMatching(/^hashing-ngrams-/),
      },
    ]);
  });

  it('links each fact a rebuild re-derives to the fact it replaces (kept, changed), none for dropped facts, across two rebuilds', async () => {
    const ns = uniqueNamespace('writepath-lineage');
    script = {
      tea: ['The user likes green tea'],
      vim: ['The user uses vim for everything', 'The user lives in Berlin'],
      cats: ['The user has two cats'],
    };
    await ingest(ns, ['tea', 'vim', 'cats']);
    await derived(ns);
    const before = new Map((await live(ns)).map((f) => [f.statement, f.id]));
    expect([...before.keys()].sort()).toEqual([
      'The user has two cats',
      'The user likes green tea',
      'The user lives in Berlin',
      'The user uses vim for everything',
    ]);

    // New extractor behaviour: tea kept word for word, vim reworded, Berlin and the cats no longer extracted.
    script = { tea: ['The user likes green tea'], vim: ['The user uses vim for everything, daily'], cats: [] };
    const rebuild = async (): Promise<string> => {
      const job = (
        await gqlOk<{ rebuildSilver: { id: string } }>(t.url, token, `mutation($ns: String!) { rebuildSilver(namespace: $ns, reason: "lineage") { id } }`, {
          ns,
        })
      ).rebuildSilver;
      await eventually(
        async () =>
          (await gqlOk<{ job: { status: string } }>(t.url, token, `query($id: ID!) { job(id: $id) { status } }`, { id: job.id })).job.status === 'succeeded',
        'the rebuild',
        60_000,
      );
      return job.id;
    };
    const jobId = await rebuild();
    const after = new Map((await live(ns)).map((f) => [f.statement, f.id]));
    expect([...after.keys()].sort()).toEqual(['The user likes green tea', 'The user uses vim for everything, daily']);

    const lineage = new LineageRepository(t.app.ds);
    const id = (m: Map<string, string>, s: string) => m.get(s) as string;
    const [kept] = await lineage.successorsOf([id(before, 'The user likes green tea')]);
    expect(kept).toMatchObject({ newFactId: id(after, 'The user likes green tea'), jobId, sharedEvents: 1, similarity: 1 });
    const [changed] = await lineage.successorsOf([id(before, 'The user uses vim for everything')]);
    expect(changed).toMatchObject({ newFactId: id(after, 'The user uses vim for everything, daily'), jobId, sharedEvents: 1 });
    expect(changed?.similarity).toBeGreaterThan(0.5);
    expect(changed?.similarity).toBeLessThan(1);
    // Berlin shared its event with the reworded vim fact, but says something else: dropped, like the cats.
    expect(await lineage.successorsOf([id(before, 'The user lives in Berlin'), id(before, 'The user has two cats')])).toEqual([]);
    expect((await lineage.predecessorsOf([id(after, 'The user uses vim for everything, daily')])).map((l) => l.oldFactId)).toEqual([
      id(before, 'The user uses vim for everything'),
    ]);

    // A second rebuild: the first fact is followed through both to where it lives now.
    await rebuild();
    const now = new Map((await live(ns)).map((f) => [f.statement, f.id]));
    expect(id(now, 'The user likes green tea')).not.toBe(id(after, 'The user likes green tea'));
    expect(await lineage.latestOf(id(before, 'The user likes green tea'))).toEqual([id(now, 'The user likes green tea')]);
    expect(await lineage.latestOf(id(before, 'The user has two cats'))).toEqual([]);
  });
});
