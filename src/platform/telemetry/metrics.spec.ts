import { BoundedLabel } from './metrics';

describe('BoundedLabel', () => {
  it('passes identifiers up to the cap, then answers "other"; a missing name is "anonymous"', () => {
    const label = new BoundedLabel(2);
    expect([label.of('A'), label.of('B'), label.of('C'), label.of('A'), label.of(undefined), label.of('')]).toEqual([
      'A',
      'B',
      'other',
      'A',
      'anonymous',
      'anonymous',
    ]);
  });

  it('answers "other" for a name that is not a short identifier, without spending the cap on it', () => {
    const label = new BoundedLabel(1);
    expect([label.of('has space'), label.of('x'.repeat(65)), label.of('Ok')]).toEqual(['other', 'other', 'Ok']);
  });
});
