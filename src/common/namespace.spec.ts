import { isValidNamespace, isValidPattern, patternCovers, patternMatches } from './namespace';

describe('namespaces and grant patterns', () => {
  it.each(['a', 'team-a', 'team-a/agent.1', 'A_b-c/d/e'])('accepts namespace %s', (ns) => expect(isValidNamespace(ns)).toBe(true));
  it.each(['', '/a', 'a/', 'a//b', '-a', 'a b', 'a*', '*', 'ä', 'x'.repeat(201), 'a/'.repeat(8) + 'a'])('rejects namespace %j', (ns) =>
    expect(isValidNamespace(ns)).toBe(false),
  );

  it('matches exact names, prefixes and the wildcard', () => {
    expect(patternMatches('team-a', 'team-a')).toBe(true);
    expect(patternMatches('team-a', 'team-ab')).toBe(false);
    expect(patternMatches('team-a/*', 'team-a/x')).toBe(true);
    expect(patternMatches('team-a/*', 'team-a')).toBe(false);
    expect(patternMatches('team-a/*', 'team-b/x')).toBe(false);
    expect(patternMatches('*', 'anything/at/all')).toBe(true);
  });

  it('knows which patterns cover others (for delegating grants)', () => {
    expect(patternCovers('*', 'team-a/*')).toBe(true);
    expect(patternCovers('team-a/*', 'team-a/x')).toBe(true);
    expect(patternCovers('team-a/*', 'team-a/x/*')).toBe(true);
    expect(patternCovers('team-a/*', '*')).toBe(false);
    expect(patternCovers('team-a/x', 'team-a/*')).toBe(false);
    expect(patternCovers('team-a/x', 'team-a/x')).toBe(true);
  });

  it.each(['*', 'team-a/*', 'team-a', 'a*'])('accepts pattern %s', (p) => expect(isValidPattern(p)).toBe(true));
  it.each(['', '**', 'a*b', '*a', ' team'])('rejects pattern %j', (p) => expect(isValidPattern(p)).toBe(false));
});
