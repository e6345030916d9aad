import fs from 'node:fs';
import {
  ChannelLists,
  ChannelWeights,
  DEFAULT_CHANNEL_WEIGHTS,
  fusedCandidates,
  MemoryCandidate,
  rankingPriors,
  rankMemoryHits,
  RankingPriors,
  RRF_K,
} from '../src/graph/search-ranking';
import { LocomoConversation, loadChatFixture, loadLocomo, recallAt, summariseRecall } from './locomo';
import { BLIND_FILES, ifPresent, REPO_ROOT } from './split';
import { compareRanker } from './ranker';

/**
 * Replays the fusion over channel lists dumped by `BENCH_RECALL_DUMP=file npm run bench -- recall`
 * with other settings, to choose them by figures without re-ingesting:
 * `EVAL_DIR=… node dist/bench/recall-tune.js file`. Development split only (categories 1–4);
 * prints Recall@10 overall, per conversation and per category for: the service's settings, the
 * RRF constant, each channel left out, a grid of channel weights, and two re-orderings of the
 * ranked hits (hits that bring no new evidence demoted; an event raised by its neighbours' scores).
 * Applies the event information prior from the LoCoMo turns as search does (fact polarity is not
 * in the dump), so the service's settings reproduce the live figure of the same run.
 * With `--ranker`: the learned ranker against RRF instead, tune and validate (bench/ranker.ts).
 */
export interface Dump {
  dia: Record<string, string>;
  questions: Array<{ conversation: number; category: number; question?: string; evidence: string[]; lists: ChannelLists }>;
  /** Per fact (dumps since session 20): what search may weigh a fact hit by. */
  facts?: Record<string, DumpedFact>;
}

export interface DumpedFact {
  confidence: number;
  negation: boolean;
  predicate: string;
  /** Dumps since the tune/validate split: what the answer-kind prior reads. */
  statement?: string;
}

/** A fact hit's weight from what is known of the fact (a variant under study), times its polarity as search does. */
type FactWeight = (fact: DumpedFact) => number;

/** A re-ordering of the ranked hits (a variant under study), given each fact's source events and the question's conversation. */
type Reorder = (hits: MemoryCandidate[], sources: Map<string, string[]>, ctx: { dia: Record<string, string>; conv: LocomoConversation }) => MemoryCandidate[];

export interface ReplaySettings {
  weights?: Partial<ChannelWeights>;
  k?: number;
  reorder?: Reorder;
  limit?: number;
  factWeight?: FactWeight;
}

export interface ReplayFigures {
  all: number;
  byConversation: number[];
  byCategory: Record<string, number>;
}

const mean = (xs: readonly number[]) => (xs.length === 0 ? 0 : Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 1000) / 1000);

/** Search's priors for a dumped question: its turns read from the conversation, its facts from the dump. */
export function dumpPriors(dump: Dump, conv: LocomoConversation, question: string): Required<RankingPriors> {
  const turns = new Map(conv.turns.map((t) => [t.diaId, t]));
  return rankingPriors(
    question,
    (id) => {
      const t = turns.get(dump.dia[id] ?? id);
      return t ? { content: t.content, actor: t.speaker } : undefined;
    },
    (id) => {
      const f = dump.facts?.[id];
      return f ? { isNegation: f.negation, ...(f.statement !== undefined ? { statement: f.statement } : {}) } : undefined;
    },
  );
}

export function replay(dump: Dump, convs: readonly LocomoConversation[], s: ReplaySettings = {}): ReplayFigures {
  const { weights = DEFAULT_CHANNEL_WEIGHTS, k = RRF_K, reorder = (h) => h, limit = 10, factWeight = () => 1 } = s;
  const rows: Array<{ category: number; recall: number }> = [];
  const perConv: number[][] = convs.map(() => []);
  for (const q of dump.questions) {
    if (q.category < 1 || q.category > 4) continue;
    const conv = convs[q.conversation] as LocomoConversation;
    const priors = dumpPriors(dump, conv, q.question ?? '');
    // As search does: only the fused candidates it re-checks against Postgres can be hits.
    const { facts, events } = fusedCandidates(q.lists, limit * 3, weights, k);
    const candidates = new Set([...facts, ...events].map((h) => h.id));
    const sources = new Map<string, string[]>();
    for (const c of ['vector', 'keyword', 'graph'] as const) for (const h of q.lists[c]) sources.set(h.id, h.events ?? []);
    const factPrior = (id: string): number => {
      const f = dump.facts?.[id];
      return priors.factPrior(id) * (f ? factWeight(f) : 1);
    };
    const ranked = rankMemoryHits(q.lists, (id) => candidates.has(id), weights, { eventPrior: priors.eventPrior, factPrior }, k);
    const hits = reorder(ranked, sources, { dia: dump.dia, conv }).slice(0, limit);
    const retrieved = hits.flatMap((h) => (h.kind === 'FACT' ? (sources.get(h.id) ?? []) : [h.id])).map((id) => dump.dia[id] ?? id);
    const recall = recallAt(retrieved, q.evidence);
    rows.push({ category: q.category, recall });
    perConv[q.conversation]?.push(recall);
  }
  const summary = summariseRecall(rows);
  return {
    all: summary.recallAt10,
    byConversation: perConv.map(mean),
    byCategory: Object.fromEntries(Object.entries(summary.byCategory).map(([c, v]) => [c, v.recallAt10])),
  };
}

