import { retryDelaySeconds, retryDelaySql } from './backoff';

describe('retry backoff', () => {
  it('doubles from the base with each attempt and stops at the cap', () => {
    expect([0, 1, 2, 3].map((a) => retryDelaySeconds(a, 30, 3600))).toEqual([30, 60, 120, 240]);
    expect(retryDelaySeconds(10, 30, 3600)).toBe(3600);
  });

  it('writes the same rule as a SQL interval over the caller expressions', () => {
    expect(retryDelaySql('attempts', '$3', '3600')).toBe('make_interval(secs => least($3 * power(2, attempts), 3600))');
  });
});
