import { lookupTech } from './gazetteer';

const STOP = new Set([
  'a',
  'an',
  'the',
  'our',
  'my',
  'your',
  'their',
  'his',
  'her',
  'its',
  'some',
  'to',
  'of',
  'for',
  'in',
  'on',
  'at',
  'and',
  'or',
  'with',
  'about',
  'is',
  'are',
  'be',
]);

/** Light suffix stripping so "learning" ~ "learn", "meetings" ~ "meeting". */
export const stem = (w: string): string => w.replace(/(?:ing|ed|es|s)$/, '') || w;

/** Content tokens of a value, gazetteer names canonicalised ("postgres" → "postgresql"). */
export function valueTokens(value: string): string[] {
  const tech = lookupTech(value);
  if (tech) return [tech.name.toLowerCase()];
  return value
    .toLowerCase()
    .replace(/'s\b/g, '')
    .split(/[^a-z0-9+#.]+/)
    .map((w) => w.replace(/^\.+|\.+$/g, ''))
    .filter((w) => w.length > 0 && !STOP.has(w))
    .map((w) => lookupTech(w)?.name.toLowerCase() ?? stem(w));
}

/** Canonical comparable form of a value: gazetteer name, else its content tokens joined. */
export function normaliseValue(value: string | null): string {
  return value === null ? '' : valueTokens(value).join(' ');
}

/** Jaccard overlap of content tokens, 0..1. */
export function tokenJaccard(a: string, b: string): number {
  const x = new Set(valueTokens(a));
  const y = new Set(valueTokens(b));
  if (x.size === 0 && y.size === 0) return 1;
  let inter = 0;
  for (const t of x) if (y.has(t)) inter++;
  return inter / (x.size + y.size - inter);
}

/** Same value: equal canonical forms, or token Jaccard at least `threshold`. */
export function sameValue(a: string | null, b: string | null, threshold = 1): boolean {
  if (a === null || b === null) return a === b;
  const na = normaliseValue(a);
  const nb = normaliseValue(b);
  if (na === nb && na.length > 0) return true;
  return threshold < 1 && tokenJaccard(a, b) >= threshold;
}
