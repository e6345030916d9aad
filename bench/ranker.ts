import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  ChannelLists,
  DEFAULT_CHANNEL_WEIGHTS,
  FACT_CHANNELS,
  EVENT_CHANNELS,
  foldEventsIntoFacts,
  fuseByReciprocalRank,
  FusedHit,
  RRF_K,
  SEARCH_CHANNELS,
} from '../src/graph/search-ranking';
import { LocomoConversation, recallAt, summariseRecall } from './locomo';
import { Dump, dumpPriors } from './recall-tune';
import { REPO_ROOT } from './split';

/**
 * A learned ranker over the channels (issue 44, item 3), tried against the hand-set weighted RRF on
 * the same dump. Each fused candidate of a question gets the features search already has: per
 * channel its reciprocal rank 1/(RRF_K + rank) and its score relative to the channel's best, whether
 * it is a fact and the fact's confidence. A logistic regression (scikit-learn, `bench/ranker/train.py`)
 * learns from the *tune* questions only which candidates hold an evidence turn (`Mode`); its linear
 * score (`modelScore`) then replaces the fused score, and everything after fusion (which candidates
 * are re-checked, folding a turn into the fact that carries it, the priors, the stale-turn rule) is
 * search's own.
 *
 * Figures: RRF and the ranker on tune (the ranker by leave-one-conversation-out: each tune
 * conversation scored by a model that did not see it) and on validate (the model of every tune
 * question). The ranker would ship only where it beats RRF on validate.
 */
export const FEATURES = [...SEARCH_CHANNELS.map((c) => `rr_${c}`), ...SEARCH_CHANNELS.map((c) => `rel_${c}`), 'is_fact', 'confidence'] as const;

export interface Model {
  coef: number[];
  intercept: number;
}

/** The features of every candidate any channel found, by id. */
export function candidateFeatures(lists: ChannelLists, confidence: (id: string) => number | undefined, k = RRF_K): Map<string, number[]> {
  const out = new Map<string, number[]>();
  const factIds = new Set(FACT_CHANNELS.flatMap((c) => lists[c].map((h) => h.id)));
  SEARCH_CHANNELS.forEach((c, ci) => {
    const list = lists[c];
    const best = Math.max(1e-9, ...list.map((h) => h.score));
    list.forEach((h, i) => {
      const f = out.get(h.id) ?? new Array<number>(FEATURES.length).fill(0);
      if (f[ci] === 0) {
        f[ci] = 1 / (k + i + 1);
        f[SEARCH_CHANNELS.length + ci] = Math.max(0, h.score) / best;
      }
      out.set(h.id, f);
    });
  });
  for (const [id, f] of out) {
    const isFact = factIds.has(id);
    f[2 * SEARCH_CHANNELS.length] = isFact ? 1 : 0;
    f[2 * SEARCH_CHANNELS.length + 1] = isFact ? (confidence(id) ?? 0) : 0;
  }
  return out;
}

/** Pointwise: P(evidence) by logistic regression. Pairwise: a linear score from evidence-vs-other pairs of the same question (RankNet-style). */
export type Mode = 'pointwise' | 'pairwise';

/**
 * The candidate's score in place of the fused one: the linear part of the model without its
 * intercept, so a candidate no channel found scores 0 and folding (which adds a turn's score to the
 * fact carrying it) adds as it does with RRF, whose score is this with the channel weights on the
 * reciprocal ranks (a probability instead, 0.5 + z/4 near zero, made every folded turn add ~0.5:
 * RRF's own weights scored 0.704 instead of 0.770 on tune that way).
 */
export function modelScore(m: Model, f: readonly number[]): number {
  return m.coef.reduce((s, w, i) => s + w * (f[i] ?? 0), 0);
}

interface Question {
  conversation: number;
  split?: string;
  category: number;
  question?: string;
  evidence: string[];
  lists: ChannelLists;
}

function sourcesOf(q: Question): Map<string, string[]> {
  const sources = new Map<string, string[]>();
  for (const c of FACT_CHANNELS) for (const h of q.lists[c]) sources.set(h.id, h.events ?? []);
  return sources;
}

/** Search's ranking of one question with the model's score in place of the fused RRF score (null: RRF itself). */
function ranked(dump: Dump, conv: LocomoConversation, q: Question, model: Model | null, limit = 10): string[] {
  const priors = dumpPriors(dump, conv, q.question ?? '');
  let fused: FusedHit[] = fuseByReciprocalRank(q.lists, RRF_K, DEFAULT_CHANNEL_WEIGHTS);
  if (model) {
    const feats = candidateFeatures(q.lists, (id) => dump.facts?.[id]?.confidence);
    fused = fused.map((h) => ({ ...h, score: modelScore(model, feats.get(h.id) ?? []) })).sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
  }
  const factIds = new Set(FACT_CHANNELS.flatMap((c) => q.lists[c].map((h) => h.id)));
  const facts = fused.filter((h) => factIds.has(h.id)).slice(0, limit * 3);
  const events = fused.filter((h) => !factIds.has(h.id)).slice(0, limit * 3);
  const visible = new Set([...facts, ...events].map((h) => h.id));
  const kept = fused.filter((h) => visible.has(h.id));
  const sources = sourcesOf(q);
  const factEvents = new Map<string, string[]>();
  for (const id of factIds) if (visible.has(id)) factEvents.set(id, sources.get(id) ?? []);
  const stale = new Map<string, string[]>();
  for (const c of EVENT_CHANNELS) for (const h of q.lists[c]) if ((h.supersededBy ?? []).length > 0) stale.set(h.id, h.supersededBy ?? []);
  const hits = foldEventsIntoFacts(kept, factEvents, stale, priors).slice(0, limit);
  return hits.flatMap((h) => (h.kind === 'FACT' ? (sources.get(h.id) ?? []) : [h.id])).map((id) => dump.dia[id] ?? id);
}

