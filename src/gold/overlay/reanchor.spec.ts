import { placeSelector } from './quote-selector';
import { reanchor, verdict } from './reanchor';

const thresholds = { accept: 0.75, review: 0.5 };

describe('reanchor', () => {
  const old = 'Alice prefers green tea in the morning';
  const sel = placeSelector(old, { exact: 'green tea' });

  it('keeps the stored position when the text there is unchanged', () => {
    expect(reanchor(sel, 'Alice prefers green tea at noon')).toEqual({ start: 14, end: 23, confidence: 1, method: 'position' });
  });

  it('finds the quote elsewhere when the text moved (reorder)', () => {
    const m = reanchor(sel, 'In the morning Alice prefers green tea');
    expect(m).toMatchObject({ start: 29, end: 38, method: 'exact' });
    expect(m?.confidence).toBeGreaterThanOrEqual(0.9);
  });

  it('ranks exact occurrences by prefix/suffix agreement', () => {
    const s = placeSelector('Bob drinks tea. Alice prefers tea daily.', { exact: 'tea', prefix: 'prefers ' });
    const m = reanchor(s, 'Carol: tea. Bob drinks tea. Alice prefers tea daily!');
    expect(m?.start).toBe(42);
  });

  it('matches approximately with a confidence below 1 (paraphrase)', () => {
    const s = placeSelector(old, { exact: 'prefers green tea' });
    const m = reanchor(s, 'Alice prefers grean tea in the morning.'.replace('prefers', 'prefer'));
    expect(m?.method).toBe('approximate');
    expect(m?.confidence).toBeGreaterThan(0.5);
    expect(m?.confidence).toBeLessThan(1);
  });

  it('finds nothing in an unrelated text, or a weak match that orphans', () => {
    const s = placeSelector(old, { exact: 'Alice' });
    const m = reanchor(s, 'Bob lives in Rome');
    expect(verdict(m?.confidence ?? null, thresholds).status).toBe('ORPHANED');
    expect(reanchor(sel, 'xyz')).toBeNull();
  });
});

describe('verdict', () => {
  it('splits confidence at the accept and review thresholds', () => {
    expect(verdict(0.9, thresholds)).toEqual({ status: 'REANCHORED', needsReview: false });
    expect(verdict(0.75, thresholds)).toEqual({ status: 'REANCHORED', needsReview: false });
    expect(verdict(0.6, thresholds)).toEqual({ status: 'REANCHORED', needsReview: true });
    expect(verdict(0.49, thresholds)).toEqual({ status: 'ORPHANED', needsReview: true });
    expect(verdict(null, thresholds)).toEqual({ status: 'ORPHANED', needsReview: true });
  });
});
