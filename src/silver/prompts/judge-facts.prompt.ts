import { z } from 'zod';
import type { JudgeDecision, JudgeInput } from '../model-ports';
import type { ParseOutcome, PromptMessage } from './extract-facts.prompt';

/**
 * The judge prompt: for each new fact, decide against its candidate existing facts whether it is
 * new (ADD), refines one (UPDATE), replaces one because the world changed (SUPERSEDE) or repeats
 * one (SKIP). Bump the version whenever the wording or the schema changes.
 */
export const JUDGE_FACTS_PROMPT_VERSION = 'judge-facts@1';

/** Name sent as `response_format.json_schema.name`. */
export const JUDGE_FACTS_SCHEMA_NAME = 'judge_facts';

export const JUDGE_ACTIONS = ['ADD', 'UPDATE', 'SUPERSEDE', 'SKIP'] as const;

/** The structured output the model must produce: one decision per input index. */
export const JudgeFactsResponseSchema = z.object({
  decisions: z.array(
    z.object({
      index: z.int().min(0),
      action: z.enum(JUDGE_ACTIONS),
      targetId: z.string().nullable(),
      reason: z.string(),
    }),
  ),
});
export type JudgeFactsResponse = z.infer<typeof JudgeFactsResponseSchema>;

const SYSTEM_PROMPT = `You maintain a long-term memory of facts. For each input, compare the NEW fact with its CANDIDATE existing facts and choose one action:

- ADD: the new fact is about something none of the candidates states. targetId = null.
- UPDATE: the new fact restates or refines one candidate (same claim, better wording or more detail); that candidate is retired. targetId = that candidate's id.
- SUPERSEDE: the world changed: the new fact makes one candidate no longer true from the new fact's validFrom on ("switched from vim to neovim" supersedes "uses vim"). targetId = that candidate's id.
- SKIP: one candidate already says exactly this; no new fact is needed. targetId = that candidate's id.

Rules:
1. Return exactly one decision per input, with the input's "index".
2. targetId must be null for ADD and one of that input's candidate ids otherwise.
3. A "replacesValue" on the new fact hints at SUPERSEDE of the candidate holding that value.
4. Facts about different subjects never conflict. Similar wording is not enough for SKIP: the claim must be the same.
5. "reason" is one short sentence.`;

/** The messages for one judge call covering every input of the batch. */
export function buildJudgeFactsMessages(inputs: readonly JudgeInput[]): PromptMessage[] {
  const payload = {
    inputs: inputs.map((input, index) => ({
      index,
      new: { ...input.fact, validFrom: input.fact.validFrom.toISOString() },
      candidates: input.candidates.map((c) => ({
        id: c.id,
        statement: c.statement,
        factType: c.factType,
        subjectName: c.subjectName,
        predicate: c.predicate,
        objectValue: c.objectValue,
        isNegation: c.isNegation,
        validFrom: c.validFrom.toISOString(),
        similarity: Math.round(c.similarity * 1000) / 1000,
      })),
    })),
  };
  return [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: JSON.stringify(payload) },
  ];
}

/**
 * Validates a parsed judge response: exactly one decision per input index, targetId among that
 * input's candidate ids for UPDATE/SUPERSEDE/SKIP. An ADD's targetId is dropped (ADD targets
 * nothing). Returns the decisions in input order.
 */
export function parseJudgeFactsResponse(raw: unknown, inputs: readonly JudgeInput[]): ParseOutcome<JudgeDecision[]> {
  const parsed = JudgeFactsResponseSchema.safeParse(raw);
  if (!parsed.success) {
    return { ok: false, problems: parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`) };
  }
  const problems: string[] = [];
  const byIndex = new Map<number, JudgeDecision>();
  for (const d of parsed.data.decisions) {
    const input = inputs[d.index];
    if (input === undefined) {
      problems.push(`decision for index ${d.index}, but there are only ${inputs.length} inputs`);
      continue;
    }
    if (byIndex.has(d.index)) {
      problems.push(`more than one decision for index ${d.index}`);
      continue;
    }
    if (d.action !== 'ADD') {
      const ids = input.candidates.map((c) => c.id);
      if (d.targetId === null || !ids.includes(d.targetId)) {
        problems.push(`index ${d.index}: ${d.action} needs a targetId among [${ids.join(', ')}], got ${JSON.stringify(d.targetId)}`);
        continue;
      }
    }
    byIndex.set(d.index, { action: d.action, targetId: d.action === 'ADD' ? null : d.targetId, reason: d.reason });
  }
  const missing = inputs.map((_, i) => i).filter((i) => !byIndex.has(i));
  if (missing.length > 0) problems.push(`no decision for index ${missing.join(', ')}`);
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, value: inputs.map((_, i) => byIndex.get(i)!) };
}
