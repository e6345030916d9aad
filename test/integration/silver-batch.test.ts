import { Client } from 'pg';
import { AppMetrics } from '../../src/api/metrics';
import { HashingEmbedder } from '../../src/models/offline/hashing-embedder';
import { RuleJudge } from '../../src/models/offline/rule-judge';
import { CandidateRepository } from '../../src/silver/candidate.repository';
import { DeriveJob, deriveStep } from '../../src/silver/derive.job';
import { DeriveService } from '../../src/silver/derive.service';
import { ExtractedFact, ExtractionEvent, ExtractionResult, Extractor } from '../../src/silver/model-ports';
import { ModelException, ModelExceptionCode } from '../../src/silver/model.exception';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, gqlOk, startTestApp, TestApp } from '../support/test-app';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { event { id } } }`;

/** What the scripted extractor reads from each event: one "uses" fact about Caroline. */
const SAID: Record<string, { statement: string; object: string; replaces?: string }> = {
  'I use vim every day': { statement: 'Caroline uses vim every day', object: 'vim' },
  'I use vim': { statement: 'Caroline uses vim', object: 'vim' },
  'I switched to neovim': { statement: 'Caroline switched to neovim', object: 'neovim', replaces: 'vim' },
  'I use neovim': { statement: 'Caroline uses neovim', object: 'neovim' },
  POISON: { statement: '', object: '' },
};

/** A deterministic extractor (the batch's facts are exactly these); fails a batch holding POISON. */
class ScriptedExtractor implements Extractor {
  readonly model = 'scripted@1';
  async extract(events: ExtractionEvent[]): Promise<ExtractionResult> {
    if (events.some((e) => e.content === 'POISON')) throw new ModelException(ModelExceptionCode.MALFORMED_OUTPUT, 'scripted: cannot read POISON');
    const facts: ExtractedFact[] = events.map((e, i) => {
      const s = SAID[e.content] as (typeof SAID)[string];
      return {
        ref: `f${i}`,
        statement: s.statement,
        factType: 'preference',
        subjectRef: 'c',
        predicate: 'uses',
        objectValue: s.object,
        objectRef: null,
        isNegation: false,
        confidence: 0.9,
        validFrom: null,
        validTo: null,
        replacesValue: s.replaces ?? null,
        sources: [{ eventId: e.id, start: 0, end: e.content.length }],
      };
    });
    return { entities: [{ ref: 'c', name: 'Caroline', type: 'person', aliases: [], mentions: [] }], facts, relationships: [] };
  }
}

describe('Silver: one batch with repeated and near-identical statements commits as one batch', () => {
  let t: TestApp;
  let sql: Client;
  let user: string;

  beforeAll(async () => {
    // API only: the test takes each batch itself, so it knows exactly what one batch held.
    t = await startTestApp({}, { api: true, worker: false });
    user = (await createToken(t, [{ namespacePattern: 'batch*', capabilities: ['INGEST', 'READ'] }])).token;
    sql = new Client({ connectionString: t.databaseUrl });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await t?.stop();
  });

  const ingest = async (ns: string, contents: string[]): Promise<string[]> => {
    const input = contents.map((c, i) =>
      anEvent(ns)
        .inConversation('c1', i + 1)
        .by('USER', 'Caroline')
        .saying(c)
        .at(new Date(Date.UTC(2026, 0, 1, 9, i)).toISOString())
        .build(),
    );
    const res = await gqlOk<{ ingestEvents: Array<{ event: { id: string } }> }>(t.url, user, INGEST, { input });
    return res.ingestEvents.map((r) => r.event.id);
  };
  /** One derive step through the job and the service's metrics, as the worker runs it. */
  const deriveOnce = async (extractor: Extractor): Promise<AppMetrics> => {
    const metrics = new AppMetrics(t.app.ds, 'worker');
    const service = new DeriveService({ extractor, judge: new RuleJudge(), embedder: new HashingEmbedder() }, new CandidateRepository(t.app.ds), {
      candidateLimit: 8,
      trigramThreshold: 0.3,
    });
    const job = new DeriveJob(t.app.ds, t.app.repositories.events, service, {
      workerId: 'batch-test',
      batchSize: 100,
      maxWaitMs: 0,
      leaseSeconds: 60,
      maxAttempts: 3,
      retryBaseSeconds: 600,
    });
    expect(
      await deriveStep(
        job,
        1,
        (r) => metrics.observeDerive(r),
        () => undefined,
      )(),
    ).toBe(true);
    return metrics;
  };
  const counter = async (m: AppMetrics, name: string): Promise<number> => (await m.registry.getSingleMetric(name)?.get())?.values[0]?.value ?? 0;
  const rows = async (q: string, ns: string): Promise<Array<Record<string, unknown>>> => (await sql.query(q, [ns])).rows;

  it('skips a repeat of a repeat, supersedes through skipped repeats, and writes every row once', async () => {
    const ns = uniqueNamespace('batch');
    // A statement, a near-paraphrase, the paraphrase again (same sentence, two events), its
    // supersession, and the new value said again: the judge names facts of this same batch.
    const ids = await ingest(ns, ['I use vim every day', 'I use vim', 'I use vim', 'I switched to neovim', 'I use neovim']);
    const metrics = await deriveOnce(new ScriptedExtractor());

    expect(
      await rows(
        `SELECT event_count, fact_count, extractor, extraction_model, extraction_prompt_version, judge_prompt_version FROM silver.derivation_runs WHERE namespace = $1`,
        ns,
      ),
    ).toEqual([
      // An extractor without provenance is named by its model; the offline judge uses no prompt.
      { event_count: 5, fact_count: 2, extractor: 'scripted@1', extraction_model: 'scripted@1', extraction_prompt_version: null, judge_prompt_version: null },
    ]);
    expect(await rows(`SELECT count(*)::int AS n FROM silver.dead_letters WHERE namespace = $1`, ns)).toEqual([{ n: 0 }]);
    expect(await rows(`SELECT status, count(*)::int AS n FROM ops.derivation_queue WHERE namespace = $1 GROUP BY status`, ns)).toEqual([
      { status: 'done', n: 5 },
    ]);
    expect([await counter(metrics, 'medallion_derive_batches_total'), await counter(metrics, 'medallion_derive_batch_fallbacks_total')]).toEqual([1, 0]);
    expect([await counter(metrics, 'medallion_derive_events_total'), await counter(metrics, 'medallion_derive_dead_letters_total')]).toEqual([5, 0]);

    const facts = await rows(
      `SELECT f.statement, (f.superseded_by IS NOT NULL) AS superseded, (f.valid_to IS NOT NULL) AS closed, f.retired_at IS NULL AS live,
              array_agg(s.event_id::text ORDER BY s.event_id) AS events
         FROM silver.facts f JOIN silver.fact_sources s ON s.fact_id = f.id WHERE f.namespace = $1 GROUP BY f.id ORDER BY f.statement`,
      ns,
    );
    const [e1, e2, e3, e4, e5] = ids as [string, string, string, string, string];
    expect(facts).toEqual([
      { statement: 'Caroline switched to neovim', superseded: false, closed: false, live: true, events: [e4, e5].sort() },
      { statement: 'Caroline uses vim every day', superseded: true, closed: true, live: true, events: [e1, e2, e3].sort() },
    ]);
    const decisions = await rows(
      `SELECT d.action, t.statement AS target FROM silver.judge_decisions d LEFT JOIN silver.facts t ON t.id = d.target_fact_id WHERE d.namespace = $1 ORDER BY d.decided_at, d.statement`,
      ns,
    );
    expect(decisions.map((d) => `${d.action} ${d.target ?? '-'}`).sort()).toEqual(
      [
        'ADD -',
        'SKIP Caroline uses vim every day', // the paraphrase
        'SKIP Caroline uses vim every day', // the paraphrase again: it named the skipped paraphrase
        'SUPERSEDE Caroline uses vim every day',
        'SKIP Caroline switched to neovim',
      ].sort(),
    );
  });

  it('counts a batch that falls back to one event at a time, and the dead letter it leaves', async () => {
    const ns = uniqueNamespace('batch-poison');
    await ingest(ns, ['I use vim', 'POISON', 'I use neovim']);
    const metrics = await deriveOnce(new ScriptedExtractor());
    expect([await counter(metrics, 'medallion_derive_batches_total'), await counter(metrics, 'medallion_derive_batch_fallbacks_total')]).toEqual([1, 1]);
    expect([await counter(metrics, 'medallion_derive_events_total'), await counter(metrics, 'medallion_derive_dead_letters_total')]).toEqual([2, 1]);
    expect(await rows(`SELECT count(*)::int AS n FROM silver.derivation_runs WHERE namespace = $1`, ns)).toEqual([{ n: 2 }]);
    expect(await counter(metrics, 'medallion_derive_dead_letters_open')).toBeGreaterThanOrEqual(1);
  });
});
