import { createOpenAIRuntime, OpenAIModelsOptions } from './openai-client';
import { KNOWN_EMBEDDING_DIMENSIONS, OpenAIEmbedder } from './openai-embedder';
import { OpenAIEntityJudge } from './openai-entity-judge';
import { OpenAIExtractor } from './openai-extractor';
import { OpenAIJudge } from './openai-judge';

export type { OpenAIModelsOptions } from './openai-client';
export { KNOWN_EMBEDDING_DIMENSIONS, OpenAIEmbedder } from './openai-embedder';
export { OpenAIExtractor } from './openai-extractor';
export { OpenAIJudge } from './openai-judge';
export { OpenAIEntityJudge } from './openai-entity-judge';

export interface OpenAIModels {
  extractor?: OpenAIExtractor;
  judge?: OpenAIJudge;
  /** Gold promotion's judge for hard entity pairs: the same judge model (docs/gold.md). */
  entityJudge?: OpenAIEntityJudge;
  embedder?: OpenAIEmbedder;
}

/**
 * Builds the OpenAI-compatible adapters for the models that are named in `options`, sharing one
 * client and one concurrency limit. Throws a RangeError for invalid numbers and an Error when an
 * embedding model's dimensions are unknown and not configured.
 */
export function createOpenAIModels(options: OpenAIModelsOptions): OpenAIModels {
  const runtime = createOpenAIRuntime(options);
  const models: OpenAIModels = {};
  if (options.extractionModel) models.extractor = new OpenAIExtractor(runtime, options.extractionModel);
  if (options.judgeModel) {
    models.judge = new OpenAIJudge(runtime, options.judgeModel);
    models.entityJudge = new OpenAIEntityJudge(runtime, options.judgeModel);
  }
  if (options.embeddingModel) {
    const model = options.embeddingModel;
    const dimensions = options.embeddingDimensions ?? KNOWN_EMBEDDING_DIMENSIONS[model.replace(/:latest$/, '')];
    if (dimensions === undefined) {
      throw new Error(`The output size of embedding model "${model}" is unknown: configure embeddingDimensions (the length of its vectors).`);
    }
    models.embedder = new OpenAIEmbedder(runtime, {
      model,
      dimensions,
      // Only OpenAI's text-embedding-3 models accept `dimensions` for sure; others may reject it.
      requestDimensions: options.embeddingDimensions !== undefined && model.startsWith('text-embedding-3'),
      batchSize: options.embeddingBatchSize ?? 256,
    });
  }
  return models;
}
