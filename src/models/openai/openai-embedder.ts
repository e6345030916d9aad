import type { Embedder } from '../../silver/model-ports';
import { ModelException, ModelExceptionCode } from '../../silver/model.exception';
import { callWithRetry, OpenAIRuntime, truncateRaw } from './openai-client';

/** Native output sizes of common embedding models, used when `embeddingDimensions` is not set. */
export const KNOWN_EMBEDDING_DIMENSIONS: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
  'nomic-embed-text': 768,
  'mxbai-embed-large': 1024,
  'all-minilm': 384,
  'bge-m3': 1024,
};

export interface OpenAIEmbedderOptions {
  model: string;
  /** Expected vector length; every returned vector is checked against it. */
  dimensions: number;
  /** Send `dimensions` in the request (OpenAI text-embedding-3 and matryoshka models on vLLM). */
  requestDimensions: boolean;
  batchSize: number;
}

/**
 * Embeds texts through `/embeddings` with `encoding_format: 'float'` (the SDK otherwise asks for
 * base64, which many local servers do not speak), in batches that run within the shared
 * concurrency limit; vectors are checked (count, order, length, finite) and L2-normalised.
 */
export class OpenAIEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;

  constructor(
    private readonly runtime: OpenAIRuntime,
    private readonly options: OpenAIEmbedderOptions,
  ) {
    if (!Number.isInteger(options.dimensions) || options.dimensions < 1)
      throw new RangeError(`embedding dimensions must be an integer >= 1, got ${options.dimensions}`);
    if (!Number.isInteger(options.batchSize) || options.batchSize < 1)
      throw new RangeError(`embedding batch size must be an integer >= 1, got ${options.batchSize}`);
    this.model = `openai:${options.model}`;
    this.dimensions = options.dimensions;
  }

  async embed(texts: string[]): Promise<number[][]> {
    const batches: string[][] = [];
    for (let i = 0; i < texts.length; i += this.options.batchSize) batches.push(texts.slice(i, i + this.options.batchSize));
    const results = await Promise.all(batches.map((batch) => this.embedBatch(batch)));
    return results.flat();
  }

  /** The endpoint has no query form: a model that wants a query instruction is given it by the caller's text. */
  embedQuery(texts: string[]): Promise<number[][]> {
    return this.embed(texts);
  }

  private async embedBatch(texts: string[]): Promise<number[][]> {
    const { value: response, attempts } = await callWithRetry(this.runtime, `embedding ${texts.length} text(s) with ${this.options.model}`, () =>
      this.runtime.client.embeddings.create({
        model: this.options.model,
        // OpenAI rejects empty strings; a space embeds as "nothing" on every server.
        input: texts.map((t) => (t === '' ? ' ' : t)),
        encoding_format: 'float',
        ...(this.options.requestDimensions ? { dimensions: this.dimensions } : {}),
      }),
    );
    const malformed = (reason: string) =>
      new ModelException(
        ModelExceptionCode.MALFORMED_OUTPUT,
        `embedding with ${this.options.model}: ${reason}`,
        truncateRaw(JSON.stringify(response)),
        attempts,
      );
    const data = Array.isArray(response?.data) ? response.data : [];
    if (data.length !== texts.length) throw malformed(`returned ${data.length} vector(s) for ${texts.length} text(s)`);
    const vectors: number[][] = new Array(texts.length);
    for (const [position, item] of data.entries()) {
      const index = typeof item.index === 'number' ? item.index : position;
      if (!Number.isInteger(index) || index < 0 || index >= texts.length || vectors[index] !== undefined)
        throw malformed(`bad or repeated index ${item.index}`);
      const v = item.embedding as unknown;
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'number' && Number.isFinite(x)))
        throw malformed(`vector ${index} is not an array of finite numbers`);
      if (v.length !== this.dimensions)
        throw malformed(`vector ${index} has ${v.length} dimensions, expected ${this.dimensions}: set the embedding dimensions to the model's`);
      vectors[index] = normalise(v as number[], () => malformed(`vector ${index} is all zeros`));
    }
    return vectors;
  }
}

function normalise(v: number[], onZero: () => Error): number[] {
  const norm = Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
  if (norm === 0) throw onZero();
  return v.map((x) => x / norm);
}
