import type { AppConfig } from '../../common/config';
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

/** The thresholds of the checks: common/config.ts `quality` (QUALITY_* variables). */
export type QualityThresholds = AppConfig['quality'];

export const DEFAULT_QUALITY_THRESHOLDS: QualityThresholds = Object.freeze({
  minConfidence: 0.7,
  maxLowConfidenceShare: 0.5,
  confidenceMinSample: 20,
  lowConfidenceFloor: 0.5,
  maxLowConfidenceEntities: 100,
  duplicateSimilarity: 0.85,
  maxLagSeconds: 300,
  lagWindowHours: 24,
  maxDeadLetters: 0,
  maxListed: 10,
  consistencyMaxAgeSeconds: 600,
  consistencyRefreshSeconds: 60,
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
  'chain_intact',
] as const;
export type QualityCheckName = (typeof QUALITY_CHECKS)[number];
