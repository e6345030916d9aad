import { occurrences } from './quote-selector';
import { QuoteSelector } from './overlay.types';

// approx-string-match (Hypothesis' quote matcher: Myers' bit-parallel edit distance) is ESM-only.
// The build is CommonJS: Node >= 20.19 loads an ES module through require(); jest transforms it
// (jest.config.js transformIgnorePatterns).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const approxSearch = (require('approx-string-match') as { default: ApproxSearch }).default;

type ApproxSearch = (text: string, pattern: string, maxErrors: number) => Array<{ start: number; end: number; errors: number }>;

export type AnchorMethod = 'position' | 'exact' | 'approximate';

/** Where a selector lands on a (new) text, and how sure the match is (0..1). */
export interface AnchorMatch {
  readonly start: number;
  readonly end: number;
  readonly confidence: number;
  readonly method: AnchorMethod;
}

/** Weights of the approximate score (Hypothesis' match-quote: quote, prefix, suffix, position). */
const WEIGHTS = { quote: 50, prefix: 20, suffix: 20, position: 2 } as const;
const WEIGHT_SUM = WEIGHTS.quote + WEIGHTS.prefix + WEIGHTS.suffix + WEIGHTS.position;

function commonSuffixLength(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[a.length - 1 - n] === b[b.length - 1 - n]) n++;
  return n;
}

function commonPrefixLength(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

/** 1 - edit distance / length of `pattern` against the best place in `window` (1 when both are empty). */
function similarity(window: string, pattern: string): number {
  if (pattern.length === 0) return window.length === 0 ? 1 : 0;
  const best = approxSearch(window, pattern, pattern.length)[0];
  return best ? 1 - Math.min(best.errors, pattern.length) / pattern.length : 0;
}

/**
 * Re-anchors a selector on a text that may have changed (docs/overlays.md "Re-anchoring"):
 * 1. `exact` still at the stored position: confidence 1.
 * 2. else exact occurrences, ranked by how much of the stored prefix/suffix they agree with
 *    (then by nearness to the stored start): 0.9 + 0.1 × agreement, less 0.1 when two tie.
 * 3. else approximate matches of `exact` (at most half its length in edits), scored like
 *    Hypothesis: 50 × quote + 20 × prefix + 20 × suffix + 2 × position similarity, over 92.
 * Null when nothing comes within half the quote's length in edits.
 */
export function reanchor(selector: QuoteSelector, text: string): AnchorMatch | null {
  const { exact, prefix, suffix } = selector;
  const len = exact.length;
  if (len === 0) return null;
  if (text.slice(selector.start, selector.start + len) === exact)
    return { start: selector.start, end: selector.start + len, confidence: 1, method: 'position' };

  const exactAt = occurrences(text, exact);
  if (exactAt.length > 0) {
    const context = prefix.length + suffix.length;
    const ranked = exactAt
      .map((s) => ({ s, agree: commonSuffixLength(text.slice(0, s), prefix) + commonPrefixLength(text.slice(s + len), suffix) }))
      .sort((a, b) => b.agree - a.agree || Math.abs(a.s - selector.start) - Math.abs(b.s - selector.start));
    const [best, second] = ranked as [{ s: number; agree: number }, { s: number; agree: number } | undefined];
    const ratio = context === 0 ? 1 : best.agree / context;
    const tie = second !== undefined && second.agree === best.agree;
    return { start: best.s, end: best.s + len, confidence: round(0.9 + 0.1 * ratio - (tie ? 0.1 : 0)), method: 'exact' };
  }

  const maxErrors = Math.floor(len / 2);
  const candidates = approxSearch(text, exact, maxErrors);
  let bestMatch: AnchorMatch | null = null;
  for (const m of candidates) {
    const quote = 1 - m.errors / len;
    // An empty stored prefix (suffix) means the span began (ended) the text: it agrees only there.
    const pre = prefix.length === 0 ? (m.start === 0 ? 1 : 0) : similarity(text.slice(Math.max(0, m.start - prefix.length - 4), m.start), prefix);
    const suf = suffix.length === 0 ? (m.end === text.length ? 1 : 0) : similarity(text.slice(m.end, m.end + suffix.length + 4), suffix);
    const pos = text.length === 0 ? 1 : 1 - Math.min(1, Math.abs(m.start - selector.start) / text.length);
    const confidence = round((WEIGHTS.quote * quote + WEIGHTS.prefix * pre + WEIGHTS.suffix * suf + WEIGHTS.position * pos) / WEIGHT_SUM);
    if (!bestMatch || confidence > bestMatch.confidence) bestMatch = { start: m.start, end: m.end, confidence, method: 'approximate' };
  }
  return bestMatch;
}

const round = (x: number) => Math.round(Math.max(0, Math.min(1, x)) * 1000) / 1000;

/** Thresholds of re-anchoring (config: OVERLAY_REANCHOR_ACCEPT, OVERLAY_REANCHOR_REVIEW). */
export interface ReanchorThresholds {
  readonly accept: number;
  readonly review: number;
}

export type ReanchorVerdict = { status: 'REANCHORED'; needsReview: boolean } | { status: 'ORPHANED'; needsReview: true };

/** accept ≤ confidence: REANCHORED; review ≤ confidence < accept: REANCHORED for review; below (or no match): ORPHANED. */
export function verdict(confidence: number | null, t: ReanchorThresholds): ReanchorVerdict {
  if (confidence !== null && confidence >= t.accept) return { status: 'REANCHORED', needsReview: false };
  if (confidence !== null && confidence >= t.review) return { status: 'REANCHORED', needsReview: true };
  return { status: 'ORPHANED', needsReview: true };
}
