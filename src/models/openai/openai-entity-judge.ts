import type { EntityJudge, EntityJudgeDecision, EntityJudgeInput } from '../../gold/promotion/promotion.types';
import {
  buildJudgeEntitiesMessages,
  JUDGE_ENTITIES_PROMPT_VERSION,
  JUDGE_ENTITIES_SCHEMA_NAME,
  JudgeEntitiesResponseSchema,
  parseJudgeEntitiesResponse,
} from '../../gold/promotion/prompts/judge-entities.prompt';
import { ModelException, ModelExceptionCode } from '../../silver/model.exception';
import { completeStructured, OpenAIRuntime } from './openai-client';

/** Questions per chat completion (docs/gold.md "The OpenAI-compatible judge"). */
export const ENTITY_JUDGE_BATCH_SIZE = 20;

/**
 * The entity judge for hard cases through an OpenAI-compatible chat model: the questions are sent
 * in batches of `batchSize` per completion (the batches run concurrently within the runtime's
 * concurrency limit), answered with a strict json_schema and validated with zod.
 *
 * A batch whose output is still invalid after the repair round(s) (MALFORMED_OUTPUT) is not a
 * crash and never a merge: every question of it is kept apart, with the problem as the reason.
 * HTTP failures (UNAVAILABLE, TIMEOUT, after the runtime's retries) are thrown: the promote job
 * fails and is retried as a job, with nothing of the run written.
 */
export class OpenAIEntityJudge implements EntityJudge {
  readonly model: string;
  readonly promptVersion = JUDGE_ENTITIES_PROMPT_VERSION;

  constructor(
    private readonly runtime: OpenAIRuntime,
    private readonly modelName: string,
    private readonly batchSize = ENTITY_JUDGE_BATCH_SIZE,
  ) {
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be an integer >= 1, got ${batchSize}`);
    this.model = `openai:${modelName}`;
  }

  async decide(inputs: EntityJudgeInput[]): Promise<EntityJudgeDecision[]> {
    const batches: EntityJudgeInput[][] = [];
    for (let i = 0; i < inputs.length; i += this.batchSize) batches.push(inputs.slice(i, i + this.batchSize));
    const answers = await Promise.all(batches.map((batch) => this.decideBatch(batch)));
    return answers.flat();
  }

  private async decideBatch(batch: EntityJudgeInput[]): Promise<EntityJudgeDecision[]> {
    try {
      return await completeStructured(this.runtime, {
        model: this.modelName,
        messages: buildJudgeEntitiesMessages(batch),
        schemaName: JUDGE_ENTITIES_SCHEMA_NAME,
        schema: JudgeEntitiesResponseSchema,
        parse: (json) => parseJudgeEntitiesResponse(json, batch),
        what: `judging ${batch.length} entity pair(s) with ${this.modelName}`,
      });
    } catch (err) {
      if (!(err instanceof ModelException) || err.code !== ModelExceptionCode.MALFORMED_OUTPUT) throw err;
      const reason = `kept apart: the judge's answer was invalid (${err.message})`.slice(0, 1000);
      return batch.map(() => ({ same: false, type: null, reason }));
    }
  }
}
