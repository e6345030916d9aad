import { Client } from 'pg';
import { HashingEmbedder } from '../../src/models/offline/hashing-embedder';
import { RuleExtractor } from '../../src/models/offline/rule-extractor';
import { RuleJudge } from '../../src/models/offline/rule-judge';
import { CandidateRepository } from '../../src/silver/candidate.repository';
import { DeriveJob, DeriveJobSettings } from '../../src/silver/derive.job';
import { DeriveService } from '../../src/silver/derive.service';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`;
const SEARCH = `query($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q, limit: 3) { kind fact { statement } event { content } } }`;

interface Hit {
  kind: 'FACT' | 'EVENT';
  fact: { statement: string } | null;
  event: { content: string } | null;
}

const chat = (ns: string, contents: string[]) =>
  contents.map((c, i) =>
    anEvent(ns)
      .inConversation('c1', i + 1)
      .by('USER')
      .saying(c)
      .at(new Date(Date.UTC(2026, 2, 1, 9, i)).toISOString())
      .build(),
  );

/**
 * Derivation of a namespace that went quiet (DERIVE_QUIET_MS, default 2 s): a chat of a few
 * messages is derived once nothing more arrives for it, not `DERIVE_MAX_WAIT_MS` (30 s) after its
 * first message, so the current belief is a fact within seconds; a namespace still receiving
 * events waits for a full batch or T as before.
 */
describe('deriving a namespace once it is quiet', () => {
  describe('which namespaces are due', () => {
    let t: TestApp;
    let sql: Client;
    let token: string;
    beforeAll(async () => {
      // The app's own worker neither batches nor waits for quiet here, so only the jobs below derive.
      t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '600000', DERIVE_QUIET_MS: '0' });
      token = (await createToken(t, [{ namespacePattern: 'quiet*', capabilities: ['INGEST', 'READ'] }])).token;
      sql = new Client({ connectionString: t.databaseUrl });
      await sql.connect();
    }, 180_000);
    afterAll(async () => {
      await sql?.end();
      await t?.stop();
    });

    const job = (quietMs: number | undefined): DeriveJob => {
      const service = new DeriveService(
        { extractor: new RuleExtractor(), judge: new RuleJudge(), embedder: new HashingEmbedder() },
        new CandidateRepository(t.app.ds),
        {
          candidateLimit: 8,
          trigramThreshold: 0.3,
        },
      );
      const settings: DeriveJobSettings = {
        workerId: 'quiet-test',
        batchSize: 100,
        maxWaitMs: 600_000,
        leaseSeconds: 60,
        maxAttempts: 3,
        retryBaseSeconds: 600,
      };
      return new DeriveJob(t.app.ds, t.app.repositories.events, service, quietMs === undefined ? settings : { ...settings, quietMs });
    };

    it('is due once nothing was queued for it for Q, without a full batch or T; not with Q off or not yet reached', async () => {
      const ns = uniqueNamespace('quiet');
      await gqlOk(t.url, token, INGEST, { input: chat(ns, ['I use vim for everything', 'had ramen for lunch', 'I switched to neovim last week']) });
      // Its newest queue row is at least this old when the checks below run.
      await new Promise((r) => setTimeout(r, 50));
      const due = async (quietMs: number | undefined) => (await job(quietMs).readyNamespaces(1000)).includes(ns);
      // 3 pending events, batch size 100, T 10 min: only quiet can make it due.
      expect(await due(undefined)).toBe(false);
      expect(await due(0)).toBe(false);
      expect(await due(3_600_000)).toBe(false); // still "receiving" for a Q of an hour
      expect(await due(10)).toBe(true);

      // A new event resets the quiet: for a Q longer than its age the namespace waits again.
      const late = anEvent(ns).inConversation('c1', 4).by('USER').saying('also I moved to Lisbon').at('2026-03-01T09:04:00.000Z').build();
      await gqlOk(t.url, token, INGEST, { input: [late] });
      expect(await due(60_000)).toBe(false);

      // The quiet job derives the whole chat as one batch.
      await new Promise((r) => setTimeout(r, 50));
      const result = await job(10).runNamespace(ns);
      expect(result).toMatchObject({ kind: 'success', events: 4 });
      const { rows } = await sql.query<{ status: string; n: number }>(
        `SELECT status, count(*)::int AS n FROM ops.derivation_queue WHERE namespace = $1 GROUP BY status`,
        [ns],
      );
      expect(rows).toEqual([{ status: 'done', n: 4 }]);
    });

    it('reads the turns before a batch as its context: per conversation, within the window, at most the limit, oldest first', async () => {
      const ns = uniqueNamespace('quiet-earlier');
      const turn = (conversation: string, seq: number, minute: number) =>
        anEvent(ns)
          .inConversation(conversation, seq)
          .by('USER')
          .saying(`${conversation} turn ${seq}`)
          .at(new Date(Date.UTC(2026, 2, 1, 9, minute)).toISOString())
          .build();
      const input = [turn('c1', 1, 0), turn('c1', 2, 40), turn('c1', 3, 50), turn('c1', 4, 55), turn('c1', 5, 57), turn('c2', 1, 54), turn('c2', 2, 56)];
      await gqlOk(t.url, token, INGEST, { input });
      const { rows } = await sql.query<{ id: string; content: string }>(`SELECT id::text, content FROM bronze.events WHERE namespace = $1`, [ns]);
      const id = (content: string) => rows.find((r) => r.content === content)?.id as string;
      const events = t.app.repositories.events;
      const batch = await events.findByIds([id('c1 turn 4'), id('c1 turn 5'), id('c2 turn 2')]);
      const earlier = await events.earlierTurns(ns, batch, { limit: 2, withinMs: 30 * 60_000 });
      // c1: turn 1 is more than 30 minutes before its first batch turn, and the limit keeps the last two.
      expect(earlier.map((e) => e.content)).toEqual(['c1 turn 2', 'c1 turn 3', 'c2 turn 1']);
      expect(await events.earlierTurns(ns, batch, { limit: 0, withinMs: 30 * 60_000 })).toEqual([]);
    });
  });

  describe('through the service, with the default offline models', () => {
    let t: TestApp;
    let token: string;
    beforeAll(async () => {
      // T of 10 minutes: the facts below can only come from the quiet rule (its default, 2 s).
      t = await startTestApp({ DERIVE_MAX_WAIT_MS: '600000', DERIVE_POLL_MS: '50' });
      token = (await createToken(t, [{ namespacePattern: 'quiet*', capabilities: ['INGEST', 'SEARCH', 'READ', 'LIST'] }])).token;
    }, 180_000);
    afterAll(async () => t?.stop());

    it("answers the README's vim → neovim chat with the current editor as a fact first, long before T", async () => {
      const ns = uniqueNamespace('quiet-readme');
      await gqlOk(t.url, token, INGEST, {
        input: chat(ns, ['I use vim for everything', 'had ramen for lunch today, pretty good', 'I switched to neovim last week']),
      });
      const hits = await eventually(
        async () => {
          const found = (await gqlOk<{ searchMemory: Hit[] }>(t.url, token, SEARCH, { ns, q: 'which editor does the user use?' })).searchMemory;
          return found[0]?.kind === 'FACT' ? found : null;
        },
        'a fact hit first',
        60_000,
      );
      expect(hits[0]?.fact?.statement).toMatch(/neovim/i);
      // The stale turn is still found, below the update.
      expect(hits.slice(1).some((h) => h.event?.content === 'I use vim for everything')).toBe(true);
    }, 120_000);

    it('joins a note typed as fragments that arrive a message at a time, each derived before the next', async () => {
      const ns = uniqueNamespace('quiet-note');
      const turns = chat(ns, ['meeting w/ legal', 'thurs 2pm', 'room 4b']);
      const count = async (sql: string): Promise<number> => ((await t.app.ds.query(sql, [ns])) as Array<{ n: number }>)[0]?.n ?? 0;
      const derived = async (n: number): Promise<boolean> =>
        (await count(`SELECT count(*)::int AS n FROM ops.derivation_queue WHERE namespace = $1 AND status = 'done'`)) === n;
      for (const [i, turn] of turns.entries()) {
        await gqlOk(t.url, token, INGEST, { input: [turn] });
        await eventually(async () => ((await derived(i + 1)) ? true : null), `turn ${i + 1} derived`, 60_000);
      }
      // Three batches of one turn each; the note is one current fact resting on all three turns.
      expect(await count(`SELECT count(*)::int AS n FROM silver.derivation_runs WHERE namespace = $1`)).toBe(3);
      const FACTS = `query($ns: String!) { facts(namespace: $ns) { edges { node { statement sources { event { content } } } } } }`;
      const current = (
        await gqlOk<{ facts: { edges: Array<{ node: { statement: string; sources: Array<{ event: { content: string } }> } }> } }>(t.url, token, FACTS, { ns })
      ).facts.edges.map((e) => e.node);
      expect(current.map((f) => f.statement)).toEqual(['Meeting w/ legal, thurs 2pm, room 4b']);
      expect(current[0]?.sources.map((s) => s.event.content).sort()).toEqual(['meeting w/ legal', 'room 4b', 'thurs 2pm']);
      const hits = await eventually(
        async () => {
          const found = (await gqlOk<{ searchMemory: Hit[] }>(t.url, token, SEARCH, { ns, q: 'which room is the meeting with legal in?' })).searchMemory;
          return found[0]?.fact?.statement.includes('room 4b') ? found : null;
        },
        'the whole note first',
        30_000,
      );
      expect(hits[0]?.kind).toBe('FACT');
    }, 180_000);
  });
});
