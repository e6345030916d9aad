import { eng as ENGLISH_STOP_WORDS } from 'stopword';
import porter2 from 'wink-porter2-stemmer';

/**
 * Where word forms meet (issue 44, item 4): the key of a word that its inflections and its
 * nearest derivations share, so "allergies" meets "allergic", "moved" meets "moving" and
 * "coffees" meets "coffee". The keyword channels index and query these keys (docs/search.md,
 * "Word forms"), and the offline judge compares topics by them.
 *
 * A word's key is its Porter2 (Snowball English) stem, lowercased, with a final "i" or "y" taken
 * off: Porter2 conflates inflections ("moved", "moving", "moves" → move) and some derivations
 * ("allergic" → allerg), and leaves a "y" turned "i" ("allergies", "allergy" → allergi), which the
 * last step joins ("allerg"). Numbers stay as written. Not reached: derivations that change the
 * stem's end otherwise ("marriage" / "married", "vegetarian" / "vegetables").
 */
export function wordKey(word: string): string {
  const w = word.toLowerCase();
  const known = KEYS.get(w);
  if (known !== undefined) return known;
  const key = keyOf(w);
  // Search takes the keys of every hit's text per request and derivation of every statement: the
  // stemmer was ~1.5 ms of each search's CPU (bench/search-under-load's profile). A vocabulary is
  // small; the map starts again when it holds KEYS_MAX words, so no text can grow it unbounded.
  if (KEYS.size >= KEYS_MAX) KEYS.clear();
  KEYS.set(w, key);
  return key;
}

const KEYS = new Map<string, string>();
const KEYS_MAX = 50_000;

function keyOf(w: string): string {
  if (/^\p{N}+$/u.test(w) || w.length < 3) return w;
  const stem = porter2(w);
  return stem.length > 3 ? stem.replace(/[iy]$/, '') : stem;
}

const STOP = new Set(ENGLISH_STOP_WORDS);

/** The keys of a text's words (runs of letters or digits, English stop words and single letters left out), in order, with repeats. */
export function wordKeys(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  )
    .filter((w) => !STOP.has(w) && (w.length > 1 || /\p{N}/u.test(w)))
    .map(wordKey);
}
