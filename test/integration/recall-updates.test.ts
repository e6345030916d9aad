import { askUpdateQuestions, loadUpdateConversation, updateEvents, updateFigures } from '../../bench/updates';
import { ingestTurns, poster, waitSettled } from '../../bench/recall';
import { uniqueNamespace } from '../support/stores';
import { createToken, startTestApp, TestApp } from '../support/test-app';

/**
 * Issue 23, item 1 at conversation scale: knowledge updates in a long user–assistant chat the
 * repository owns (test/fixtures/recall/project-updates.json, written by hand for this test
 * without reading the code): values stated once and changed sessions later, by a switch, a
 * correction, a new number in passing, a stop or a restart, some confirmed by the assistant, some
 * whose old value keeps being mentioned. Through the real pipeline with the default offline
 * models, every question asked once:
 *  - for the update questions, the current value comes before the old one (the first of the
 *    first 10 hits that holds either holds the new value) at least as often as in BM25's first 10
 *    turns, and the new value is among the first 10 hits for at least MIN_FOUND of them;
 *  - the questions about values that never changed are answered in the first 10 hits.
 * These are floors under today's figures (bench/results/updates.json: current first 10-11 of 25
 * against BM25's 8, found 17-18 of 25, controls 9-10 of 10, over eight runs), not the issue's
 * target: the issue asks for the current belief first, and this fixture shows how far that is.
 */
const MIN_FOUND = 0.55;

describe('knowledge updates in a long user-assistant chat: the current value first', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ DERIVE_MAX_WAIT_MS: '200', DERIVE_POLL_MS: '50', PROJECTOR_POLL_MS: '50' });
  }, 180_000);
  afterAll(async () => t?.stop());

  it('ranks the current value before the old one, more often than BM25, and keeps the unchanged facts', async () => {
    const conv = loadUpdateConversation();
    const updates = conv.questions.filter((q) => q.kind === 'update');
    // The fixture is what it claims: many updates, each with an old value stated in another turn.
    expect(conv.turns.length).toBeGreaterThan(150);
    expect(updates.length).toBeGreaterThanOrEqual(20);
    for (const q of updates) {
      expect(q.stale.length).toBeGreaterThan(0);
      expect(q.staleEvidence.some((id) => q.evidence.includes(id))).toBe(false);
    }

    const ns = uniqueNamespace('recall-updates');
    const token = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'SEARCH', 'READ', 'LIST'] }])).token;
    const post = poster(t.url, token);
    await ingestTurns(post, updateEvents(ns, conv));
    const { deadLetters } = await waitSettled(post, [ns], 300_000);
    expect(deadLetters).toBe(0);

    const outcomes = await askUpdateQuestions(post, ns, conv);
    const f = updateFigures(outcomes);
    process.stderr.write(
      [
        `[recall-updates] ${conv.turns.length} turns; updates ${f.updates.questions}: current first ours ${f.updates.currentFirst}, BM25 ${f.updates.bm25CurrentFirst}; first hit right ours ${f.updates.top1}, BM25 ${f.updates.bm25Top1}`,
        `[recall-updates] controls ${f.controls.questions}: first hit right ${f.controls.top1}, in the first 10 ${f.controls.foundInTop10}`,
        ...outcomes
          .filter((o) => (o.kind === 'update' ? !o.currentFirst : !o.found))
          .map((o) => `  miss (${o.kind}): ${o.question} — first: ${o.first ?? '(none)'}`),
      ].join('\n') + '\n',
    );

    expect(f.updates.currentFirst).toBeGreaterThanOrEqual(f.updates.bm25CurrentFirst);
    expect(f.updates.foundInTop10).toBeGreaterThanOrEqual(Math.ceil(MIN_FOUND * f.updates.questions));
    expect(f.controls.foundInTop10).toBeGreaterThanOrEqual(f.controls.questions - 1);
  }, 600_000);
});
