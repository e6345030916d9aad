import { OverlayException } from './overlay.exception';
import { occurrences, placeSelector, SELECTOR_CONTEXT, textHash } from './quote-selector';

describe('placeSelector', () => {
  const text = 'Alice moved to Paris. Bob moved to Paris too.';

  it('places a unique quote with its context and UTF-16 offsets', () => {
    const s = placeSelector(text, { exact: 'Alice' });
    expect(s).toEqual({ exact: 'Alice', prefix: '', suffix: text.slice(5, 5 + SELECTOR_CONTEXT), start: 0, end: 5 });
    expect(text.slice(s.start, s.end)).toBe('Alice');
  });

  it('refuses a quote that does not occur', () => {
    expect(() => placeSelector(text, { exact: 'Berlin' })).toThrow(/does not occur/);
    expect(() => placeSelector(text, { exact: '' })).toThrow(OverlayException);
  });

  it('refuses an ambiguous quote, asking for a prefix or start', () => {
    expect(() => placeSelector(text, { exact: 'Paris' })).toThrow(/occurs 2 times.*give a prefix, suffix or start/);
  });

  it('disambiguates by prefix, by suffix or by start', () => {
    expect(placeSelector(text, { exact: 'Paris', prefix: 'Bob moved to ' }).start).toBe(35);
    expect(placeSelector(text, { exact: 'Paris', suffix: '.' }).start).toBe(15);
    expect(placeSelector(text, { exact: 'Paris', suffix: ' too' }).start).toBe(35);
    expect(placeSelector(text, { exact: 'Paris', start: 15 }).start).toBe(15);
  });

  it('refuses a start where exact is not, naming where it is', () => {
    expect(() => placeSelector(text, { exact: 'Paris', start: 16 })).toThrow(/not at start 16.*occurs at 15, 35/);
    expect(() => placeSelector(text, { exact: 'Paris', start: -1 })).toThrow(/non-negative/);
  });

  it('refuses a prefix that no occurrence has', () => {
    expect(() => placeSelector(text, { exact: 'Paris', prefix: 'Eve moved to ' })).toThrow(/none with the given prefix/);
  });

  it('counts offsets in UTF-16 code units (an emoji is two)', () => {
    const s = placeSelector('I 💚 green tea', { exact: 'green' });
    expect([s.start, s.end]).toEqual([5, 10]);
  });
});

describe('occurrences and textHash', () => {
  it('finds overlapping occurrences', () => {
    expect(occurrences('aaaa', 'aa')).toEqual([0, 1, 2]);
  });
  it('hashes with SHA-256', () => {
    expect(textHash('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
