import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/common/config';
import { ONNX_EMBEDDING_MODELS, OnnxEmbeddingModelId } from '../src/models/offline/embedding-models';
import { HashingEmbedder } from '../src/models/offline/hashing-embedder';
import { ensureModelFiles } from '../src/models/offline/model-artifact';
import { OnnxEmbedder } from '../src/models/offline/onnx-embedder';
import type { Embedder } from '../src/silver/model-ports';
import { nowMs, percentile, report, round } from './harness';
import { loadLocomo } from './locomo';

/** A LoCoMo conversation as this bench ranks it: turn passages and the questions of categories 1-4. */
interface LocomoConversation {
  sampleId: string;
  turns: Array<{ id: string; passage: string }>;
  questions: Array<{ question: string; category: number; evidence: string[] }>;
}

function conversationsOf(file: string): LocomoConversation[] {
  return (loadLocomo(file) ?? []).map((c) => ({
    sampleId: c.sampleId,
    turns: c.turns.map((t) => ({ id: t.diaId, passage: t.content })),
    questions: c.questions.filter((q) => q.category >= 1 && q.category <= 4),
  }));
}

const REPO_ROOT = path.resolve(__dirname.includes(`${path.sep}dist${path.sep}`) ? path.join(__dirname, '..', '..') : path.join(__dirname, '..'));
/** The evaluation set stays outside the repository (its licence is CC BY-NC 4.0): ../shared/eval. */
const LOCOMO = process.env.BENCH_LOCOMO_FILE ?? path.join(REPO_ROOT, '..', 'shared', 'eval', 'locomo-dev', 'locomo-dev.json');
const CATEGORIES: Record<number, string> = { 1: 'multiHop', 2: 'temporal', 3: 'openDomain', 4: 'singleHop' };
const TOP_K = 10;
const BATCH_SIZES = [1, 16, 64] as const;

const dot = (a: readonly number[], b: readonly number[]): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
};

interface RecallFigures {
  questions: number;
  overall: number;
  perCategory: Record<string, { questions: number; recallAt10: number }>;
  /** Cosine of a question to its gold turns, and of unrelated turn pairs: where a similarity threshold sits. */
  cosine: { questionToGoldMean: number; unrelatedTurnsMean: number; unrelatedTurnsP95: number };
}

/** Recall@10 of gold evidence turns among all turns of the question's conversation, by cosine. */
async function recall(embedder: Embedder, conversations: LocomoConversation[]): Promise<RecallFigures> {
  const sums = new Map<number, { n: number; recall: number }>();
  const gold: number[] = [];
  const unrelated: number[] = [];
  for (const c of conversations) {
    const turnVectors = await embedder.embed(c.turns.map((t) => t.passage));
    const queryVectors = await embedder.embedQuery(c.questions.map((q) => q.question));
    const index = new Map(c.turns.map((t, i) => [t.id, i]));
    c.questions.forEach((q, qi) => {
      const qv = queryVectors[qi] as number[];
      const scores = turnVectors.map((v, i) => ({ i, s: dot(qv, v) }));
      scores.sort((a, b) => b.s - a.s || a.i - b.i);
      const top = new Set(scores.slice(0, TOP_K).map((x) => x.i));
      const wanted = q.evidence.map((id) => index.get(id) as number);
      const hit = wanted.filter((i) => top.has(i)).length / wanted.length;
      const s = sums.get(q.category) ?? { n: 0, recall: 0 };
      sums.set(q.category, { n: s.n + 1, recall: s.recall + hit });
      for (const i of wanted) gold.push(dot(qv, turnVectors[i] as number[]));
    });
    // Fixed pseudo-random pairs of turns at least 50 turns apart: mostly unrelated.
    for (let k = 0; k < 500; k++) {
      const a = (k * 7919) % c.turns.length;
      const b = (a + 50 + ((k * 104_729) % Math.max(1, c.turns.length - 100))) % c.turns.length;
      if (Math.abs(a - b) >= 50) unrelated.push(dot(turnVectors[a] as number[], turnVectors[b] as number[]));
    }
  }
  const perCategory: RecallFigures['perCategory'] = {};
  let n = 0;
  let total = 0;
  for (const [cat, name] of Object.entries(CATEGORIES)) {
    const s = sums.get(Number(cat)) ?? { n: 0, recall: 0 };
    perCategory[name] = { questions: s.n, recallAt10: s.n ? round(s.recall / s.n, 4) : Number.NaN };
    n += s.n;
    total += s.recall;
  }
  const mean = (xs: number[]): number => round(xs.reduce((a, b) => a + b, 0) / xs.length, 3);
  return {
    questions: n,
    overall: round(total / n, 4),
    perCategory,
    cosine: { questionToGoldMean: mean(gold), unrelatedTurnsMean: mean(unrelated), unrelatedTurnsP95: round(percentile(unrelated, 95), 3) },
  };
}

/**
 * Texts per wall-clock second embedding `texts` in calls of `batch` (after one warm-up call), and
 * per CPU-second of this process (its worker threads included): the latter does not depend on
 * what else the shared machine runs; on an idle 2-core machine wall ≈ up to 2 × CPU figure.
 */
async function throughput(embedder: Embedder, texts: string[], batch: number): Promise<{ wall: number; perCpuSecond: number }> {
  const n = batch === 1 ? 64 : 256;
  const sample = texts.slice(0, n);
  await embedder.embed(sample.slice(0, batch));
  const start = nowMs();
  const cpu = process.cpuUsage();
  for (let i = 0; i < sample.length; i += batch) await embedder.embed(sample.slice(i, i + batch));
  const used = process.cpuUsage(cpu);
  return { wall: round(sample.length / ((nowMs() - start) / 1000), 1), perCpuSecond: round(sample.length / ((used.user + used.system) / 1e6), 1) };
}

