/** The domain types of Gold promotion (docs/gold.md). */

/** A Silver entity as promotion sees it: its names and its evidence (events, conversations). */
export interface SilverCandidate {
  id: string;
  type: string;
  name: string;
  nameKey: string;
  aliases: string[];
  aliasKeys: string[];
  /** Highest confidence of the live facts and relationships that mention it (0 when none). */
  confidence: number;
  /** Distinct Bronze events of those facts and relationships. */
  eventIds: string[];
  /** Distinct conversations of those events. */
  conversationIds: string[];
  recordedAt: Date;
  /** A retired Silver entity that is still a member of a Gold entity (its replacement can join by name). */
  retired: boolean;
  /** The Gold entity it belongs to, or null. */
  goldId: string | null;
}

/** Two Silver entities of one namespace with similar names (pg_trgm `similarity` of their name keys). */
export interface CandidatePair {
  a: string;
  b: string;
  trigram: number;
}

/** The resolution steps, in the order they are tried. */
export type ResolutionStep = 'exact' | 'alias' | 'trigram' | 'cooccurrence' | 'first_name' | 'judge' | 'new';

export interface ResolutionScores {
  trigram?: number;
  cosine?: number;
  cooccurrence?: number;
}

/** Where one Silver entity went, and why. */
export interface Assignment {
  silverId: string;
  /** An existing Gold entity id, or a new cluster's key (`new:<silver id of its first member>`). */
  cluster: string;
  step: ResolutionStep;
  /** The Silver entity it was matched with (null for a new cluster). */
  partnerId: string | null;
  scores: ResolutionScores;
  reason: string;
  judgeModel: string | null;
  promptVersion: string | null;
  /** Hard cases the judge kept apart, for the log. */
  rejected: Array<{ partnerId: string; reason: string; scores: ResolutionScores }>;
}

/** One question to the entity judge: is `entity` the same thing as `partner`? */
export interface EntityJudgeInput {
  entity: { id: string; type: string; name: string; aliases: string[] };
  partner: { id: string; type: string; name: string; aliases: string[] };
  trigram: number;
  cosine: number | null;
  /** Shared conversations over the smaller side's conversations (0..1). */
  cooccurrence: number;
  /** The ontology's fallback type: an extractor's "don't know". */
  fallbackType: string;
}

export interface EntityJudgeDecision {
  same: boolean;
  /** When `same` across types: the type the merged entity takes (null: keep the majority rule). */
  type: string | null;
  reason: string;
}

/** The judge for hard cases: offline rules by default, an OpenAI-compatible model when configured. */
export interface EntityJudge {
  readonly model: string;
  readonly promptVersion: string | null;
  decide(inputs: EntityJudgeInput[]): Promise<EntityJudgeDecision[]>;
}
