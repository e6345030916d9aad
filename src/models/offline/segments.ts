import nlp from 'compromise';
import * as chrono from 'chrono-node';

/** A piece of an event's content with its UTF-16 offsets (`content.slice(start, end) === text`). */
export interface Segment {
  text: string;
  start: number;
  end: number;
}

/** A clause, possibly with an implied subject ("... and moved to London" gets "I "). */
export interface Clause extends Segment {
  sentence: Segment;
  /** Text the rules read: `prefix + text`; offsets inside the prefix map to the clause start. */
  prefix: string;
}

/** Curly apostrophes become straight ones: same length, so offsets are unchanged. */
export const normaliseQuotes = (s: string): string => s.replace(/[\u2018\u2019\u02bc]/g, "'");

/** A word as compromise tagged it, with offsets into the parsed text. */
export interface Token {
  text: string;
  tags: ReadonlySet<string>;
  start: number;
  end: number;
}

type Doc = ReturnType<typeof nlp>;
interface TermJson {
  text: string;
  tags: string[];
  offset: { start: number; length: number };
}
interface SentenceJson {
  text: string;
  offset?: { start: number; length: number };
  terms?: TermJson[];
}

/** One compromise parse of a text: the document (for people, places, ...), its sentences and its tagged words. */
export interface Parsed {
  doc: Doc;
  sentences: Segment[];
  tokens: Token[];
}

/** Parses once; sentences and tokens come from the same tagging (compromise is the costly part). */
export function parse(content: string): Parsed {
  const doc = nlp(content);
  const json = doc.json({ offset: true }) as SentenceJson[];
  const tokens = json.flatMap((s) =>
    (s.terms ?? []).map((t) => ({ text: t.text, tags: new Set(t.tags), start: t.offset.start, end: t.offset.start + t.offset.length })),
  );
  return { doc, sentences: sentencesOf(content, json), tokens };
}

/** Sentences by compromise (handles abbreviations); falls back to punctuation when offsets disagree. */
export function splitSentences(content: string): Segment[] {
  return sentencesOf(content, nlp(content).sentences().json({ offset: true }) as SentenceJson[]);
}

function sentencesOf(content: string, json: SentenceJson[]): Segment[] {
  const out: Segment[] = [];
  for (const s of json) {
    if (!s.offset) return regexSentences(content);
    const start = s.offset.start;
    const end = start + s.offset.length;
    if (content.slice(start, end).trim() !== s.text.trim()) return regexSentences(content);
    for (const line of splitLines(content, start, end)) out.push(line);
  }
  return out.length > 0 ? out : regexSentences(content);
}

function splitLines(content: string, start: number, end: number): Segment[] {
  const out: Segment[] = [];
  let s = start;
  for (let i = start; i <= end; i++) {
    if (i === end || content[i] === '\n') {
      const seg = trimSegment(content, s, i);
      if (seg) out.push(seg);
      s = i + 1;
    }
  }
  return out;
}

function regexSentences(content: string): Segment[] {
  const out: Segment[] = [];
  const re = /[^.!?\n]+(?:[.!?]+|$)/g;
  for (let m = re.exec(content); m; m = re.exec(content)) {
    const seg = trimSegment(content, m.index, m.index + m[0].length);
    if (seg) out.push(seg);
    if (m[0].length === 0) re.lastIndex++;
  }
  return out;
}

function trimSegment(content: string, start: number, end: number): Segment | null {
  while (start < end && /\s/.test(content[start] as string)) start++;
  while (end > start && /\s/.test(content[end - 1] as string)) end--;
  return end > start ? { text: content.slice(start, end), start, end } : null;
}

/** Past verbs after "and" that begin a clause of their own, its subject carried over (CARRIES_SUBJECT). */
const CARRIED_VERBS = String.raw`(?:then\s+)?(?:moved|switched|migrated|stopped|started|relocated|joined|signed up|took up|picked up|began|adopted|enrolled|subscribed|upgraded|replaced|booked)\b(?!-)`;

// Where a sentence splits into clauses: semicolons, colons, dashes, ", but", ", though", a comma or "and"
// followed by a first-person subject, and "and <past verb>" (the subject is carried over: "I dropped
// pottery and joined a climbing gym" is two things done, not two things dropped).
const CLAUSE_BREAK = new RegExp(
  String.raw`\s*[;:]\s+|\s+[-\u2013\u2014]+\s+|,\s*(?:but|though|although|whereas)\s+(?!not\b)|\s+(?:but|though|although|whereas)\s+(?=(?:I|we|my|our)\b)|,\s*(?:and\s+|so\s+)?(?=(?:I|I'm|I've|I'd|I'll|we|we're|we've|my|our|it's|it|psql)\b)|\s+and\s+(?=(?:I|we|my)\b)|` +
    String.raw`\s+and\s+(?=${CARRIED_VERBS})|` +
    String.raw`(?:,\s*|\s+and\s+|\s+but\s+)(?=(?:only|just|mostly|mainly)\s+[^,;]+?\s+(?:now|nowadays|these days|instead)\b)`,
  'g',
);

