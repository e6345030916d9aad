import type { Judge, JudgeDecision, JudgeInput, ModelProvenance } from '../../silver/model-ports';
import {
  buildJudgeFactsMessages,
  JUDGE_FACTS_PROMPT_VERSION,
  JUDGE_FACTS_SCHEMA_NAME,
  JudgeFactsResponseSchema,
  parseJudgeFactsResponse,
} from '../../silver/prompts/judge-facts.prompt';
import { completeStructured, OpenAIRuntime } from './openai-client';

/**
 * Decides ADD / UPDATE / SUPERSEDE / SKIP for a batch of new facts in one chat completion.
 * Inputs without candidates are ADD without asking the model; the others are sent together and
 * the decisions come back in input order, each targetId checked against that input's candidates.
 */
export class OpenAIJudge implements Judge {
  readonly model: string;
  readonly provenance: ModelProvenance = { adapter: 'openai', promptVersion: JUDGE_FACTS_PROMPT_VERSION };

  constructor(
    private readonly runtime: OpenAIRuntime,
    private readonly modelName: string,
  ) {
    this.model = `openai:${modelName}`;
  }

  async decide(inputs: JudgeInput[]): Promise<JudgeDecision[]> {
    const asked = inputs.map((input, i) => ({ input, i })).filter(({ input }) => input.candidates.length > 0);
    const decisions: JudgeDecision[] = inputs.map(() => ({ action: 'ADD', targetId: null, reason: 'no existing fact to compare with' }));
    if (asked.length === 0) return decisions;
    const sent = asked.map(({ input }) => input);
    const answers = await completeStructured(this.runtime, {
      model: this.modelName,
      messages: buildJudgeFactsMessages(sent),
      schemaName: JUDGE_FACTS_SCHEMA_NAME,
      schema: JudgeFactsResponseSchema,
      parse: (json) => parseJudgeFactsResponse(json, sent),
      what: `judging ${sent.length} fact(s) with ${this.modelName}`,
    });
    asked.forEach(({ i }, k) => (decisions[i] = answers[k]));
    return decisions;
  }
}
