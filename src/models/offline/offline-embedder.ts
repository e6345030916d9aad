/**
 * The offline Embedder, chosen by OFFLINE_EMBEDDER: an ONNX sentence encoder from Maven Central
 * (onnx-embedder.ts; bench/embedders.ts compares them) when it can load, else the hashing embedder,
 * with the reason logged. `hashing` skips the model (fast tests, or no Maven on the machine).
 */
import type { Embedder } from '../../silver/model-ports';
import { ONNX_EMBEDDING_MODELS, type OnnxEmbeddingModelId } from './embedding-models';
import { HashingEmbedder } from './hashing-embedder';
import { OnnxEmbedder } from './onnx-embedder';
import { DEFAULT_SKIP_SIMILARITY, DEFAULT_UPDATE_SIMILARITY, type RuleJudgeOptions } from './rule-judge';

/** OFFLINE_EMBEDDER's model choices and the variant each one loads. */
export const OFFLINE_EMBEDDERS = {
  // Quantised: within 1.2 (e5) and 4 (bge) points of Recall@10 of fp32, ~1.7x the texts per
  // CPU-second, a quarter of the download (bench/results/embedders.json).
  'e5-small': 'e5-small-v2-q',
  'bge-small': 'bge-small-en-v1.5-q',
  // fp32: the same vectors as the earlier MiniLM runtime, so stored ones keep their key.
  minilm: 'all-MiniLM-L6-v2',
} as const satisfies Record<string, OnnxEmbeddingModelId>;

export type OfflineEmbedderChoice = keyof typeof OFFLINE_EMBEDDERS | 'hashing';

/** The best Recall@10 on LoCoMo among the offline models (bench/embedders.ts). */
export const DEFAULT_OFFLINE_EMBEDDER: OfflineEmbedderChoice = 'e5-small';

export interface LoadOfflineEmbedderOptions {
  cacheDir: string;
  log?: (m: string) => void;
  /** Which model (default DEFAULT_OFFLINE_EMBEDDER); 'hashing' loads none. */
  prefer?: OfflineEmbedderChoice;
  /** onnxruntime intra-op threads (default 1; 0: all cores). */
  threads?: number;
  /** onnxruntime sessions that share a call's texts, each on its own thread (default 1). */
  sessions?: number;
}

export async function loadOfflineEmbedder(opts: LoadOfflineEmbedderOptions): Promise<Embedder> {
  const log = opts.log ?? (() => undefined);
  const choice = opts.prefer ?? DEFAULT_OFFLINE_EMBEDDER;
  if (choice === 'hashing') return new HashingEmbedder();
  const spec = ONNX_EMBEDDING_MODELS[OFFLINE_EMBEDDERS[choice]];
  try {
    return await OnnxEmbedder.load(spec, { cacheDir: opts.cacheDir, log, threads: opts.threads, sessions: opts.sessions });
  } catch (err) {
    const fallback = new HashingEmbedder();
    log(
      `offline-embedder: ${spec.model} could not load, falling back to ${fallback.model} (lexical only): ` +
        `${err instanceof Error ? err.message : String(err)}`,
    );
    return fallback;
  }
}

/** all-MiniLM-L6-v2's unrelated-text cosine: the scale the rule judge's default thresholds were set on. */
const REFERENCE_UNRELATED_COSINE = ONNX_EMBEDDING_MODELS['all-MiniLM-L6-v2'].unrelatedCosine;

/**
 * A threshold set on MiniLM's cosine scale, moved to a scale whose unrelated texts sit at
 * `unrelated`: the same fraction of the way from "unrelated" to identical. Without it, e5's
 * unrelated pairs (0.84 on average) would pass the judge's 0.8 "same meaning" bar.
 */
export function rescaleSimilarity(threshold: number, unrelated: number): number {
  const fraction = (threshold - REFERENCE_UNRELATED_COSINE) / (1 - REFERENCE_UNRELATED_COSINE);
  return unrelated + fraction * (1 - unrelated);
}

/** The rule judge's similarity thresholds for this embedder: rescaled for the ONNX models, the defaults otherwise. */
export function judgeOptionsForEmbedder(embedder: Embedder): RuleJudgeOptions {
  if (!(embedder instanceof OnnxEmbedder)) return {};
  return {
    skipSimilarity: rescaleSimilarity(DEFAULT_SKIP_SIMILARITY, embedder.unrelatedCosine),
    updateSimilarity: rescaleSimilarity(DEFAULT_UPDATE_SIMILARITY, embedder.unrelatedCosine),
  };
}
