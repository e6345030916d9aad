import fs from 'node:fs';
import { loadConfig } from '../src/common/config';
import { loadEmbedder } from '../src/app/models';
import type { Embedder } from '../src/silver/model-ports';
import { Dump, dumpPriors } from './recall-tune';
import { ChannelLists, ChannelWeights, DEFAULT_CHANNEL_WEIGHTS, fusedCandidates, rankMemoryHits } from '../src/graph/search-ranking';
import { ScoredId } from '../src/graph/cypher/search-channel';
import { splitSpeakerLabel } from '../src/graph/speaker-label';
import { LocomoConversation, loadLocomo, recallAt, summariseRecall } from './locomo';

/**
 * Replays the fusion over channel lists dumped by `BENCH_RECALL_DUMP=file npm run bench -- recall`
 * with the event_vector list recomputed by other scorers of the raw turns (contextual event
 * embeddings: the turn before embedded with the turn, or the neighbours' vectors mixed in), to
 * measure a change of what events embed without re-ingesting:
 * `EVAL_DIR=… node dist/bench/recall-context.js DUMP.json`. Prints, per scorer, the event_vector
 * channel's own Recall@10 and the whole fusion's (with the event information prior, as search
 * applies it; the "own" scorer reproduces the dumped lists exactly). Figures: docs/search.md.
 */

type Turn = LocomoConversation['turns'][number];

function evaluate(dump: Dump, convs: LocomoConversation[], eventVector: (q: number) => ScoredId[] | null, weights: Partial<ChannelWeights>) {
  const fused: Array<{ category: number; recall: number }> = [];
  const alone: Array<{ category: number; recall: number }> = [];
  dump.questions.forEach((q, n) => {
    if (q.category < 1 || q.category > 4) return;
    const lists: ChannelLists = { ...q.lists, event_vector: eventVector(n) ?? q.lists.event_vector };
    const conv = convs[q.conversation] as LocomoConversation;
    const priors = dumpPriors(dump, conv, q.question ?? '');
    const { facts, events } = fusedCandidates(lists, 30, weights);
    const candidates = new Set([...facts, ...events].map((h) => h.id));
    const hits = rankMemoryHits(lists, (id) => candidates.has(id), weights, priors).slice(0, 10);
    const sources = new Map<string, string[]>();
    for (const c of ['vector', 'keyword', 'graph'] as const) for (const h of lists[c]) sources.set(h.id, h.events ?? []);
    const retrieved = hits.flatMap((h) => (h.kind === 'FACT' ? (sources.get(h.id) ?? []) : [h.id])).map((id) => dump.dia[id] ?? id);
    fused.push({ category: q.category, recall: recallAt(retrieved, q.evidence) });
    alone.push({
      category: q.category,
      recall: recallAt(
        lists.event_vector.map((h) => dump.dia[h.id] ?? h.id),
        q.evidence,
      ),
    });
  });
  return { fused: summariseRecall(fused), alone: summariseRecall(alone) };
}

