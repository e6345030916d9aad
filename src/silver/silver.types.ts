/** Silver rows as the read side returns them. */
export interface Fact {
  id: string;
  namespace: string;
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
  recordedAt: Date;
  retiredAt: Date | null;
  supersededById: string | null;
  extractionModel: string;
  derivationRunId: string;
  /** Why it was retired: 'pruned' (lifecycle, restorable), 'duplicate', 'rebuild', 'update', 'erasure'; null when current or not recorded. */
  retiredReason?: string | null;
  /** Importance after decay as the decay job last computed it (docs/lifecycle.md); null before its first run. */
  effectiveImportance?: number | null;
  /** The Silver text, set by the FactReader when `statement` is the composed text (overlays applied). */
  machineStatement?: string;
}

export interface FactSourceRow {
  factId: string;
  eventId: string;
  spanStart: number | null;
  spanEnd: number | null;
  quote: string | null;
}

export interface Entity {
  id: string;
  namespace: string;
  type: string;
  name: string;
  aliases: string[];
  recordedAt: Date;
  retiredAt: Date | null;
}

export interface Relationship {
  id: string;
  namespace: string;
  type: string;
  sourceEntityId: string;
  targetEntityId: string;
  confidence: number;
  validFrom: Date;
  validTo: Date | null;
  recordedAt: Date;
  retiredAt: Date | null;
}

export interface RelationshipSourceRow {
  relationshipId: string;
  eventId: string;
  spanStart: number | null;
  spanEnd: number | null;
  quote: string | null;
}

export interface JudgeDecisionRow {
  id: string;
  factId: string | null;
  statement: string;
  action: string;
  targetFactId: string | null;
  reason: string;
  candidates: Array<{ id: string; statement: string; similarity: number }>;
  judgeModel: string;
  decidedAt: Date;
}

export interface FactFilter {
  factTypes?: string[] | null;
  subjectEntityId?: string | null;
  predicate?: string | null;
  contains?: string | null;
  minImportance?: number | null;
}
