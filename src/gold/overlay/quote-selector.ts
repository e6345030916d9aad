import { createHash } from 'node:crypto';
import { OverlayException, OverlayExceptionCode } from './overlay.exception';
import { QuoteSelector } from './overlay.types';

/** Code units of context kept before and after a span (W3C TextQuoteSelector prefix/suffix). */
export const SELECTOR_CONTEXT = 32;

/** SHA-256 (hex) of the text a selector is placed on: tells a later reader whether the text changed. */
export function textHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** What a caller names: the quoted text, optionally disambiguated by context or position. */
export interface SelectorInput {
  readonly exact: string;
  readonly prefix?: string | null;
  readonly suffix?: string | null;
  readonly start?: number | null;
}

/** Every start offset of `exact` in `text` (overlapping occurrences included). */
export function occurrences(text: string, exact: string): number[] {
  const found: number[] = [];
  if (exact.length === 0) return found;
  for (let i = text.indexOf(exact); i !== -1; i = text.indexOf(exact, i + 1)) found.push(i);
  return found;
}

/** The full selector of the span [start, start + exact.length) of `text`. */
export function selectorAt(text: string, start: number, exactLength: number): QuoteSelector {
  const end = start + exactLength;
  return {
    exact: text.slice(start, end),
    prefix: text.slice(Math.max(0, start - SELECTOR_CONTEXT), start),
    suffix: text.slice(end, end + SELECTOR_CONTEXT),
    start,
    end,
  };
}

const bad = (message: string) => new OverlayException(OverlayExceptionCode.INVALID_SELECTOR, message);

/**
 * Places a caller's selector on the current text, or says why it cannot (BAD_USER_INPUT):
 * `exact` must occur; with `start` it must occur exactly there; otherwise the occurrences that
 * agree with the given prefix (text right before) and suffix (text right after) must be exactly one.
 */
export function placeSelector(text: string, input: SelectorInput): QuoteSelector {
  const { exact } = input;
  if (exact.length === 0) throw bad('exact must not be empty: quote the span of text the overlay applies to');
  if (input.start !== null && input.start !== undefined) {
    const s = input.start;
    if (!Number.isInteger(s) || s < 0) throw bad('start must be a non-negative integer (a UTF-16 code unit offset into the text)');
    if (text.slice(s, s + exact.length) !== exact) {
      const at = occurrences(text, exact);
      const hint = at.length ? `it occurs at ${at.slice(0, 5).join(', ')}` : 'it does not occur in the text';
      throw bad(`exact ${JSON.stringify(exact)} is not at start ${s} (UTF-16 code units): ${hint}`);
    }
    return selectorAt(text, s, exact.length);
  }
  const at = occurrences(text, exact);
  if (at.length === 0) throw bad(`exact ${JSON.stringify(exact)} does not occur in the current text; quote it exactly (case and spacing matter)`);
  const prefix = input.prefix ?? '';
  const suffix = input.suffix ?? '';
  const fitting = at.filter((s) => text.slice(0, s).endsWith(prefix) && text.slice(s + exact.length).startsWith(suffix));
  if (fitting.length === 0) throw bad(`exact ${JSON.stringify(exact)} occurs ${at.length} time(s), but none with the given prefix/suffix around it`);
  if (fitting.length > 1) {
    throw bad(
      `exact ${JSON.stringify(exact)} occurs ${fitting.length} times (at ${fitting.slice(0, 5).join(', ')}); give a prefix, suffix or start to say which`,
    );
  }
  return selectorAt(text, fitting[0] as number, exact.length);
}
