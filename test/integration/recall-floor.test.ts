import { askQuestions, ingestTurns, poster, turnEvents, waitSettled } from '../../bench/recall';
import { loadLocomo, locomoFile } from '../../bench/locomo';
import { uniqueNamespace } from '../support/stores';
import { createToken, startTestApp, TestApp } from '../support/test-app';

/**
 * The floor issue 9 exists for: an agent's recall through searchMemory is never worse than a
 * keyword search over its own raw log. A slice of a public development conversation (LoCoMo
 * conv-26, sessions 1–5: 92 turns) goes through the real pipeline with the default offline
 * models; every question whose evidence lies in the slice is asked, and the evidence turns found
 * in the first 10 hits are counted against BM25 over the same turns.
 */
const SESSIONS = 5;

describe('recall floor: searchMemory finds at least what BM25 over the raw turns finds', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ DERIVE_MAX_WAIT_MS: '200', DERIVE_POLL_MS: '50', PROJECTOR_POLL_MS: '50' });
  }, 180_000);
  afterAll(async () => t?.stop());

  it("on a LoCoMo development slice, our Recall@10 is at least BM25's on the same questions", async () => {
    const convs = loadLocomo();
    if (!convs) throw new Error(`this test reads the public LoCoMo development split at ${locomoFile()}; set EVAL_DIR to its folder`);
    const conv = convs.find((c) => c.sampleId === 'conv-26') ?? (convs[0] as NonNullable<typeof convs>[number]);
    const turns = conv.turns.filter((tn) => tn.session <= SESSIONS);
    const inSlice = new Set(turns.map((tn) => tn.diaId));
    const questions = conv.questions.filter((q) => q.category <= 4 && q.evidence.every((e) => inSlice.has(e)));
    expect(turns.length).toBeGreaterThan(80);
    expect(questions.length).toBeGreaterThan(30);

    const ns = uniqueNamespace('recall-floor');
    const token = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'SEARCH', 'READ', 'LIST'] }])).token;
    const post = poster(t.url, token);
    await ingestTurns(post, turnEvents(ns, conv, turns));
    const { deadLetters } = await waitSettled(post, [ns], 300_000);
    expect(deadLetters).toBe(0);

    const asked = await askQuestions(post, ns, conv, questions, turns);
    const ours = asked.reduce((a, q) => a + q.recall, 0);
    const bm25 = asked.reduce((a, q) => a + q.bm25, 0);
    process.stderr.write(
      `[recall-floor] ${questions.length} questions: ours ${(ours / questions.length).toFixed(3)}, BM25 ${(bm25 / questions.length).toFixed(3)}\n`,
    );
    expect(bm25).toBeGreaterThan(0); // the baseline itself works, so the comparison means something
    expect(ours).toBeGreaterThanOrEqual(bm25);
  }, 600_000);
});
