/** One line of the quality report (docs/quality.md). */
export interface QualityCheckResult {
  /** Stable name, e.g. `completeness`. */
  name: string;
  /** What was measured (a count, a share, seconds). */
  value: number;
  /** The largest `value` that passes. */
  threshold: number;
  ok: boolean;
  /** What the value is made of, and the first offending rows (bounded). */
  detail: string;
}

export interface QualityReportResult {
  namespace: string;
  ok: boolean;
  generatedAt: Date;
  checks: QualityCheckResult[];
}

/** The thresholds of the checks (common/config.ts `quality`, QUALITY_* variables). */
export interface QualityThresholds {
  /** The promotion threshold: a fact below it counts as low confidence (QUALITY_MIN_CONFIDENCE, 0.7). */
  readonly minConfidence: number;
  /** The largest share of low-confidence facts a fact type may have (QUALITY_MAX_LOW_CONFIDENCE_SHARE, 0.5). */
  readonly maxLowConfidenceShare: number;
  /** An entity whose best fact is below this is a low-confidence entity (QUALITY_LOW_CONFIDENCE_FLOOR, 0.5). */
  readonly lowConfidenceFloor: number;
  /** The most low-confidence entities one entity type may have (QUALITY_MAX_LOW_CONFIDENCE_ENTITIES, 100). */
  readonly maxLowConfidenceEntities: number;
  /** Two live entities of one type whose names are more similar than this are fuzzy duplicates (QUALITY_DUPLICATE_SIMILARITY, 0.85). */
  readonly duplicateSimilarity: number;
  /** The largest p95 ingest → derivation lag and the oldest unprojected outbox row, in seconds (QUALITY_MAX_LAG_SECONDS, 300). */
  readonly maxLagSeconds: number;
  /** Derivations done within this many hours (and every pending one) make the lag figures (QUALITY_LAG_WINDOW_HOURS, 24). */
  readonly lagWindowHours: number;
  /** Open dead letters allowed (QUALITY_MAX_DEAD_LETTERS, 0). */
  readonly maxDeadLetters: number;
  /** Offending rows named in a check's detail (QUALITY_MAX_LISTED, 10). */
  readonly maxListed: number;
}

export const DEFAULT_QUALITY_THRESHOLDS: QualityThresholds = Object.freeze({
  minConfidence: 0.7,
  maxLowConfidenceShare: 0.5,
  lowConfidenceFloor: 0.5,
  maxLowConfidenceEntities: 100,
  duplicateSimilarity: 0.85,
  maxLagSeconds: 300,
  lagWindowHours: 24,
  maxDeadLetters: 0,
  maxListed: 10,
});

/** The names of the checks, in report order. */
export const QUALITY_CHECKS = [
  'completeness',
  'provenance',
  'consistency_endpoints',
  'consistency_graph',
  'uniqueness',
  'confidence_distribution',
  'low_confidence_proliferation',
  'timeliness_derivation',
  'timeliness_outbox',
  'dead_letters',
  'orphan_gold_nodes',
  'duplicate_edges',
  'temporal_consistency',
  'orphaned_overlays',
] as const;
export type QualityCheckName = (typeof QUALITY_CHECKS)[number];
