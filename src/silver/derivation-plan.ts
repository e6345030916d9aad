import { JudgeAction, JudgeCandidate, Span } from './model-ports';

/** An entity the batch needs: an existing one to reuse (maybe with new aliases) or a new one. */
export interface PlannedEntity {
  id: string;
  isNew: boolean;
  type: string;
  name: string;
  nameKey: string;
  /** The full alias list after this batch (display forms). */
  aliases: string[];
  aliasKeys: string[];
  aliasesChanged: boolean;
}

export interface PlannedSource extends Span {
  quote: string;
}

/** A fact as the batch will store it (or, for SKIP, attach to its target). */
export interface PlannedFact {
  id: string;
  statement: string;
  factType: string;
  subjectEntityId: string | null;
  predicate: string | null;
  objectValue: string | null;
  objectEntityId: string | null;
  isNegation: boolean;
  confidence: number;
  importance: number;
  validFrom: Date;
  validTo: Date | null;
  /**
   * Set when the fact is stored already superseded: it was said before a stored fact that replaces
   * it (an older statement that arrived late; docs/silver.md "Order"). Its validTo is then set too.
   */
  supersededBy: string | null;
  embedding: number[] | null;
  sources: PlannedSource[];
  action: JudgeAction;
  targetId: string | null;
  reason: string;
  candidates: JudgeCandidate[];
  /** The speaker role of the first source event, for rescoring corroborated facts. */
  role: string | null;
  explicitTime: boolean;
}

/** Where the batch names an entity (silver.entity_mentions): promotion counts these events as its evidence. */
export interface PlannedMention extends Span {
  entityId: string;
}

export interface PlannedRelationship {
  id: string;
  type: string;
  sourceEntityId: string;
  targetEntityId: string;
  confidence: number;
  validFrom: Date;
  sources: PlannedSource[];
}

/** The models (and, where they use one, prompt versions) that made a plan: recorded on its run. */
export interface DerivationModels {
  extraction: string;
  judge: string;
  embedding: string;
  /** The extractor's adapter ("offline-rules", "openai"). */
  extractor: string;
  extractionPrompt: string | null;
  judgePrompt: string | null;
}

/** Everything one micro-batch will write, computed before the write transaction opens. */
export interface DerivationPlan {
  namespace: string;
  eventIds: string[];
  entities: PlannedEntity[];
  facts: PlannedFact[];
  relationships: PlannedRelationship[];
  /** Every span the extractor found each entity named at (deduplicated). */
  mentions: PlannedMention[];
  gateNotes: Array<{ rule: number; detail: string }>;
  models: DerivationModels;
  modelCalls: number;
}