async function main(): Promise<void> {
  const file = process.argv[2];
  if (!file) throw new Error('usage: recall-context DUMP.json');
  const dump = JSON.parse(fs.readFileSync(file, 'utf8')) as Dump;
  const convs = loadLocomo();
  if (!convs) throw new Error('LoCoMo development split not found (EVAL_DIR)');
  const embedder: Embedder = await loadEmbedder(loadConfig(), () => undefined);
  // Each conversation's turn ids in the projection (dia id → event uuid), from every list that names them.
  const uuid = convs.map(() => new Map<string, string>());
  const superseded = new Map<string, string[]>();
  for (const q of dump.questions) {
    for (const list of Object.values(q.lists) as ScoredId[][])
      for (const h of list) {
        for (const id of [h.id, ...(h.events ?? [])]) {
          const dia = dump.dia[id];
          if (dia) uuid[q.conversation]?.set(dia, id);
        }
        if (h.supersededBy && h.supersededBy.length > 0) superseded.set(h.id, h.supersededBy);
      }
  }
  const queries = await Promise.all(convs.map((c) => embedder.embedQuery(c.questions.map((q) => q.question))));
  const depth = Math.max(30, dump.questions[0]?.lists.event_vector.length ?? 30);
  const weights = DEFAULT_CHANNEL_WEIGHTS;
  const base = evaluate(dump, convs, () => null, weights);
  process.stdout.write(`dumped lists: event_vector alone ${base.alone.recallAt10}, fused ${base.fused.recallAt10} ${JSON.stringify(base.fused.byCategory)}\n`);
  // Per conversation: each turn's own vector, the turn before (same session), and vectors of the variants' texts.
  const own = await Promise.all(convs.map((c) => embedder.embed(c.turns.map((t) => t.content))));
  const prevOf = convs.map((c) => c.turns.map((t, i) => (i > 0 && (c.turns[i - 1] as Turn).session === t.session ? i - 1 : -1)));
  const nextOf = convs.map((c) => c.turns.map((t, i) => (i + 1 < c.turns.length && (c.turns[i + 1] as Turn).session === t.session ? i + 1 : -1)));
  // The turn before (same session) and the turn, joined three ways; a session's first turn is embedded alone.
  const joinedBy = (join: (prev: Turn, t: Turn) => string) =>
    Promise.all(
      convs.map((c, ci) =>
        embedder.embed(c.turns.map((t, i) => ((prevOf[ci]?.[i] as number) >= 0 ? join(c.turns[prevOf[ci]?.[i] as number] as Turn, t) : t.content))),
      ),
    );
  // What the turn says without its speaker label (the keyword channel's body), and its body with the speaker's name after it.
  const bodies = await Promise.all(convs.map((c) => embedder.embed(c.turns.map((t) => splitSpeakerLabel(t.content, t.speaker).body))));
  const joined = await joinedBy((p, t) => `${p.content}\n${t.content}`);
  const turnFirst = await joinedBy((p, t) => `${t.content}\n${p.content}`);
  const bodyBefore = await joinedBy((p, t) => `${splitSpeakerLabel(p.content, p.speaker).body}\n${t.content}`);
  const dot = (a: readonly number[], b: readonly number[]) => {
    let s = 0;
    for (let d = 0; d < a.length; d++) s += (a[d] as number) * (b[d] as number);
    return s;
  };
  type Scorer = (qv: number[], ci: number, i: number) => number;
  const cosOwn = (qv: number[], ci: number, i: number) => dot(qv, (own[ci] as number[][])[i] as number[]);
  const cosPrev = (qv: number[], ci: number, i: number) => {
    const p = prevOf[ci]?.[i] as number;
    return p < 0 ? cosOwn(qv, ci, i) : cosOwn(qv, ci, p);
  };
  const cosNext = (qv: number[], ci: number, i: number) => {
    const p = nextOf[ci]?.[i] as number;
    return p < 0 ? cosOwn(qv, ci, i) : cosOwn(qv, ci, p);
  };
  const cosJoined = (qv: number[], ci: number, i: number) => dot(qv, (joined[ci] as number[][])[i] as number[]);
  const cosIn = (vs: number[][][]) => (qv: number[], ci: number, i: number) => dot(qv, (vs[ci] as number[][])[i] as number[]);
  const combined =
    (beta: number): Scorer =>
    (qv, ci, i) => {
      const v = (own[ci] as number[][])[i] as number[];
      const p = prevOf[ci]?.[i] as number;
      if (p < 0) return dot(qv, v);
      const w = (own[ci] as number[][])[p] as number[];
      const c = v.map((x, d) => x + beta * (w[d] as number));
      return dot(qv, c) / Math.sqrt(dot(c, c));
    };
  const scorers: Array<[string, Scorer]> = [
    ['own (as now)', cosOwn],
    ['the body alone (no speaker label)', cosIn(bodies)],
    ['joined text', cosJoined],
    ['joined text, the turn first', cosIn(turnFirst)],
    ['joined text, the turn before without its speaker label', cosIn(bodyBefore)],
    ['max(own, joined)', (q, c, i) => Math.max(cosOwn(q, c, i), cosJoined(q, c, i))],
    ['own + 0.25 joined', (q, c, i) => cosOwn(q, c, i) + 0.25 * cosJoined(q, c, i)],
    ['own + 0.5 joined', (q, c, i) => cosOwn(q, c, i) + 0.5 * cosJoined(q, c, i)],
    ['own + 1 joined', (q, c, i) => cosOwn(q, c, i) + cosJoined(q, c, i)],
    ['own + 0.75 joined', (q, c, i) => cosOwn(q, c, i) + 0.75 * cosJoined(q, c, i)],
    ['own + 0.1 prev', (q, c, i) => cosOwn(q, c, i) + 0.1 * cosPrev(q, c, i)],
    ['own + 0.25 prev', (q, c, i) => cosOwn(q, c, i) + 0.25 * cosPrev(q, c, i)],
    ['own + 0.5 prev', (q, c, i) => cosOwn(q, c, i) + 0.5 * cosPrev(q, c, i)],
    ['own + 0.25 next', (q, c, i) => cosOwn(q, c, i) + 0.25 * cosNext(q, c, i)],
    ['own + 0.2 prev + 0.2 next', (q, c, i) => cosOwn(q, c, i) + 0.2 * cosPrev(q, c, i) + 0.2 * cosNext(q, c, i)],
    ['vector own + 0.25 prev', combined(0.25)],
    ['vector own + 0.5 prev', combined(0.5)],
  ];
  const qIndex = new Map<number, number>();
  const counters = convs.map(() => 0);
  dump.questions.forEach((q, n) => {
    qIndex.set(n, counters[q.conversation] as number);
    counters[q.conversation] = (counters[q.conversation] as number) + 1;
  });
  for (const [name, score] of scorers) {
    const result = evaluate(
      dump,
      convs,
      (n) => {
        const q = dump.questions[n] as Dump['questions'][number];
        const c = convs[q.conversation] as LocomoConversation;
        const qv = (queries[q.conversation] as number[][])[qIndex.get(n) as number] as number[];
        return c.turns
          .map((_, i) => ({ i, s: score(qv, q.conversation, i) }))
          .sort((a, b) => b.s - a.s || a.i - b.i)
          .slice(0, depth)
          .map(({ i, s }) => {
            const dia = (c.turns[i] as Turn).diaId;
            const id = uuid[q.conversation]?.get(dia) ?? `c${q.conversation}:${dia}`;
            const sup = superseded.get(id);
            return { id, score: s, ...(sup ? { supersededBy: sup } : {}) };
          });
      },
      weights,
    );
    process.stdout.write(
      `${name}: event_vector alone ${result.alone.recallAt10}, fused ${result.fused.recallAt10} ${JSON.stringify(
        Object.fromEntries(Object.entries(result.fused.byCategory).map(([k, x]) => [k, x.recallAt10])),
      )}\n`,
    );
  }
  await (embedder as Embedder & { close?: () => Promise<void> }).close?.();
}

if (require.main === module)
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