const CARRIES_SUBJECT = new RegExp(`^${CARRIED_VERBS}`);

/** Clauses of a sentence, in order. */
export function splitClauses(sentence: Segment): Clause[] {
  const text = normaliseQuotes(sentence.text);
  const out: Clause[] = [];
  let from = 0;
  const pushPart = (a: number, b: number) => {
    const seg = trimSegment(sentence.text, a, b);
    if (!seg) return;
    const clean = seg.text.replace(/[.!?]+$/, '');
    const prefix = CARRIES_SUBJECT.test(clean) ? 'I ' : '';
    out.push({ text: clean, start: sentence.start + seg.start, end: sentence.start + seg.start + clean.length, sentence, prefix });
  };
  CLAUSE_BREAK.lastIndex = 0;
  for (let m = CLAUSE_BREAK.exec(text); m; m = CLAUSE_BREAK.exec(text)) {
    if (m[0].length === 0) {
      CLAUSE_BREAK.lastIndex++;
      continue;
    }
    pushPart(from, m.index);
    from = m.index + m[0].length;
  }
  pushPart(from, text.length);
  return out;
}

export interface TimeHit {
  start: number; // offsets within the clause text
  end: number;
  iso: string;
}

const YEAR_RE = /\b(?:since|in|from|back in|as of)\s+((?:19|20)\d{2})\b/i;
const MONTHS = /^(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)/i;

/**
 * The first explicit time in a clause, relative to `ref` (UTC). Past-tense use: a weekday that
 * chrono resolves forward ("on Friday") is moved back a week; other future times are ignored.
 */
export function findTime(clause: string, ref: Date, mode: 'past' | 'any' = 'past'): TimeHit | null {
  const hits: TimeHit[] = [];
  const year = YEAR_RE.exec(clause);
  if (year) {
    const y = year[1] as string;
    const at = year.index + year[0].indexOf(y);
    hits.push({ start: year.index, end: at + y.length, iso: `${y}-01-01T00:00:00.000Z` });
  }
  for (const r of chrono.parse(clause, { instant: ref, timezone: 'UTC' })) {
    const text = r.text;
    if (/^(?:now|today|tonight|this)$/i.test(text.trim())) continue;
    // A lowercase bare month word is a verb or noun ("I may"), not a date.
    if (MONTHS.test(text) && text[0] === text[0]?.toLowerCase() && !/\d/.test(text)) continue;
    // A bare time of day ("before 10am") dates nothing.
    if (!['day', 'weekday', 'month', 'year'].some((c) => r.start.isCertain(c as 'day'))) continue;
    let date = r.start.date();
    if (mode === 'past' && date.getTime() > ref.getTime() + 60_000) {
      if (/day\b|\bweekend\b/i.test(text) && !/\b(?:next|tomorrow)\b/i.test(text)) date = new Date(date.getTime() - 7 * 86_400_000);
      else continue;
    }
    hits.push({ start: r.index, end: r.index + text.length, iso: date.toISOString() });
  }
  hits.sort((a, b) => a.start - b.start);
  return hits[0] ?? null;
}

/** Every time-like range in a clause (chrono, years, "anymore", "now", "in Q3"), for trimming objects. */
export function timeRanges(clause: string, ref: Date): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const r of chrono.parse(clause, { instant: ref, timezone: 'UTC' })) {
    // "a quiet weekend", "an amazing evening": a thing the clause names, not when it happened.
    if (/^(?:weekend|morning|afternoon|evening|night)$/i.test(r.text.trim()) && /\b(?:a|an)\s+(?:[\w-]+\s+){0,2}$/i.test(clause.slice(0, r.index))) continue;
    if (['day', 'weekday', 'month', 'year'].some((c) => r.start.isCertain(c as 'day'))) out.push([r.index, r.index + r.text.length]);
  }
  const re =
    /\b(?:(?:since|in|from|back in|as of)\s+(?:19|20)\d{2}|in\s+Q[1-4]|in the (?:spring|summer|autumn|fall|winter)|any ?more|right now|for now|these days|at the moment|nowadays|now|currently|soon|later|again|instead|lately|recently|in (?:January|February|March|April|May|June|July|August|September|October|November|December))\b/gi;
  for (let m = re.exec(clause); m; m = re.exec(clause)) out.push([m.index, m.index + m[0].length]);
  return out;
}
