import type { ExtractionContext, ExtractionEvent, ExtractionResult, Extractor, ModelProvenance } from '../../silver/model-ports';
import {
  buildExtractFactsMessages,
  EXTRACT_FACTS_PROMPT_VERSION,
  EXTRACT_FACTS_SCHEMA_NAME,
  ExtractFactsResponseSchema,
  parseExtractFactsResponse,
} from '../../silver/prompts/extract-facts.prompt';
import { completeStructured, OpenAIRuntime } from './openai-client';

/**
 * Extracts entities, facts and relationships from a whole micro-batch in one chat completion with
 * a strict json_schema response format. Output is validated (refs resolve, spans lie inside a
 * known event's content, confidence in 0..1) before use; see `completeStructured` for repair and
 * error codes.
 */
export class OpenAIExtractor implements Extractor {
  readonly model: string;
  readonly provenance: ModelProvenance = { adapter: 'openai', promptVersion: EXTRACT_FACTS_PROMPT_VERSION };

  constructor(
    private readonly runtime: OpenAIRuntime,
    private readonly modelName: string,
  ) {
    this.model = `openai:${modelName}`;
  }

  async extract(events: ExtractionEvent[], ctx: ExtractionContext): Promise<ExtractionResult> {
    if (events.length === 0) return { entities: [], facts: [], relationships: [] };
    return completeStructured(this.runtime, {
      model: this.modelName,
      messages: buildExtractFactsMessages(events, ctx),
      schemaName: EXTRACT_FACTS_SCHEMA_NAME,
      schema: ExtractFactsResponseSchema,
      parse: (json) => parseExtractFactsResponse(json, events),
      what: `extraction of ${events.length} event(s) with ${this.modelName}`,
    });
  }
}
