/** What a person does to a span of text (API.md "Overlays"). */
export type OverlayKindName = 'EDIT' | 'ANNOTATION' | 'REDACTION';

/** What replaces a redacted span on every read path. */
export const REDACTION_PLACEHOLDER = '[redacted]';

/** One applicable overlay on one text: its span in UTF-16 code units and, for an EDIT, the replacement. */
export interface ComposeSpan {
  readonly kind: OverlayKindName;
  readonly start: number;
  readonly end: number;
  readonly body: string | null;
  /** Later wins among overlapping EDITs (creation time, then id: any total order). */
  readonly order: number;
}

interface Piece {
  start: number;
  end: number;
  text: string;
}

/**
 * The text as callers see it: `text` with the overlays applied. Rules (docs/overlays.md):
 * - ANNOTATION leaves the text unchanged.
 * - REDACTION: every code unit covered by a redaction is hidden; overlapping or touching
 *   redactions merge into one placeholder, so the reader cannot count them.
 * - EDIT: replaces its span with its body. Redaction wins: an EDIT overlapping a redacted range
 *   is not applied. Among overlapping EDITs the latest (highest `order`) is applied and the older
 *   ones it overlaps are not (they stay listed in `overlays`).
 * - Spans outside the text (or empty) are ignored: the caller's anchoring keeps them in range.
 * Pure and total: the same overlays give the same text in any input order.
 */
export function composeText(text: string, spans: readonly ComposeSpan[], placeholder: string = REDACTION_PLACEHOLDER): string {
  const valid = spans.filter((s) => s.start >= 0 && s.end <= text.length && s.start < s.end);
  if (valid.length === 0) return text;
  const redactions = mergeRanges(valid.filter((s) => s.kind === 'REDACTION'));
  const pieces: Piece[] = redactions.map((r) => ({ ...r, text: placeholder }));
  const edits = valid.filter((s) => s.kind === 'EDIT').sort((a, b) => b.order - a.order);
  const taken: Array<{ start: number; end: number }> = [...redactions];
  for (const e of edits) {
    if (taken.some((t) => e.start < t.end && t.start < e.end)) continue;
    taken.push(e);
    pieces.push({ start: e.start, end: e.end, text: e.body ?? '' });
  }
  pieces.sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const p of pieces) {
    out += text.slice(at, p.start) + p.text;
    at = p.end;
  }
  return out + text.slice(at);
}

/** Union of ranges; touching ranges merge too. */
function mergeRanges(ranges: ReadonlyArray<{ start: number; end: number }>): Array<{ start: number; end: number }> {
  const sorted = [...ranges].sort((a, b) => a.start - b.start);
  const out: Array<{ start: number; end: number }> = [];
  for (const r of sorted) {
    const last = out.at(-1);
    if (last && r.start <= last.end) last.end = Math.max(last.end, r.end);
    else out.push({ start: r.start, end: r.end });
  }
  return out;
}

/**
 * The redactions of a whole text as they fall inside its slice [from, to) (a quote of an event's
 * content), shifted to the slice's own offsets.
 */
export function spansWithin(spans: readonly ComposeSpan[], from: number, to: number): ComposeSpan[] {
  return spans.filter((s) => s.start < to && from < s.end).map((s) => ({ ...s, start: Math.max(s.start, from) - from, end: Math.min(s.end, to) - from }));
}
