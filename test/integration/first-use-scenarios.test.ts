import { hitText, holdsAnswer, loadScenarios, runScenarios } from '../../bench/scenarios';
import { poster } from '../../bench/recall';
import { createToken, startTestApp, TestApp } from '../support/test-app';

/**
 * Part of the first-use scenario suite (bench/scenarios, issue 23) through the public path:
 * ingest over GraphQL → projection and derivation with the default offline models → searchMemory.
 * Each scenario is a fresh namespace of a few messages; the first hit must hold the answer. The
 * full suite and its figures: `npm run bench -- scenarios`. Only the batching wait is shortened
 * (DERIVE_MAX_WAIT_MS), so the test does not sit out the 30 s default.
 */
const CHOSEN = [
  'update-editor', // the README's own example: vim, lunch, then neovim
  'update-team-size', // "we are twelve people on the team now" replaces "my team has eight engineers"
  'update-correction', // "actually … on Wednesday" replaces "leaves on Monday"
  'messy-update', // "new number: …" replaces "my number is …"
  'update-started-again',
  'update-job',
  'pref-language',
  'assistant-booking',
  'assistant-order',
  'people-speakers',
  'chitchat-wifi',
  'messy-typos',
  'user-therapist',
  'user-named-cat', // "I'm Maya btw": a question about Maya is about the user
  'time-deadline',
];

describe('first-use scenarios: the first hit holds the answer in a namespace of a few messages', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ DERIVE_MAX_WAIT_MS: '300', DERIVE_POLL_MS: '50' });
  }, 180_000);
  afterAll(async () => t?.stop());

  it('answers each chosen scenario with its first hit, the current belief ahead of the stale one', async () => {
    const scenarios = loadScenarios().filter((s) => CHOSEN.includes(s.id));
    expect(scenarios.map((s) => s.id).sort()).toEqual([...CHOSEN].sort());
    const token = (await createToken(t, [{ namespacePattern: 'scenario-*', capabilities: ['INGEST', 'SEARCH', 'READ', 'LIST'] }])).token;
    const outcomes = await runScenarios(poster(t.url, token), scenarios, 'test');
    const wrong = outcomes.filter((o) => !o.ok).map((o) => `${o.id}: first hit ${JSON.stringify(o.first)}`);
    expect(wrong).toEqual([]);
  }, 600_000);

  it('judges an answer by whole words, so a stale "vim" is not read as "neovim"', () => {
    expect(holdsAnswer('The user switched to Neovim', ['neovim'])).toBe(true);
    expect(holdsAnswer('The user uses Vim', ['neovim'])).toBe(false);
    expect(holdsAnswer('I use neovim', ['vim'])).toBe(false);
    expect(hitText({ kind: 'EVENT', fact: null, event: { content: 'pinecone42' } })).toBe('pinecone42');
  });
});
