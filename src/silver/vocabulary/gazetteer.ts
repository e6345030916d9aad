/**
 * A hand-kept gazetteer of well-known technologies, programming languages and frameworks for the
 * offline extractor. Each row: `Canonical|type|category|alias,alias`. The type is an ontology
 * entity type; the category groups interchangeable things (two editors, two databases), which the
 * judge uses to tell "switched to neovim" (replaces vim) from "also uses Docker".
 *
 * Names that are ordinary English words ("go", "rust", "swift", "fish", "arch") are marked with a
 * leading `~`: in free text they match only when written exactly as the canonical name or an
 * alias (case-sensitive), in an object position of a usage rule they match case-insensitively.
 */

import { ROWS } from './gazetteer-rows';

export type GazetteerType = 'technology' | 'programming_language' | 'framework';

export interface GazetteerEntry {
  name: string;
  type: GazetteerType;
  category: string;
  aliases: readonly string[];
  /** An ordinary English word too: matched case-sensitively in free text. */
  ambiguous: boolean;
}

function parseRow([rawName, type, category, rawAliases]: readonly [string, GazetteerType, string, string]): GazetteerEntry {
  const ambiguous = rawName.startsWith('~');
  const aliases = rawAliases
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a.length > 0);
  return { name: ambiguous ? rawName.slice(1) : rawName, type, category, aliases, ambiguous };
}

export const GAZETTEER: readonly GazetteerEntry[] = ROWS.map(parseRow);

export interface GazetteerKey {
  /** The surface form, as written in the gazetteer. */
  form: string;
  entry: GazetteerEntry;
  /** Match only this exact casing in free text. */
  caseSensitive: boolean;
}

function buildKeys(): GazetteerKey[] {
  const keys: GazetteerKey[] = [];
  for (const entry of GAZETTEER) {
    keys.push({ form: entry.name, entry, caseSensitive: entry.ambiguous });
    for (const alias of entry.aliases) {
      const amb = alias.startsWith('~');
      keys.push({ form: amb ? alias.slice(1) : alias, entry, caseSensitive: amb });
    }
  }
  // Longest forms first so "Arch Linux" beats "Linux" and "GitLab CI" beats "GitLab".
  return keys.sort((a, b) => b.form.length - a.form.length || a.form.localeCompare(b.form));
}

export const GAZETTEER_KEYS: readonly GazetteerKey[] = buildKeys();

const byLowerForm = new Map<string, GazetteerEntry>();
for (const key of [...GAZETTEER_KEYS].reverse()) byLowerForm.set(key.form.toLowerCase(), key.entry);
// Canonical names win over aliases of other entries ("Bash" the language over nothing).
for (const entry of GAZETTEER) byLowerForm.set(entry.name.toLowerCase(), entry);

/** Exact lookup of a phrase (case-insensitive) by canonical name or alias. */
export function lookupTech(phrase: string): GazetteerEntry | undefined {
  return byLowerForm.get(phrase.trim().toLowerCase());
}

export interface GazetteerHit {
  entry: GazetteerEntry;
  start: number;
  end: number;
  text: string;
}

const WORD_CHAR = /[A-Za-z0-9+#]/;

/**
 * Every gazetteer mention in `text`, longest match first, non-overlapping, in text order.
 * `lenient` matches ambiguous names case-insensitively too (used inside object phrases).
 */
export function findTech(text: string, lenient = false): GazetteerHit[] {
  const lower = text.toLowerCase();
  const taken = new Array<boolean>(text.length).fill(false);
  const hits: GazetteerHit[] = [];
  for (const key of GAZETTEER_KEYS) {
    const needle = key.form.toLowerCase();
    let from = 0;
    for (;;) {
      const at = lower.indexOf(needle, from);
      if (at < 0) break;
      from = at + 1;
      const end = at + needle.length;
      if (at > 0 && WORD_CHAR.test(text[at - 1] as string)) continue;
      // A trailing "." is sentence punctuation, not part of "Node.js".
      if (end < text.length && WORD_CHAR.test(text[end] as string)) continue;
      if (key.caseSensitive && !lenient && text.slice(at, end) !== key.form) continue;
      let free = true;
      for (let i = at; i < end; i++) if (taken[i]) free = false;
      if (!free) continue;
      for (let i = at; i < end; i++) taken[i] = true;
      hits.push({ entry: key.entry, start: at, end, text: text.slice(at, end) });
    }
  }
  return hits.sort((a, b) => a.start - b.start);
}

/** The canonical form used for comparing values: the gazetteer name when known, else the phrase. */
export function canonicalValue(phrase: string): string {
  return lookupTech(phrase)?.name ?? phrase;
}
