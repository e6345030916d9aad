/**
 * Namespace names: one to eight segments separated by `/`, each starting with a letter or digit
 * and made of letters, digits, `.`, `_`, `-`, at most 200 characters in all. `*` is reserved for
 * grant patterns.
 */
const NAMESPACE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}(\/[A-Za-z0-9][A-Za-z0-9._-]{0,63}){0,7}$/;

export const NAMESPACE_RULE =
  'a namespace is 1-8 segments joined by "/", each starting with a letter or digit and using only letters, digits, ".", "_" or "-" (at most 200 characters)';

export function isValidNamespace(ns: string): boolean {
  return ns.length <= 200 && NAMESPACE.test(ns);
}

/**
 * A grant pattern is a namespace name (exact match), a prefix ending in `*` (`team-a/*` matches
 * every namespace starting with `team-a/`), or `*` alone (every namespace).
 */
export function isValidPattern(pattern: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('*')) {
    const prefix = pattern.slice(0, -1);
    return prefix.length > 0 && !prefix.includes('*') && /^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(prefix);
  }
  return isValidNamespace(pattern);
}

export function patternMatches(pattern: string, namespace: string): boolean {
  if (pattern.endsWith('*')) return namespace.startsWith(pattern.slice(0, -1));
  return pattern === namespace;
}

/** True when every namespace `inner` matches is also matched by `outer`. */
export function patternCovers(outer: string, inner: string): boolean {
  if (!outer.endsWith('*')) return !inner.endsWith('*') && outer === inner;
  const prefix = outer.slice(0, -1);
  return inner.startsWith(prefix);
}
