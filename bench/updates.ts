import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { nowMs, report, round, summarize, withBenchStores } from './harness';
import { TurnBm25 } from './locomo';
import { ingestTurns, poster, waitSettled } from './recall';
import { holdsAnswer } from './scenarios';
import { BLIND_FILES, ifPresent, inValidate, Split, tuneValidate } from './split';
import { extractorVersion } from './rule-set';

/**
 * Knowledge updates in a long user–assistant chat (issue 23, item 1 at conversation scale): a
 * value stated once and changed sessions later ("we moved the backend from Flask to FastAPI",
 * "now that we're twelve people…", "actually the 14th, not the 7th"), asked for later. What a user
 * relies on is the current value first: of the hits that hold either value, the first holds the
 * new one. The fixture (test/fixtures/recall/project-updates.json) was written for this
 * repository by hand, without reading the code.
 */

export interface UpdateTurn {
  diaId: string;
  speaker: 'user' | 'assistant';
  session: number;
  sequenceNum: number;
  content: string;
  occurredAt: string;
}

export interface UpdateQuestion {
  question: string;
  kind: 'update' | 'control';
  answer: string[];
  stale: string[];
  evidence: string[];
  staleEvidence: string[];
}

export interface UpdateConversation {
  sampleId: string;
  turns: UpdateTurn[];
  questions: UpdateQuestion[];
}

export function loadUpdateConversation(file = path.join(__dirname, '..', '..', 'test', 'fixtures', 'recall', 'project-updates.json')): UpdateConversation {
  // From dist/bench at run time, from bench/ under ts-jest: find the repository's test folder either way.
  const resolved = fs.existsSync(file) ? file : path.join(__dirname, '..', 'test', 'fixtures', 'recall', 'project-updates.json');
  return JSON.parse(fs.readFileSync(resolved, 'utf8')) as UpdateConversation;
}

/** The turns as a framework sends them: user and assistant roles, no speaker label, one conversation. */
export function updateEvents(ns: string, conv: UpdateConversation): Array<Record<string, unknown>> {
  return conv.turns.map((t) => ({
    namespace: ns,
    source: 'project-chat',
    sourceEventId: t.diaId,
    kind: 'MESSAGE',
    role: t.speaker === 'assistant' ? 'ASSISTANT' : 'USER',
    content: t.content,
    occurredAt: t.occurredAt,
    conversationId: conv.sampleId,
    sessionId: `session_${t.session}`,
    sequenceNum: t.sequenceNum,
  }));
}

/** Where a page stands on a question: the first text holding the answer comes before any holding only the old value. */
export interface UpdateOutcome {
  question: string;
  kind: 'update' | 'control';
  /** The first hit holds the answer. */
  top1: boolean;
  /** Of the first 10 hits, the first that holds the answer or an old value holds the answer. */
  currentFirst: boolean;
  /** The answer is among the first 10 hits at all. */
  found: boolean;
  bm25CurrentFirst: boolean;
  bm25Top1: boolean;
  first: string | null;
  /** The first three hits with score and channels: what decided the order. */
  top: string[];
  ms: number;
}

/** Whether `texts` (best first) reach a text holding the answer before one holding an old value alone. */
function currentBeforeStale(texts: readonly string[], q: UpdateQuestion): boolean {
  for (const t of texts) {
    const current = holdsAnswer(t, q.answer);
    if (current) return true;
    if (q.stale.length > 0 && holdsAnswer(t, q.stale)) return false;
  }
  return false;
}

const SEARCH = `query($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q, limit: 10) { kind score channels fact { statement } event { content } evidence { content } } }`;
type Hit = {
  kind: 'FACT' | 'EVENT';
  score: number;
  channels: string[];
  evidence: Array<{ content: string }>;
  fact: { statement: string } | null;
  event: { content: string } | null;
};

/** Asks every question through searchMemory and scores the page, beside BM25 over the same turns. */
export async function askUpdateQuestions(post: ReturnType<typeof poster>, ns: string, conv: UpdateConversation): Promise<UpdateOutcome[]> {
  const bm25 = new TurnBm25(conv.turns.map((t) => ({ ...t, occurredAt: new Date(t.occurredAt) })));
  const byId = new Map(conv.turns.map((t) => [t.diaId, t.content]));
  const out: UpdateOutcome[] = [];
  for (const q of conv.questions) {
    const t0 = nowMs();
    const res = await post<{ searchMemory: Hit[] }>(SEARCH, { ns, q: q.question });
    const ms = nowMs() - t0;
    const texts = res.searchMemory.map((h) => h.fact?.statement ?? h.event?.content ?? '');
    const bm25Texts = bm25.search(q.question, 10).map((id) => byId.get(id) ?? '');
    out.push({
      question: q.question,
      kind: q.kind,
      top1: texts.length > 0 && holdsAnswer(texts[0] as string, q.answer),
      currentFirst: currentBeforeStale(texts, q),
      found: texts.some((t) => holdsAnswer(t, q.answer)),
      bm25CurrentFirst: currentBeforeStale(bm25Texts, q),
      bm25Top1: bm25Texts.length > 0 && holdsAnswer(bm25Texts[0] as string, q.answer),
      first: texts[0] ?? null,
      top: res.searchMemory
        .slice(0, Number(process.env.BENCH_TOP ?? 3))
        .map(
          (h, i) =>
            `${h.score.toFixed(4)} [${h.channels.join(',')}] ${h.kind}: ${texts[i] ?? ''}${h.kind === 'FACT' ? ` ⟵ ${h.evidence.length} turn(s): ${h.evidence.map((e) => e.content.slice(0, 80)).join(' | ')}` : ''}`,
        ),
      ms,
    });
  }
  return out;
}