/** Recall@10 (categories 1–4) of the questions `which` selects, each ranked with the model `modelFor` gives it. */
export function recallWith(dump: Dump, convs: readonly LocomoConversation[], which: (q: Question) => boolean, modelFor: (q: Question) => Model | null): number {
  const rows: Array<{ category: number; recall: number }> = [];
  for (const q of dump.questions as Question[]) {
    if (q.category < 1 || q.category > 4 || !which(q)) continue;
    const retrieved = ranked(dump, convs[q.conversation] as LocomoConversation, q, modelFor(q));
    rows.push({ category: q.category, recall: recallAt(retrieved, q.evidence) });
  }
  return summariseRecall(rows).recallAt10;
}

/** One training row per candidate of each tune question: its features and whether it holds an evidence turn. */
export function trainingRows(dump: Dump, which: (q: Question) => boolean): Array<{ group: number; question: number; x: number[]; y: number }> {
  const rows: Array<{ group: number; question: number; x: number[]; y: number }> = [];
  for (const [qi, q] of (dump.questions as Question[]).entries()) {
    if (q.category < 1 || q.category > 4 || !which(q)) continue;
    const evidence = new Set(q.evidence);
    const sources = sourcesOf(q);
    for (const [id, x] of candidateFeatures(q.lists, (i) => dump.facts?.[i]?.confidence)) {
      const turns = (sources.get(id) ?? [id]).map((e) => dump.dia[e] ?? e);
      rows.push({ group: q.conversation, question: qi, x, y: turns.some((t) => evidence.has(t)) ? 1 : 0 });
    }
  }
  return rows;
}

/** Fits with scikit-learn: the model of all rows and one per left-out group (leave-one-conversation-out). */
export function fit(rows: ReturnType<typeof trainingRows>, mode: Mode): { all: Model & { C: number }; byHeldOut: Record<string, Model> } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ranker-'));
  const input = path.join(dir, 'rows.json');
  fs.writeFileSync(input, JSON.stringify({ features: FEATURES, rows }));
  const python = process.env.PYTHON ?? 'python3';
  const out = execFileSync(python, [path.join(REPO_ROOT, 'bench', 'ranker', 'train.py'), input, mode], { encoding: 'utf8', maxBuffer: 1 << 26 });
  fs.rmSync(dir, { recursive: true, force: true });
  return JSON.parse(out) as { all: Model & { C: number }; byHeldOut: Record<string, Model> };
}

/** Prints tune (cross-validated) and validate Recall@10 of RRF and of the learned ranker, and the ranker's weights. */
export function compareRanker(dump: Dump, convs: readonly LocomoConversation[], write: (line: string) => void, mode: Mode = 'pointwise'): void {
  const isTune = (q: Question) => (q.split ?? 'tune') === 'tune';
  const isValidate = (q: Question) => q.split === 'validate';
  const rows = trainingRows(dump, isTune);
  const models = fit(rows, mode);
  const rrfTune = recallWith(dump, convs, isTune, () => null);
  const rrfValidate = recallWith(dump, convs, isValidate, () => null);
  const rankerTuneInSample = recallWith(dump, convs, isTune, () => models.all);
  const rankerTuneCv = recallWith(dump, convs, isTune, (q) => models.byHeldOut[String(q.conversation)] ?? null);
  const rankerValidate = recallWith(dump, convs, isValidate, () => models.all);
  write(
    `learned ranker (${mode} logistic regression, scikit-learn, C ${models.all.C}; ${rows.length} tune candidates, ${rows.filter((r) => r.y === 1).length} hold evidence)\n`,
  );
  write(`  weights: ${FEATURES.map((f, i) => `${f} ${(models.all.coef[i] ?? 0).toFixed(3)}`).join(', ')}, intercept ${models.all.intercept.toFixed(3)}\n`);
  write(`  RRF     tune ${rrfTune.toFixed(3)}  validate ${rrfValidate.toFixed(3)}\n`);
  const conversations = [...new Set((dump.questions as Question[]).map((q) => q.conversation))].sort((a, b) => a - b);
  for (const c of conversations) {
    const inConv = (q: Question) => q.conversation === c;
    const split = (dump.questions as Question[]).find(inConv)?.split ?? 'tune';
    const model = (q: Question) => (split === 'tune' ? (models.byHeldOut[String(q.conversation)] ?? null) : models.all);
    write(
      `    conversation ${c} (${split}): RRF ${recallWith(dump, convs, inConv, () => null).toFixed(3)}, ranker ${recallWith(dump, convs, inConv, model).toFixed(3)}\n`,
    );
  }
  write(
    `  ranker  tune ${rankerTuneCv.toFixed(3)} (leave-one-conversation-out; in sample ${rankerTuneInSample.toFixed(3)})  validate ${rankerValidate.toFixed(3)}\n`,
  );
  write(`  ${rankerValidate > rrfValidate ? 'the ranker beats RRF on validate' : 'the ranker does not beat RRF on validate: RRF stays'}\n`);
}
