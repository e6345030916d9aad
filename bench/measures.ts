import { eng as ENGLISH_STOP_WORDS } from 'stopword';
import { normaliseDiaId } from './locomo';

/**
 * Pure measures of the issue-23 benchmarks (bench/recall's raw-turn fusion and answer-word
 * recall, bench/silver-reference's turn coverage and reference recall), kept apart from the
 * benchmarks' I/O so test/service/bench-measures.test.ts can pin them on repository fixtures.
 */

const STOP = new Set(ENGLISH_STOP_WORDS);

/** Lowercase runs of letters or digits ("Caroline's" → caroline, s; "2:30" → 2, 30). */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * A light stem: plural and third-person -s off, so "stories"/"story", "paintings"/"painting",
 * "runs"/"run" meet. Only: -ies → -y (more than 4 letters), -sses → -ss, a final -s dropped unless
 * it follows s, u or i ("class", "focus", "this" stay). Digits are left alone.
 */
export function lightStem(word: string): string {
  if (/^\p{N}+$/u.test(word)) return word;
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !/[siu]s$/.test(word)) return word.slice(0, -1);
  return word;
}

/** The stems of a text's words, as a set: what a hit's text or a derived statement offers. */
export function stemSet(text: string): Set<string> {
  return new Set(words(text).map(lightStem));
}

/**
 * An answer's words (answer-word recall): the lowercase words of LoCoMo's `answer` (a string or
 * a number), English stop words (the `stopword` package's list) out, single letters out, numbers
 * of any length kept; stemmed, distinct. "7 May 2023" → 7, may, 2023.
 */
export function answerWords(answer: string | number | null | undefined): string[] {
  if (answer === null || answer === undefined) return [];
  const out = words(String(answer)).filter((w) => !STOP.has(w) && (w.length > 1 || /^\p{N}$/u.test(w)));
  return [...new Set(out.map(lightStem))];
}

/**
 * A reference fact's content words (silver-reference): lowercase words of 4 or more characters
 * (letters or digits, so a year counts), stop words out; stemmed, distinct.
 */
export function contentWords(text: string): string[] {
  return [
    ...new Set(
      words(text)
        .filter((w) => w.length >= 4 && !STOP.has(w))
        .map(lightStem),
    ),
  ];
}

/** Share of `wanted` (stems) found in `text`'s stems; null when nothing is wanted. */
export function wordRecall(wanted: readonly string[], text: string): number | null {
  if (wanted.length === 0) return null;
  const have = stemSet(text);
  return wanted.filter((w) => have.has(w)).length / wanted.length;
}

/** The match rule of silver-reference: a statement holding at least `share` of the reference fact's content words. */
export const REFERENCE_MATCH_SHARE = 0.5;

export function matchesReference(reference: string, statement: string, share = REFERENCE_MATCH_SHARE): boolean {
  const r = wordRecall(contentWords(reference), statement);
  return r !== null && r >= share;
}

/**
 * Reciprocal-rank fusion of ranked id lists: score(id) = Σ weight / (k + rank), rank from 1,
 * equal weights by default. Ties go to the id that appears first (best rank in the earlier list).
 */
export function rrfFuse(lists: ReadonlyArray<readonly string[]>, k = 60, weights: readonly number[] = lists.map(() => 1)): string[] {
  const score = new Map<string, number>();
  const first = new Map<string, number>();
  lists.forEach((list, li) => {
    [...new Set(list)].forEach((id, i) => {
      score.set(id, (score.get(id) ?? 0) + (weights[li] ?? 1) / (k + i + 1));
      if (!first.has(id)) first.set(id, first.size);
    });
  });
  return [...score.keys()].sort((a, b) => (score.get(b) as number) - (score.get(a) as number) || (first.get(a) as number) - (first.get(b) as number));
}

/** Ids of `vectors` by dot product (cosine for unit vectors) to `query`, best first; ties by position. */
export function rankByCosine(query: readonly number[], vectors: ReadonlyArray<readonly number[]>, ids: readonly string[]): string[] {
  return vectors
    .map((v, i) => {
      let s = 0;
      for (let d = 0; d < query.length; d++) s += (query[d] as number) * (v[d] as number);
      return { i, s };
    })
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .map((x) => ids[x.i] as string);
}

export interface ReferenceFact {
  text: string;
  speaker: string;
  /** Normalised dialogue ids the reference cites that exist in the conversation. */
  turns: string[];
}