/** Counts of an outcome list, by kind: what the bench prints and the test asserts. */
export function updateFigures(outcomes: readonly UpdateOutcome[]) {
  const count = (kind: 'update' | 'control', f: (o: UpdateOutcome) => boolean) => outcomes.filter((o) => o.kind === kind && f(o)).length;
  const of = (kind: 'update' | 'control') => outcomes.filter((o) => o.kind === kind).length;
  return {
    updates: {
      questions: of('update'),
      currentFirst: count('update', (o) => o.currentFirst),
      bm25CurrentFirst: count('update', (o) => o.bm25CurrentFirst),
      top1: count('update', (o) => o.top1),
      bm25Top1: count('update', (o) => o.bm25Top1),
      foundInTop10: count('update', (o) => o.found),
    },
    controls: {
      questions: of('control'),
      top1: count('control', (o) => o.top1),
      bm25Top1: count('control', (o) => o.bm25Top1),
      foundInTop10: count('control', (o) => o.found),
    },
  };
}

/** Each question's split (bench/split.ts): a third of project-updates.json by question text; a blind-written file is validate whole. */
export function questionSplit(conv: UpdateConversation, blind: boolean): Split[] {
  return conv.questions.map((q) => (blind || inValidate(q.question) ? 'validate' : 'tune'));
}

/** The figures of one split: counts per kind, with how many questions each rests on. */
function figuresOf(outcomes: ReadonlyArray<UpdateOutcome & { split: Split }>, split: Split) {
  return updateFigures(outcomes.filter((o) => o.split === split));
}

/** `npm run bench -- updates`: the fixture through the real service with default settings (`BENCH_TOP=10`: ten hits per miss in the report, not three). */
export async function updatesBench(): Promise<void> {
  const chats: Array<{ conv: UpdateConversation; blind: boolean; file: string }> = [
    { conv: loadUpdateConversation(), blind: false, file: 'test/fixtures/recall/project-updates.json' },
  ];
  const blind = ifPresent(BLIND_FILES.updates);
  if (blind) chats.push({ conv: loadUpdateConversation(blind), blind: true, file: 'test/fixtures/recall/updates-2.json (blind-written)' });
  await withBenchStores(async (b) => {
    const { app, url, adminToken } = await b.startApp();
    try {
      const post = poster(url, adminToken);
      const run = randomBytes(3).toString('hex');
      const namespaces = chats.map((_, i) => `updates-${i}-${run}`);
      const t0 = nowMs();
      await Promise.all(chats.map((c, i) => ingestTurns(post, updateEvents(namespaces[i] as string, c.conv))));
      const { deadLetters } = await waitSettled(post, namespaces, 600_000);
      const settledMs = nowMs() - t0;
      const outcomes: Array<UpdateOutcome & { split: Split }> = [];
      for (let i = 0; i < chats.length; i++) {
        const c = chats[i] as (typeof chats)[number];
        const splits = questionSplit(c.conv, c.blind);
        outcomes.push(...(await askUpdateQuestions(post, namespaces[i] as string, c.conv)).map((o, j) => ({ ...o, split: splits[j] as Split })));
      }
      const projectUpdates = outcomes.slice(0, chats[0]?.conv.questions.length);
      const heldOutOfProject = figuresOf(projectUpdates, 'validate').updates;
      const tune = figuresOf(outcomes, 'tune');
      const validate = figuresOf(outcomes, 'validate');
      const share = (n: number, of: number) => (of === 0 ? null : n / of);
      report('updates', {
        ruleSet: extractorVersion(),
        data: chats.map((c) => ({ file: c.file, turns: c.conv.turns.length, questions: c.conv.questions.length })),
        split: {
          rule: 'bench/split.ts: a third of project-updates.json questions by the SHA-256 of their text, and the blind-written updates-2.json, are validate',
          currentFirst: {
            ...tuneValidate(share(tune.updates.currentFirst, tune.updates.questions) ?? 0, share(validate.updates.currentFirst, validate.updates.questions)),
            tuneCount: `${tune.updates.currentFirst}/${tune.updates.questions}`,
            validateCount: `${validate.updates.currentFirst}/${validate.updates.questions}`,
            validateOfProjectUpdates: `${heldOutOfProject.currentFirst}/${heldOutOfProject.questions}`,
          },
          top1: {
            ...tuneValidate(share(tune.updates.top1, tune.updates.questions) ?? 0, share(validate.updates.top1, validate.updates.questions)),
            tuneCount: `${tune.updates.top1}/${tune.updates.questions}`,
            validateCount: `${validate.updates.top1}/${validate.updates.questions}`,
          },
          tune,
          validate,
        },
        // The whole of project-updates.json, as reported before the split (its figures mix tune and validate).
        projectUpdates: updateFigures(projectUpdates),
        deadLetters,
        settleSeconds: round(settledMs / 1000, 1),
        searchMs: summarize(outcomes.map((o) => o.ms)),
        tuneMisses: outcomes
          .filter((o) => o.split === 'tune' && (o.kind === 'update' ? !o.currentFirst : !o.top1))
          .map((o) => ({ question: o.question, top: o.top, bm25: o.bm25CurrentFirst })),
        definition:
          'currentFirst: of the first 10 searchMemory hits (fact statements, event contents), the first that holds the answer or an old value holds the answer (whole words, case-insensitive); BM25 the same over its first 10 turns. top1: the first hit holds the answer',
      });
    } finally {
      await app.stop();
    }
  });
}
