import * as chrono from 'chrono-node';

/**
 * Relative time expressions ("yesterday", "last week", "two weeks ago", "next month", "last
 * Saturday") written out against the event's time, so a fact read on its own still says when:
 * "I went to a support group yesterday" said on 8 May 2023 → "... on 7 May 2023".
 *
 * - day-level (yesterday, tomorrow, tonight, N days ago, a weekday): "on 7 May 2023";
 * - weeks and weekends: "in the week before 8 May 2023", "on the weekend after 8 May 2023",
 *   "two weeks before 8 May 2023";
 * - months: "in April 2023"; years: "in 2022".
 * Absolute dates ("on 3 May 2025", "in 2019") are left as written (they already say when).
 */
const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

export const formatDay = (d: Date): string => `${d.getUTCDate()} ${MONTH_NAMES[d.getUTCMonth()] as string} ${d.getUTCFullYear()}`;
const formatMonth = (d: Date): string => `${MONTH_NAMES[d.getUTCMonth()] as string} ${d.getUTCFullYear()}`;

const RELATIVE =
  /\b(?:yesterday|today|tonight|tomorrow|last|next|this|coming|past|ago|earlier|later|in\s+(?:a|an|one|two|three|four|five|six|\d+|a few|a couple of)\s+\w+|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/i;

export interface ResolvedTime {
  /** Offsets of the expression within the text given. */
  start: number;
  end: number;
  text: string;
  date: Date;
  /** The expression written against the reference date; null for an absolute date. */
  phrase: string | null;
}

/**
 * Writes one chrono result out. `date` is chrono's instant, adjusted by the caller for tense;
 * returns null when the expression is absolute (kept as written).
 */
export function relativePhrase(text: string, date: Date, ref: Date): string | null {
  const t = text.toLowerCase().trim();
  if (!RELATIVE.test(t)) return null;
  if (/\b(?:today|tonight|this (?:morning|afternoon|evening))\b/.test(t)) return `on ${formatDay(ref)}`;
  const unit = /\b(week|weekend|month|year)s?\b/.exec(t)?.[1];
  if (unit === 'week' || unit === 'weekend') {
    const count = /^(?:in\s+)?(a|an|one|two|three|four|five|six|a few|a couple of|\d+)\s+weeks?\b/.exec(t)?.[1];
    if (count)
      return `${count === 'a' || count === 'an' ? 'a' : count} ${unit === 'week' && count !== 'a' && count !== 'an' && count !== 'one' ? 'weeks' : unit} ${/\bago\b/.test(t) ? 'before' : 'after'} ${formatDay(ref)}`;
    const lead = unit === 'week' ? 'in' : 'on';
    if (/\b(?:last|past|previous)\b/.test(t)) return `${lead} the ${unit} before ${formatDay(ref)}`;
    if (/\b(?:next|coming)\b/.test(t)) return `${lead} the ${unit} after ${formatDay(ref)}`;
    return `${lead} the ${unit} of ${formatDay(ref)}`;
  }
  if (unit === 'month') return `in ${formatMonth(date)}`;
  if (unit === 'year') return `in ${date.getUTCFullYear()}`;
  // Keep the words a question may use ("Friday", "8 pm") beside the resolved date.
  const weekday = /\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/.exec(t)?.[1];
  const clock = /\bat\s+(\d{1,2}(?::\d{2})?\s*(?:am|pm)?|noon|midnight)\b/.exec(t)?.[1];
  const day = weekday ? `${weekday.charAt(0).toUpperCase()}${weekday.slice(1)}, ${formatDay(date)}` : formatDay(date);
  return `on ${day}${clock ? ` at ${clock}` : ''}`;
}

/**
 * Dated expressions in a text, with their written-out phrases. In `past` mode a weekday chrono
 * puts after the reference ("on Friday" in "I went there on Friday") moves back a week, and other
 * future times are dropped; `any` keeps them (plans). A weekday that recurs ("every Monday",
 * "thursday nights") is no date and stays as written.
 */
export function resolveTimes(text: string, ref: Date, mode: 'past' | 'any'): ResolvedTime[] {
  const out: ResolvedTime[] = [];
  for (const r of chrono.parse(text, { instant: ref, timezone: 'UTC' })) {
    const t = r.text;
    if (!['day', 'weekday', 'month', 'year'].some((c) => r.start.isCertain(c as 'day')) && !/\b(?:today|tonight|this (?:morning|afternoon|evening))\b/i.test(t))
      continue;
    // A lowercase bare month word is a verb or noun ("I may"), not a date.
    if (/^(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)/i.test(t) && t[0] === t[0]?.toLowerCase() && !/\d/.test(t)) continue;
    // "every Monday", "each Friday at 9", "thursday nights": a weekday that recurs names no one day.
    if (
      /^(?:on\s+)?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/i.test(t) &&
      (RECURS_BEFORE.test(text.slice(0, r.index)) || RECURS_AFTER.test(text.slice(r.index + t.length)))
    )
      continue;
    let date = r.start.date();
    if (mode === 'past' && date.getTime() > ref.getTime() + 60_000) {
      if (/day\b|weekend/i.test(t) && !/\b(?:next|tomorrow|coming)\b/i.test(t)) date = new Date(date.getTime() - 7 * 86_400_000);
      else continue;
    }
    out.push({ start: r.index, end: r.index + t.length, text: t, date, phrase: relativePhrase(t, date, ref) });
  }
  return out;
}

/**
 * The text with each relative expression replaced by its written-out phrase. After a preposition
 * of its own ("by Friday", "until next month") the phrase's "on" or "in" is left out: "by Friday,
 * 2 January 2026", not "by on Friday, …".
 */
export function writeOutTimes(text: string, times: readonly ResolvedTime[]): string {
  let out = text;
  for (const t of [...times].sort((a, b) => b.start - a.start)) {
    if (!t.phrase) continue;
    const before = out.slice(0, t.start);
    const phrase = PREPOSITION_BEFORE.test(before) ? t.phrase.replace(/^(?:on|in)\s+/, '') : t.phrase;
    out = `${before}${phrase}${out.slice(t.end)}`;
  }
  return out;
}

const RECURS_BEFORE = /\b(?:every|each)(?:\s+(?:other|second|single))?\s+$/i;
const RECURS_AFTER = /^\s*(?:nights|evenings|mornings|afternoons|lunchtimes|nights?\s+and|each week|every week)\b/i;

const PREPOSITION_BEFORE = /\b(?:by|before|after|until|till|since|from|on|in|at|during|for|through)\s+$/i;