/**
 * LoCoMo's `observation` (`session_N_observation` → speaker → `[text, dia_id]` items, dia_id a
 * string, a list, or ids joined by ";" or ","): the reference facts with their normalised turns
 * (`D30:05` → `D30:5`); ids that are not turns of the conversation are dropped, and a reference
 * left with none is dropped (counted in `dropped`).
 */
export function referenceFacts(observation: unknown, known: ReadonlySet<string>): { facts: ReferenceFact[]; dropped: number } {
  const facts: ReferenceFact[] = [];
  let dropped = 0;
  if (!observation || typeof observation !== 'object') return { facts, dropped };
  const sessions = Object.keys(observation)
    .map((key) => ({ key, n: Number(/^session_(\d+)_observation$/.exec(key)?.[1] ?? Number.NaN) }))
    .filter((s) => Number.isFinite(s.n))
    .sort((a, b) => a.n - b.n);
  for (const { key } of sessions) {
    const bySpeaker = (observation as Record<string, unknown>)[key];
    if (!bySpeaker || typeof bySpeaker !== 'object') continue;
    for (const [speaker, items] of Object.entries(bySpeaker as Record<string, unknown>)) {
      if (!Array.isArray(items)) continue;
      for (const item of items) {
        if (!Array.isArray(item) || typeof item[0] !== 'string') continue;
        const raw = item.slice(1).flat(2);
        const turns = [
          ...new Set(
            raw
              .flatMap((d) => String(d).split(/[;,]/))
              .map(normaliseDiaId)
              .filter((d): d is string => d !== null && known.has(d)),
          ),
        ];
        if (turns.length === 0) dropped++;
        else facts.push({ text: item[0], speaker, turns });
      }
    }
  }
  return { facts, dropped };
}

export interface ReferenceScore {
  /** Turns with at least one reference fact. */
  referenceTurns: number;
  /** Of those, turns with at least one derived fact. */
  coveredTurns: number;
  coverage: number;
  referenceFacts: number;
  /** Reference facts matched by a derived fact of one of their turns. */
  matched: number;
  recall: number;
}

/**
 * Turn coverage and reference recall of derived statements per turn (`derived`: turn id →
 * statements of facts with a source at that turn) against the reference facts.
 */
export function scoreReferences(refs: readonly ReferenceFact[], derived: ReadonlyMap<string, readonly string[]>): ReferenceScore & { misses: ReferenceFact[] } {
  const turns = new Set(refs.flatMap((r) => r.turns));
  const covered = [...turns].filter((t) => (derived.get(t)?.length ?? 0) > 0).length;
  const misses: ReferenceFact[] = [];
  let matched = 0;
  for (const r of refs) {
    const ok = r.turns.some((t) => (derived.get(t) ?? []).some((s) => matchesReference(r.text, s)));
    if (ok) matched++;
    else misses.push(r);
  }
  const ratio = (a: number, b: number) => (b === 0 ? 0 : Math.round((a / b) * 1000) / 1000);
  return {
    referenceTurns: turns.size,
    coveredTurns: covered,
    coverage: ratio(covered, turns.size),
    referenceFacts: refs.length,
    matched,
    recall: ratio(matched, refs.length),
    misses,
  };
}

/**
 * What reference recall could reach if a statement were the turn's own words (the speaker's name
 * and the text): `wholeTurn`, the share of reference facts whose turns' text holds at least half
 * of their content words; `bestSentence`, the share held by one sentence of one of their turns
 * (split after . ! or ?). An extractor whose statements each restate one sentence cannot match
 * more than `bestSentence`; the rest summarise across sentences or use words the turn does not.
 */
export function referenceCeiling(refs: readonly ReferenceFact[], turnText: ReadonlyMap<string, string>): { wholeTurn: number; bestSentence: number } {
  let whole = 0;
  let sentence = 0;
  for (const r of refs) {
    const texts = r.turns.map((t) => turnText.get(t) ?? '');
    if (matchesReference(r.text, texts.join('\n'))) whole++;
    const speaker = /^([^:]{1,40}):\s/.exec(texts[0] ?? '')?.[1] ?? '';
    const sentences = texts.flatMap((t) => t.replace(/^[^:]{1,40}:\s/, '').split(/(?<=[.!?])\s+/));
    if (sentences.some((x) => matchesReference(r.text, `${speaker} ${x}`))) sentence++;
  }
  const ratio = (a: number) => (refs.length === 0 ? 0 : Math.round((a / refs.length) * 1000) / 1000);
  return { wholeTurn: ratio(whole), bestSentence: ratio(sentence) };
}
