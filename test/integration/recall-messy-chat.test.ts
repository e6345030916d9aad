import { askQuestions, ingestTurns, poster, turnEvents, waitSettled } from '../../bench/recall';
import { eng as ENGLISH_STOP_WORDS } from 'stopword';
import { loadRecallFixture } from '../support/recall-fixture';
import { uniqueNamespace } from '../support/stores';
import { createToken, startTestApp, TestApp } from '../support/test-app';

/**
 * Issue 23, item 3 ("real chat"): a messy group chat the repository owns
 * (test/fixtures/recall/messy-chat.json: three friends, six dated sessions, 159 turns, 40
 * questions with their evidence turns, written for this test). The speaker labels are handles
 * (jd_88, kw_draws, m4rco) while the people call each other Jamie, Kat and Marco, so a name in a
 * question never matches a label; many turns are "?", "lol", "ok", emoji or a bare name. It goes
 * through the real pipeline with the default offline models like recall-floor, every question is
 * asked, and:
 *  - our Recall@10 must be at least BM25's over the same turns plus 0.05 (the issue's
 *    per-conversation target);
 *  - low-information turns must not crowd the top: for the questions that name one of the three,
 *    the share of questions with a noise turn among the first 3 hits is at most 10%.
 */

/** The people's first names: what questions call them (the labels are handles). */
const NAMES = ['jamie', 'kat', 'marco'];

/** Chat filler that carries no content of its own (beside the English stop words and the names). */
const FILLER = new Set([
  ...ENGLISH_STOP_WORDS,
  ...NAMES,
  ...'ok okay k kk lol lmao haha hahaha omg oof ugh yes yeah ya yep yup no noo nope nah wait what ikr rip ty thx np u ur r hi hey cool nice fine guys also oh true fair deal legend go lets sure same hmm btw tho pls'.split(
    ' ',
  ),
]);

/**
 * A turn without a content word: its text after the "label: " prefix, lowercased, letters and
 * digits only, runs of three or more of a letter squeezed to one ("noooo" → no, "meee" → me), has
 * nothing left once stop words, chat filler and the three first names are out: "?", "lol", "🎉",
 * "Jamie?", "KAT", "...", "noooo" are noise; "thats huge" (huge) or "rude but ok" (rude) are not.
 */
function isNoiseTurn(content: string): boolean {
  const text = content.replace(/^[^:]*:\s*/, '');
  const tokens = (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).map((w) => w.replace(/(\p{L})\1{2,}/gu, '$1'));
  return tokens.every((w) => FILLER.has(w));
}

describe('recall on a messy real chat: handles as labels, names in the text, low-information turns', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ DERIVE_MAX_WAIT_MS: '200', DERIVE_POLL_MS: '50', PROJECTOR_POLL_MS: '50' });
  }, 180_000);
  afterAll(async () => t?.stop());

  it('our Recall@10 is at least BM25 + 0.05, and noise turns do not crowd the first 3 hits of questions naming someone', async () => {
    const conv = loadRecallFixture('messy-chat.json');
    const turns = conv.turns;
    const questions = conv.questions;
    expect(new Set(turns.map((tn) => tn.speaker)).size).toBe(3);
    expect(new Set(turns.map((tn) => tn.session)).size).toBeGreaterThanOrEqual(5);
    expect(turns.length).toBeGreaterThan(100);
    expect(questions.length).toBeGreaterThan(30);
    // No first name a question uses is part of a speaker label.
    for (const label of new Set(turns.map((tn) => tn.speaker))) for (const n of NAMES) expect(label.toLowerCase()).not.toContain(n);

    const noise = new Set(turns.filter((tn) => isNoiseTurn(tn.content)).map((tn) => tn.diaId));
    // The fixture is what it claims: plenty of noise turns, and no question's evidence is one.
    expect(noise.size).toBeGreaterThan(30);
    for (const q of questions) for (const e of q.evidence) expect(noise.has(e)).toBe(false);

    const ns = uniqueNamespace('recall-messy');
    const token = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'SEARCH', 'READ', 'LIST'] }])).token;
    const post = poster(t.url, token);
    await ingestTurns(post, turnEvents(ns, conv, turns));
    const { deadLetters } = await waitSettled(post, [ns], 300_000);
    expect(deadLetters).toBe(0);

    const asked = await askQuestions(post, ns, conv, questions, turns);
    const ours = asked.reduce((a, q) => a + q.recall, 0) / questions.length;
    const bm25 = asked.reduce((a, q) => a + q.bm25, 0) / questions.length;

    // A hit is noise when every turn it stands on is a noise turn (an event hit: its one turn).
    const hitIds = (entry: string) =>
      entry
        .slice(entry.indexOf(':') + 1)
        .split(',')
        .filter(Boolean);
    const rows = questions.map((q, i) => {
      const a = asked[i] as (typeof asked)[number];
      const top3 = a.page.slice(0, 3);
      const noisy = top3.filter((entry) => {
        const ids = hitIds(entry);
        return ids.length > 0 && ids.every((id) => noise.has(id));
      });
      return { q, a, top3, noisy, namesSomeone: new RegExp(`\\b(${NAMES.join('|')})\\b`, 'i').test(q.question) };
    });
    const namedRows = rows.filter((r) => r.namesSomeone);
    const crowded = namedRows.filter((r) => r.noisy.length > 0);
    const noisyHits = namedRows.reduce((n, r) => n + r.noisy.length, 0);

    const lines = [
      `[recall-messy-chat] ${turns.length} turns (${noise.size} noise), ${questions.length} questions: ours ${ours.toFixed(3)}, BM25 ${bm25.toFixed(3)}, difference ${(ours - bm25).toFixed(3)} (target ≥ +0.050)`,
      `[recall-messy-chat] questions naming Jamie/Kat/Marco: ${namedRows.length}; with a noise turn in the first 3 hits: ${crowded.length} (${((100 * crowded.length) / Math.max(1, namedRows.length)).toFixed(1)}%, limit 10%); noise hits in those first-3s: ${noisyHits}`,
      ...rows
        .filter((r) => r.a.recall !== r.a.bm25 || r.noisy.length > 0 || r.a.recall < 1)
        .map(
          (r) =>
            `  ours ${r.a.recall.toFixed(2)} bm25 ${r.a.bm25.toFixed(2)}${r.noisy.length ? ` noise@3 ${r.noisy.join(' ')}` : ''}  ${r.q.question}  [gold ${r.q.evidence.join(' ')}; top3 ${r.top3.join(' ')}]`,
        ),
    ];
    process.stderr.write(`${lines.join('\n')}\n`);

    expect(bm25).toBeGreaterThan(0); // the baseline itself works, so the comparison means something
    // The questions paraphrase their evidence, so the two are not copies of one keyword search.
    expect(asked.some((q) => q.recall !== q.bm25)).toBe(true);
    expect(namedRows.length).toBeGreaterThan(25);
    expect(crowded.length).toBeLessThanOrEqual(0.1 * namedRows.length);
    expect(ours).toBeGreaterThanOrEqual(bm25 + 0.05);
  }, 600_000);
});
