import { AppConfig } from '../common/config';
import { loadOfflineEmbedder } from '../infra/offline-models/offline-embedder';
import { RuleExtractor } from '../infra/offline-models/rule-extractor';
import { RuleJudge } from '../infra/offline-models/rule-judge';
import { createOpenAIModels } from '../infra/openai/openai-models';
import { DeriveModels } from './derive.service';
import { Embedder } from './model-ports';

/**
 * The models the pipeline runs with: OpenAI-compatible ones where configured
 * (EXTRACTION_MODEL, JUDGE_MODEL — default: the extraction model —, EMBEDDING_MODEL), the
 * offline defaults otherwise, so the service derives facts out of the box with no key.
 */
export async function loadModels(config: AppConfig, log: (msg: string) => void): Promise<DeriveModels> {
  const o = config.openai;
  const remote = createOpenAIModels({
    apiKey: o.apiKey,
    baseUrl: o.baseUrl,
    extractionModel: o.extractionModel,
    judgeModel: config.models.judgeModel ?? o.extractionModel,
    embeddingModel: o.embeddingModel,
    embeddingDimensions: config.models.embeddingDimensions,
    timeoutMs: config.models.timeoutMs,
    maxRetries: config.models.maxRetries,
    concurrency: config.models.concurrency,
  });
  const extractor = remote.extractor ?? new RuleExtractor();
  const judge = remote.judge ?? new RuleJudge();
  const embedder = remote.embedder ?? (await loadOfflineEmbedder({ cacheDir: config.cacheDir, log, prefer: config.models.offlineEmbedder }));
  log(`models: extractor ${extractor.model}, judge ${judge.model}, embedder ${embedder.model}`);
  return { extractor, judge, embedder };
}

/**
 * The embedder alone, as `loadModels` would pick it (EMBEDDING_MODEL, else the offline one): the
 * API process embeds search queries with the same model the workers embedded the facts with.
 */
export async function loadEmbedder(config: AppConfig, log: (msg: string) => void): Promise<Embedder> {
  const o = config.openai;
  const remote = createOpenAIModels({
    apiKey: o.apiKey,
    baseUrl: o.baseUrl,
    extractionModel: undefined,
    judgeModel: undefined,
    embeddingModel: o.embeddingModel,
    embeddingDimensions: config.models.embeddingDimensions,
    timeoutMs: config.models.timeoutMs,
    maxRetries: config.models.maxRetries,
    concurrency: config.models.concurrency,
  });
  const embedder = remote.embedder ?? (await loadOfflineEmbedder({ cacheDir: config.cacheDir, log, prefer: config.models.offlineEmbedder }));
  log(`search: query embedder ${embedder.model}`);
  return embedder;
}
