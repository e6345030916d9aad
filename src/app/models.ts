import { AppConfig } from '../common/config';
import { judgeOptionsForEmbedder, loadOfflineEmbedder } from '../models/offline/offline-embedder';
import { RuleExtractor } from '../models/offline/rule-extractor';
import { RuleJudge } from '../models/offline/rule-judge';
import { createOpenAIModels, OpenAIModelsOptions } from '../models/openai/openai-models';
import { DeriveModels } from '../silver/derive.service';
import { Embedder } from '../silver/model-ports';
import { EntityJudge } from '../gold/promotion/promotion.types';
import { offlineEntityJudge } from '../gold/promotion/resolution-rules';
import { pipelineMetrics, secondsSince } from '../platform/telemetry/metrics';
import { traced } from '../platform/telemetry/tracing';

/**
 * The same model with each named call timed (`medallion_model_call_seconds`, errors counted in
 * `medallion_model_call_errors_total`, by model and operation) and traced as a GenAI span
 * (`gen_ai.operation.name`, `gen_ai.request.model`; no prompt or output). Other members are the
 * model's own (the prototype chain), so adapters keep their extra fields.
 */
export function instrumentModel<M extends { readonly model: string }>(model: M, calls: Partial<Record<keyof M & string, string>>): M {
  const wrapped = Object.create(model) as M;
  for (const [method, operation] of Object.entries(calls) as Array<[keyof M & string, string]>) {
    const original = model[method];
    if (typeof original !== 'function') continue;
    const call = original as (...args: unknown[]) => Promise<unknown>;
    const run = async (...args: unknown[]): Promise<unknown> => {
      const labels = { model: model.model, operation };
      const started = process.hrtime.bigint();
      try {
        return await traced(
          `${operation} ${model.model}`,
          { 'gen_ai.operation.name': operation, 'gen_ai.request.model': model.model, 'medallion.inputs': Array.isArray(args[0]) ? args[0].length : 1 },
          () => call.apply(model, args),
        );
      } catch (err) {
        pipelineMetrics.modelErrors.inc(labels);
        throw err;
      } finally {
        pipelineMetrics.modelSeconds.observe(labels, secondsSince(started));
      }
    };
    Object.defineProperty(wrapped, method, { value: run, enumerable: true });
  }
  return wrapped;
}

/** The OpenAI-compatible adapter options the configuration names (models left unset are not built). */
function openAIOptions(config: AppConfig, models: { extraction: boolean; embedding: boolean }): OpenAIModelsOptions {
  const o = config.openai;
  return {
    apiKey: o.apiKey,
    baseUrl: o.baseUrl,
    extractionModel: models.extraction ? o.extractionModel : undefined,
    judgeModel: models.extraction ? (config.models.judgeModel ?? o.extractionModel) : undefined,
    embeddingModel: models.embedding ? o.embeddingModel : undefined,
    embeddingDimensions: config.models.embeddingDimensions,
    timeoutMs: config.models.timeoutMs,
    maxRetries: config.models.maxRetries,
    concurrency: config.models.concurrency,
  };
}

/**
 * The embedder: EMBEDDING_MODEL through the OpenAI-compatible adapter, else the offline one. One
 * instance serves both the workers (facts) and the API (search queries), so both use one model.
 */
export async function loadEmbedder(config: AppConfig, log: (msg: string) => void, defaults: { sessions?: number } = {}): Promise<Embedder> {
  const remote = createOpenAIModels(openAIOptions(config, { extraction: false, embedding: true }));
  const embedder =
    remote.embedder ??
    (await loadOfflineEmbedder({
      cacheDir: config.cacheDir,
      log,
      prefer: config.models.offlineEmbedder,
      threads: config.models.offlineEmbedderThreads,
      sessions: config.models.offlineEmbedderSessions ?? defaults.sessions,
    }));
  log(`models: embedder ${embedder.model}`);
  return instrumentModel(embedder, { embed: 'embed', embedQuery: 'embed_query' });
}

/**
 * The models the pipeline runs with: OpenAI-compatible ones where configured
 * (EXTRACTION_MODEL, JUDGE_MODEL — default: the extraction model), the offline defaults
 * otherwise, so the service derives facts out of the box with no key.
 */
export function loadModels(config: AppConfig, embedder: Embedder, log: (msg: string) => void): DeriveModels {
  const remote = createOpenAIModels(openAIOptions(config, { extraction: true, embedding: false }));
  const extractor = remote.extractor ?? new RuleExtractor();
  // The offline judge's similarity bars follow the embedder's cosine scale (e5's is compressed).
  const judge = remote.judge ?? new RuleJudge(judgeOptionsForEmbedder(embedder));
  log(`models: extractor ${extractor.model}, judge ${judge.model}`);
  return { extractor: instrumentModel(extractor, { extract: 'extract' }), judge: instrumentModel(judge, { decide: 'judge' }), embedder };
}

/**
 * Gold promotion's judge for hard entity pairs, chosen by the configuration that chooses the
 * Silver judge: with EXTRACTION_MODEL set, the OpenAI-compatible model JUDGE_MODEL (default: the
 * extraction model) with the `judge-entities` prompt; otherwise the offline rules.
 */
export function loadEntityJudge(config: AppConfig, log: (msg: string) => void): EntityJudge {
  const remote = createOpenAIModels(openAIOptions(config, { extraction: true, embedding: false }));
  const judge = remote.entityJudge ?? offlineEntityJudge;
  log(`models: entity judge ${judge.model}${judge.promptVersion ? ` (prompt ${judge.promptVersion})` : ''}`);
  return instrumentModel(judge, { decide: 'judge_entities' });
}
