import { findTextProblem, requireStorableArgs, textProblem } from './input';

describe('storable text', () => {
  it('finds NUL and unpaired surrogates, and accepts paired ones', () => {
    expect(textProblem('a\u0000')).toMatch(/NUL/);
    expect(textProblem('a\ud800')).toMatch(/not valid Unicode/);
    expect(textProblem('a\udc00b')).toMatch(/not valid Unicode/);
    expect(textProblem('rocket \ud83d\ude80 \ufffd')).toBeUndefined();
  });

  it('names the path of the first bad string, keys included', () => {
    expect(findTextProblem({ a: ['ok', { b: 'x\u0000' }] }, 'filter')?.path).toBe('filter.a[1].b');
    expect(findTextProblem({ sources: ['ok', 'bad\ud800'] }, 'filter')?.path).toBe('filter.sources[1]');
    expect(findTextProblem({ ['k\u0000']: 1 }, 'input')?.path).toBe('input (a key)');
    expect(findTextProblem({ at: new Date(0), n: 1, s: 'fine' }, 'x')).toBeUndefined();
  });

  it('walks a list of 200,000 strings without recursion', () => {
    const list = Array.from({ length: 200_000 }, (_, i) => `s${i}`);
    list[199_999] = 'last\u0000';
    expect(findTextProblem({ list }, 'filter')?.path).toBe('filter.list[199999]');
  });

  it('refuses with BAD_USER_INPUT naming the argument', () => {
    expect(() => requireStorableArgs({ namespace: 'ns\u0000' })).toThrow(/argument namespace contains a NUL/);
    expect(() => requireStorableArgs({ namespace: 'ns', first: 3 })).not.toThrow();
  });
});
