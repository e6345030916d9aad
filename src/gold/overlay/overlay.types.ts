import type { OverlayKindName } from '../../common/compose-text';
export type { OverlayKindName };

/**
 * ANCHORED: placed by its author on the text it names. REANCHORED: moved by a rebuild onto the
 * fact's successor. ORPHANED: a rebuild could not place it (kept, shown to reviewers, not applied).
 * RETRACTED: withdrawn (kept as history, not applied).
 */
export type OverlayStatus = 'ANCHORED' | 'REANCHORED' | 'ORPHANED' | 'RETRACTED';

/**
 * A W3C-style text quote selector plus a position selector. `start`/`end` are UTF-16 code unit
 * offsets into the anchored text (JavaScript string indexes: `text.slice(start, end) === exact`).
 * `prefix`/`suffix`: up to SELECTOR_CONTEXT code units before and after the span.
 */
export interface QuoteSelector {
  readonly exact: string;
  readonly prefix: string;
  readonly suffix: string;
  readonly start: number;
  readonly end: number;
}

/** One overlay at its latest version. */
export interface OverlayRecord {
  readonly id: string;
  readonly version: number;
  readonly namespace: string;
  /** Exactly one of factId / eventId is set. */
  readonly factId: string | null;
  readonly eventId: string | null;
  readonly kind: OverlayKindName;
  readonly selector: QuoteSelector;
  /** SHA-256 (hex) of the text the selector was placed on. */
  readonly textHash: string;
  /** EDIT: the replacement; ANNOTATION: the note; REDACTION: null. */
  readonly body: string | null;
  readonly reason: string | null;
  /** The principal who created the overlay (owner: revising or retracting it needs no approval). */
  readonly author: string;
  /** The author's principal id: ownership is decided on it, not on the name. */
  readonly authorId: string;
  /** The principal (or "rebuild") that wrote this version. */
  readonly changedBy: string;
  readonly status: OverlayStatus;
  readonly anchorConfidence: number | null;
  /** Re-anchored with a confidence between the review and accept thresholds, or orphaned. */
  readonly needsReview: boolean;
  readonly createdAt: Date;
  readonly versionAt: Date;
}
