import { Client } from 'pg';
import { sentence, seeded } from '../../bench/chaos-load';
import { loadEmbedder, loadModels } from '../../src/app/models';
import { CandidateRepository } from '../../src/silver/candidate.repository';
import { DeriveJob } from '../../src/silver/derive.job';
import { DeriveService } from '../../src/silver/derive.service';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, gqlOk, startTestApp, TestApp } from '../support/test-app';

/**
 * Issue 43: Silver equals a fresh derivation of the same Bronze, however the events were cut into
 * batches. Chaos-style turns (two conversations of one speaker, "Dana", interleaved; the bench's
 * templates, whose generated people include a "Dana" too) are derived as they would trickle in
 * (one event per batch) and all at once (batches of 100), with the service's default models; the
 * current facts, by statement and the events they rest on, are the same.
 */

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`;

/** The turns of two clients, interleaved in groups of 1-4 as the chaos load sends them. */
function chaosTurns(seed: number, count: number): Array<Array<{ conversation: string; key: string; seq: number; at: string; content: string }>> {
  const order = seeded(seed);
  const clients = [seeded(seed * 31 + 1), seeded(seed * 31 + 2)] as const;
  const seqs = [0, 0];
  let clock = Date.UTC(2026, 5, 1);
  const groups: Array<Array<{ conversation: string; key: string; seq: number; at: string; content: string }>> = [];
  for (let n = 0; n < count;) {
    const c = order() < 0.5 ? 0 : 1;
    const rnd = clients[c];
    const size = Math.min(1 + Math.floor(rnd() * 4), count - n);
    groups.push(
      Array.from({ length: size }, () => {
        seqs[c] = (seqs[c] as number) + 1;
        clock += 60_000;
        n += 1;
        return {
          conversation: `conv-${c + 1}`,
          key: `c${c + 1}-${seqs[c]}`,
          seq: seqs[c] as number,
          at: new Date(clock).toISOString(),
          content: sentence(rnd),
        };
      }),
    );
  }
  return groups;
}

describe('Silver does not depend on how events were batched', () => {
  let t: TestApp;
  let sql: Client;
  let token: string;
  const prefix = uniqueNamespace('batchinv');

  beforeAll(async () => {
    // API only: the test takes each batch itself, so it decides how the events are cut.
    t = await startTestApp({}, { api: true, worker: false });
    token = (await createToken(t, [{ namespacePattern: `${prefix}*`, capabilities: ['INGEST', 'READ'] }])).token;
    sql = new Client({ connectionString: t.databaseUrl });
    await sql.connect();
  }, 120_000);
  afterAll(async () => {
    await sql?.end();
    await t?.stop();
  });

  /** Current facts: statement and the (source/key: quote) of each event it rests on. */
  const currentFacts = async (ns: string): Promise<string[]> => {
    const { rows } = await sql.query<{ fact: string }>(
      `SELECT f.statement || ' :: ' || string_agg(e.source_event_id || ':' || s.quote, ' | ' ORDER BY e.source_event_id, s.span_start) AS fact
         FROM silver.facts f JOIN silver.fact_sources s ON s.fact_id = f.id JOIN bronze.events e ON e.id = s.event_id
        WHERE f.namespace = $1 AND f.retired_at IS NULL AND f.superseded_by IS NULL AND f.valid_to IS NULL
        GROUP BY f.id, f.statement`,
      [ns],
    );
    return rows.map((r) => r.fact).sort();
  };

  it('chaos-style turns derived one event per batch and 100 per batch give the same current facts', async () => {
    const groups = chaosTurns(7, 300);
    const models = loadModels(t.app.config, await loadEmbedder(t.app.config, () => undefined), () => undefined);
    const deriveAll = async (ns: string, batchSize: number) => {
      const job = new DeriveJob(t.app.ds, t.app.repositories.events, new DeriveService(models, new CandidateRepository(t.app.ds), t.app.config.derive), {
        ...t.app.config.derive,
        workerId: `batchinv-${batchSize}`,
        batchSize,
        maxWaitMs: 0,
      });
      for (;;) {
        const r = await job.runNamespace(ns);
        if (r.kind === 'failed') throw new Error(r.error);
        if (r.kind === 'skipped') return;
      }
    };
    const trickle = `${prefix}-trickle`;
    const fresh = `${prefix}-fresh`;
    for (const ns of [trickle, fresh]) {
      for (const group of groups) {
        const input = group.map((g) =>
          anEvent(ns).withKey('chaos', g.key).inConversation(g.conversation, g.seq).by('USER', 'Dana').saying(g.content).at(g.at).build(),
        );
        await gqlOk(t.url, token, INGEST, { input });
      }
    }
    await deriveAll(trickle, 1);
    await deriveAll(fresh, 100);
    const live = await currentFacts(trickle);
    const rebuilt = await currentFacts(fresh);
    const onlyLive = live.filter((f) => !rebuilt.includes(f));
    const onlyFresh = rebuilt.filter((f) => !live.includes(f));
    expect({ onlyLive, onlyFresh }).toEqual({ onlyLive: [], onlyFresh: [] });
    // Not vacuous: the turns left facts.
    expect(live.length).toBeGreaterThan(20);
  }, 600_000);
});
