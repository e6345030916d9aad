import { z } from 'zod';
import type { ParseOutcome, PromptMessage } from '../../../silver/prompts/extract-facts.prompt';
import type { EntityJudgeDecision, EntityJudgeInput } from '../promotion.types';

/**
 * The entity judge prompt: for each pair of Silver entities that the automatic resolution steps
 * could not decide (similar names, or the same name under another type), is it one real-world
 * thing? Bump the version whenever the wording or the schema changes: it is recorded with every
 * decision in `gold.promotion_log.prompt_version`.
 */
export const JUDGE_ENTITIES_PROMPT_VERSION = 'judge-entities@1';

/** Name sent as `response_format.json_schema.name`. */
export const JUDGE_ENTITIES_SCHEMA_NAME = 'judge_entities';

/** The structured output the model must produce: one decision per question index. */
export const JudgeEntitiesResponseSchema = z.object({
  decisions: z.array(
    z.object({
      index: z.int().min(0),
      same: z.boolean(),
      /** When `same` and the two types differ: the type the merged entity takes (one of the two). */
      type: z.string().nullable(),
      reason: z.string().min(1),
    }),
  ),
});
export type JudgeEntitiesResponse = z.infer<typeof JudgeEntitiesResponseSchema>;

const SYSTEM_PROMPT = `You resolve entities in a long-term memory. Each question shows two entities extracted from conversations: their type, name and aliases, how similar their names are (trigram 0..1, embedding cosine 0..1 or null) and how often they were mentioned in the same conversations (cooccurrence 0..1). Decide for each question whether both denote the same real-world thing.

Rules:
1. Return exactly one decision per question, with the question's "index".
2. same = true only when you are confident both are one thing; similar spelling alone is not enough ("Jon Smith" and "John Smyth" are two people unless the evidence says otherwise). When unsure, answer same = false.
3. Types must agree. When the two types differ, answer same = true only when one type is clearly a mistake (the type "fallbackType" means the extractor did not know) and then set "type" to the correct one of the two types. Otherwise set "type" to null.
4. "reason" is one short sentence.`;

/** The messages for one judge call covering a batch of questions. */
export function buildJudgeEntitiesMessages(inputs: readonly EntityJudgeInput[]): PromptMessage[] {
  const r = (n: number) => Math.round(n * 1000) / 1000;
  const payload = {
    questions: inputs.map((q, index) => ({
      index,
      a: { type: q.entity.type, name: q.entity.name, aliases: q.entity.aliases },
      b: { type: q.partner.type, name: q.partner.name, aliases: q.partner.aliases },
      trigram: r(q.trigram),
      cosine: q.cosine === null ? null : r(q.cosine),
      cooccurrence: r(q.cooccurrence),
      fallbackType: q.fallbackType,
    })),
  };
  return [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: JSON.stringify(payload) },
  ];
}

/**
 * Validates a parsed judge response: exactly one decision per question index; a `type` must be
 * one of the question's two types, and a merge across types must name it (types agree unless
 * the judge says which one is right). Returns the decisions in question order.
 */
export function parseJudgeEntitiesResponse(raw: unknown, inputs: readonly EntityJudgeInput[]): ParseOutcome<EntityJudgeDecision[]> {
  const parsed = JudgeEntitiesResponseSchema.safeParse(raw);
  if (!parsed.success) {
    return { ok: false, problems: parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`) };
  }
  const problems: string[] = [];
  const byIndex = new Map<number, EntityJudgeDecision>();
  for (const d of parsed.data.decisions) {
    const q = inputs[d.index];
    if (q === undefined) {
      problems.push(`decision for index ${d.index}, but there are only ${inputs.length} questions`);
      continue;
    }
    if (byIndex.has(d.index)) {
      problems.push(`more than one decision for index ${d.index}`);
      continue;
    }
    const types = [q.entity.type, q.partner.type];
    if (d.type !== null && !types.includes(d.type)) {
      problems.push(`index ${d.index}: type must be null or one of ${JSON.stringify([...new Set(types)])}, got ${JSON.stringify(d.type)}`);
      continue;
    }
    const across = q.entity.type !== q.partner.type;
    if (d.same && across && d.type === null) {
      problems.push(`index ${d.index}: same = true across types (${q.entity.type} vs ${q.partner.type}) needs "type" set to the right one`);
      continue;
    }
    byIndex.set(d.index, { same: d.same, type: d.same && across ? d.type : null, reason: d.reason });
  }
  const missing = inputs.map((_, i) => i).filter((i) => !byIndex.has(i));
  if (missing.length > 0) problems.push(`no decision for index ${missing.join(', ')}`);
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, value: inputs.map((_, i) => byIndex.get(i) as EntityJudgeDecision) };
}