interface CandidateFigures {
  model: string;
  artifact: string | null;
  onnxMb: number | null;
  fetchSeconds: number | null;
  loadMs: number;
  textsPerSec: Record<string, number>;
  textsPerCpuSecond: Record<string, number>;
  recall: RecallFigures;
}

async function measure(id: OnnxEmbeddingModelId | 'hashing', cacheDir: string, conversations: LocomoConversation[]): Promise<CandidateFigures> {
  const passages = conversations.flatMap((c) => c.turns.map((t) => t.passage));
  let embedder: Embedder & { close?: () => Promise<void> };
  let fetchSeconds: number | null = null;
  let onnxMb: number | null = null;
  let artifact: string | null = null;
  let loadMs: number;
  if (id === 'hashing') {
    const start = nowMs();
    embedder = new HashingEmbedder();
    loadMs = round(nowMs() - start);
  } else {
    const spec = ONNX_EMBEDDING_MODELS[id];
    artifact = `${spec.artifact.groupId}:${spec.artifact.artifactId}:${spec.artifact.version}`;
    const fetchStart = nowMs();
    const files = await ensureModelFiles(spec, { cacheDir, log: (m) => process.stdout.write(`  ${m}\n`) });
    fetchSeconds = round((nowMs() - fetchStart) / 1000);
    onnxMb = round(fs.statSync(files.onnxPath).size / 2 ** 20, 1);
    const start = nowMs();
    embedder = await OnnxEmbedder.load(spec, { cacheDir, batchSize: 64 });
    loadMs = round(nowMs() - start);
  }
  try {
    const textsPerSec: Record<string, number> = {};
    const textsPerCpuSecond: Record<string, number> = {};
    for (const b of BATCH_SIZES) {
      const t = await throughput(embedder, passages, b);
      textsPerSec[`batch${b}`] = t.wall;
      textsPerCpuSecond[`batch${b}`] = t.perCpuSecond;
    }
    return { model: embedder.model, artifact, onnxMb, fetchSeconds, loadMs, textsPerSec, textsPerCpuSecond, recall: await recall(embedder, conversations) };
  } finally {
    await embedder.close?.();
  }
}

function table(rows: CandidateFigures[]): string {
  const head = [
    'model',
    'multi-hop',
    'temporal',
    'open-dom',
    'single-hop',
    'overall',
    'b=1/s',
    'b=16/s',
    'b=64/s',
    'b=64/cpu-s',
    'load ms',
    'MB',
    'gold cos',
    'unrel cos',
  ];
  const lines = rows.map((r) => {
    const c = r.recall.perCategory;
    return [
      r.model,
      c.multiHop?.recallAt10,
      c.temporal?.recallAt10,
      c.openDomain?.recallAt10,
      c.singleHop?.recallAt10,
      r.recall.overall,
      r.textsPerSec.batch1,
      r.textsPerSec.batch16,
      r.textsPerSec.batch64,
      r.textsPerCpuSecond.batch64,
      r.loadMs,
      r.onnxMb ?? '-',
      r.recall.cosine.questionToGoldMean,
      r.recall.cosine.unrelatedTurnsMean,
    ].map(String);
  });
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const fmt = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  return [fmt(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(fmt)].join('\n');
}

/**
 * Offline embedders on LoCoMo (dev split): Recall@10 of the gold evidence turns when every turn of
 * a conversation is ranked by cosine to the question (categories 1-4), texts/s at batch sizes 1,
 * 16 and 64, and model load time. BENCH_EMBEDDERS=id,id picks candidates (default: all).
 */
export async function embeddersBench(): Promise<void> {
  if (!fs.existsSync(LOCOMO)) {
    process.stdout.write(`embedders: skipped: no LoCoMo dev set at ${LOCOMO} (set BENCH_LOCOMO_FILE to its path)\n`);
    return;
  }
  const loadAverageAtStart = os.loadavg().map((x) => round(x));
  const conversations = conversationsOf(LOCOMO);
  const cacheDir = loadConfig(process.env).cacheDir;
  const all = [...(Object.keys(ONNX_EMBEDDING_MODELS) as OnnxEmbeddingModelId[]), 'hashing' as const];
  const picked = process.env.BENCH_EMBEDDERS ? process.env.BENCH_EMBEDDERS.split(',').map((s) => s.trim()) : all;
  const unknown = picked.filter((p) => !all.includes(p as OnnxEmbeddingModelId));
  if (unknown.length > 0) throw new Error(`BENCH_EMBEDDERS: unknown ${unknown.join(', ')}; known: ${all.join(', ')}`);
  const rows: CandidateFigures[] = [];
  for (const id of picked as Array<OnnxEmbeddingModelId | 'hashing'>) {
    process.stdout.write(`embedders: ${id}…\n`);
    rows.push(await measure(id, cacheDir, conversations));
  }
  process.stdout.write(`\nRecall@10 on LoCoMo dev (${rows[0]?.recall.questions} questions), texts/s on ${os.cpus().length} cores:\n${table(rows)}\n`);
  report('embedders', {
    dataset: {
      file: path.basename(LOCOMO),
      conversations: conversations.length,
      turns: conversations.reduce((s, c) => s + c.turns.length, 0),
      questions: rows[0]?.recall.questions,
    },
    loadAverageAtStart,
    loadAverageAtEnd: os.loadavg().map((x) => round(x)),
    candidates: rows,
    note: 'passages "Speaker: text [image: caption]"; queries with the model\'s query prefix (bge: instruction; e5: "query: "/"passage: "; MiniLM none); throughput on the first 64 (batch 1) or 256 turns, one warm-up call first; onnxruntime threads: all cores; the machine is shared with other jobs, so texts/s are indicative',
  });
}