/** Hits that bring no event an earlier hit did not bring weigh `factor` (then re-sorted). */
const demoteRedundant =
  (factor: number): Reorder =>
  (hits, sources) => {
    const seen = new Set<string>();
    return hits
      .map((h, i) => {
        const evs = h.kind === 'FACT' ? (sources.get(h.id) ?? []) : [h.id];
        const fresh = evs.some((e) => !seen.has(e));
        for (const e of evs) seen.add(e);
        return { h, i, score: fresh ? h.score : h.score * factor };
      })
      .sort((a, b) => b.score - a.score || a.i - b.i)
      .map((x) => x.h);
  };

/** An event hit adds `before` × the score of the hit holding the turn before it, `after` × the turn after (same session). */
const neighbours =
  (before: number, after: number): Reorder =>
  (hits, sources, { dia, conv }) => {
    const pos = new Map(conv.turns.map((t, i) => [t.diaId, i]));
    const scoreAt = new Map<number, number>();
    for (const h of hits)
      for (const e of h.kind === 'FACT' ? (sources.get(h.id) ?? []) : [h.id]) {
        const p = pos.get(dia[e] ?? '');
        if (p !== undefined) scoreAt.set(p, Math.max(scoreAt.get(p) ?? 0, h.score));
      }
    const near = (p: number, q: number) => (conv.turns[q]?.session === conv.turns[p]?.session ? (scoreAt.get(q) ?? 0) : 0);
    return hits
      .map((h, i) => {
        const p = h.kind === 'EVENT' ? pos.get(dia[h.id] ?? '') : undefined;
        return { h, i, score: p === undefined ? h.score : h.score + before * near(p, p - 1) + after * near(p, p + 1) };
      })
      .sort((a, b) => b.score - a.score || a.i - b.i)
      .map((x) => x.h);
  };

function main(): void {
  const file = process.argv[2];
  if (!file) throw new Error('usage: recall-tune DUMP.json [--ranker]');
  const dump = JSON.parse(fs.readFileSync(file, 'utf8')) as Dump;
  const convs = loadLocomo();
  if (!convs) throw new Error('the LoCoMo development split is not found (set EVAL_DIR)');
  if (process.argv.includes('--ranker')) {
    // The dump's conversations in bench/recall's order: LoCoMo, then the messy chats.
    const blind = ifPresent(BLIND_FILES.messyChat);
    const chats = [loadChatFixture(`${REPO_ROOT}/test/fixtures/recall/messy-chat.json`), ...(blind ? [loadChatFixture(blind)] : [])];
    for (const mode of ['pointwise', 'pairwise'] as const) compareRanker(dump, [...convs, ...chats], (line) => process.stdout.write(line), mode);
    return;
  }
  const show = (name: string, r: ReplayFigures) =>
    process.stdout.write(`${r.all.toFixed(3)}  ${JSON.stringify(r.byConversation)}  ${name}  ${JSON.stringify(r.byCategory)}\n`);
  show('service settings', replay(dump, convs));
  if (dump.facts) {
    const counts = new Map<string, number>();
    for (const f of Object.values(dump.facts)) counts.set(`${f.confidence}`, (counts.get(`${f.confidence}`) ?? 0) + 1);
    process.stdout.write(`facts by confidence: ${JSON.stringify(Object.fromEntries([...counts].sort()))}\n`);
    for (const [below, w] of [
      [0.65, 0.5],
      [0.65, 0.75],
      [0.6, 0.5],
      [0.6, 0.75],
      [0.75, 0.75],
    ] as const)
      show(`facts of confidence < ${below} × ${w}`, replay(dump, convs, { factWeight: (f) => (f.confidence < below ? w : 1) }));
    for (const w of [0.5, 0.75]) show(`'said' facts × ${w}`, replay(dump, convs, { factWeight: (f) => (f.predicate === 'said' ? w : 1) }));
    show('× confidence', replay(dump, convs, { factWeight: (f) => f.confidence }));
    show('× sqrt(confidence)', replay(dump, convs, { factWeight: (f) => Math.sqrt(f.confidence) }));
  }
  for (const k of [10, 15, 20, 25, 30, 40, 60, 90]) show(`RRF k ${k}`, replay(dump, convs, { k }));
  for (const ch of ['vector', 'keyword', 'graph', 'event_vector', 'event_keyword'] as const)
    show(`without ${ch}`, replay(dump, convs, { weights: { ...DEFAULT_CHANNEL_WEIGHTS, [ch]: 0 } }));
  for (const f of [0, 0.5]) show(`hits with no new evidence × ${f}`, replay(dump, convs, { reorder: demoteRedundant(f) }));
  for (const [b, a] of [
    [0.1, 0],
    [0.25, 0],
    [0, 0.1],
    [0.1, 0.1],
  ] as const)
    show(`event + ${b} × turn before + ${a} × turn after`, replay(dump, convs, { reorder: neighbours(b, a) }));
  const grid: Array<[string, Partial<ChannelWeights>]> = [];
  for (const f of [0.125, 0.25, 0.5])
    for (const g of [0.25, 0.5, 0.75])
      for (const ev of [0.75, 1, 1.25])
        for (const ek of [0.75, 1, 1.25])
          grid.push([`facts ${f} graph ${g} event_vector ${ev} event_keyword ${ek}`, { vector: f, keyword: f, graph: g, event_vector: ev, event_keyword: ek }]);
  const results = grid.map(([name, weights]) => ({ name, r: replay(dump, convs, { weights }) })).sort((a, b) => b.r.all - a.r.all);
  for (const x of results.slice(0, 8)) show(x.name, x.r);
}

if (require.main === module) main();
