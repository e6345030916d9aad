/**
 * Confidence and importance of a fact, both in [0, 1]. Documented in docs/silver.md.
 *
 * confidence = extractor confidence × source weight (user 1.0, actor-less note/document 0.95,
 *              assistant 0.8, tool/system 0.7), + 0.05 per corroborating source after the
 *              first (SKIP decisions attach sources), capped at 0.99.
 * importance = base by fact type (preference 0.7, plan 0.65, attribute 0.6, relationship 0.55,
 *              event 0.45, other 0.35) + 0.1 when the text gave an explicit time + 0.05 for a
 *              negation (a "no longer" is worth remembering) + 0.05 per corroboration (max +0.2),
 *              capped at 1.
 */
const TYPE_BASE: Record<string, number> = { preference: 0.7, plan: 0.65, attribute: 0.6, relationship: 0.55, event: 0.45, other: 0.35 };
const ROLE_WEIGHT: Record<string, number> = { user: 1, assistant: 0.8, tool: 0.7, system: 0.7 };

const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));
const round3 = (x: number): number => Math.round(x * 1000) / 1000;

export interface ScoreInput {
  factType: string;
  extractorConfidence: number;
  role: string | null;
  isNegation: boolean;
  explicitTime: boolean;
  corroborations: number;
}

export function scoreFact(i: ScoreInput): { confidence: number; importance: number } {
  const weight = i.role ? (ROLE_WEIGHT[i.role] ?? 0.7) : 0.95;
  const confidence = clamp(clamp(i.extractorConfidence, 0, 1) * weight + 0.05 * Math.max(0, i.corroborations), 0, 0.99);
  const importance =
    (TYPE_BASE[i.factType] ?? TYPE_BASE.other ?? 0.35) + (i.explicitTime ? 0.1 : 0) + (i.isNegation ? 0.05 : 0) + corroborationBonus(i.corroborations);
  return { confidence: round3(confidence), importance: round3(clamp(importance, 0, 1)) };
}

/** The most importance corroboration can add, however many sources a fact gains. */
export const MAX_CORROBORATION_BONUS = 0.2;
const corroborationBonus = (n: number): number => Math.min(MAX_CORROBORATION_BONUS, 0.05 * Math.max(0, n));

/**
 * A fact already scored with `prior` corroborations gains `added` more (SKIP decisions attach
 * sources): the same +0.05 confidence per source (capped at 0.99) and +0.05 importance per source
 * up to the +0.2 that `scoreFact` allows in all (capped at 1). What the write path applies.
 */
export function corroborate(scores: { confidence: number; importance: number }, prior: number, added: number): { confidence: number; importance: number } {
  const n = Math.max(0, added);
  return {
    confidence: round3(clamp(scores.confidence + 0.05 * n, 0, 0.99)),
    importance: round3(clamp(scores.importance + corroborationBonus(prior + n) - corroborationBonus(prior), 0, 1)),
  };
}
