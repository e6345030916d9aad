import { composeText, ComposeSpan, REDACTION_PLACEHOLDER, spansWithin } from './compose-text';

const span = (kind: ComposeSpan['kind'], start: number, end: number, body: string | null = null, order = 0): ComposeSpan => ({ kind, start, end, body, order });

describe('composeText', () => {
  const text = 'Alice prefers green tea in the morning';

  it('returns the text unchanged without overlays and with annotations only', () => {
    expect(composeText(text, [])).toBe(text);
    expect(composeText(text, [span('ANNOTATION', 0, 5, 'a note')])).toBe(text);
  });

  it('replaces an EDIT span with its body and hides a REDACTION span', () => {
    expect(composeText(text, [span('EDIT', 14, 23, 'black coffee')])).toBe('Alice prefers black coffee in the morning');
    expect(composeText(text, [span('REDACTION', 14, 23)])).toBe(`Alice prefers ${REDACTION_PLACEHOLDER} in the morning`);
    expect(composeText(text, [span('REDACTION', 0, text.length)], '###')).toBe('###');
  });

  it('applies disjoint spans in text order whatever the input order', () => {
    const spans = [span('EDIT', 27, 38, 'the evening', 2), span('EDIT', 0, 5, 'Bob', 1), span('REDACTION', 14, 19)];
    const expected = `Bob prefers ${REDACTION_PLACEHOLDER} tea in the evening`;
    expect(composeText(text, spans)).toBe(expected);
    expect(composeText(text, [...spans].reverse())).toBe(expected);
  });

  it('merges overlapping and touching redactions into one placeholder', () => {
    expect(composeText(text, [span('REDACTION', 14, 20), span('REDACTION', 18, 23), span('REDACTION', 23, 26)])).toBe(
      `Alice prefers ${REDACTION_PLACEHOLDER} the morning`,
    );
  });

  it('lets a redaction win over an overlapping edit, so the edit cannot re-expose the span', () => {
    const out = composeText(text, [span('EDIT', 6, 23, 'likes green tea', 5), span('REDACTION', 14, 19, null, 1)]);
    expect(out).toBe(`Alice prefers ${REDACTION_PLACEHOLDER} tea in the morning`);
    expect(out).not.toContain('green');
  });

  it('applies the latest of overlapping edits and drops the older ones it overlaps', () => {
    const out = composeText(text, [span('EDIT', 6, 23, 'likes green tea', 1), span('EDIT', 14, 23, 'oolong', 2)]);
    expect(out).toBe('Alice prefers oolong in the morning');
  });

  it('ignores spans outside the text', () => {
    expect(composeText('short', [span('REDACTION', 3, 50), span('EDIT', -1, 2, 'x')])).toBe('short');
  });

  it('counts offsets in UTF-16 code units', () => {
    const t = 'I 💚 tea';
    expect(composeText(t, [span('EDIT', 2, 4, 'love')])).toBe('I love tea');
  });
});

describe('spansWithin', () => {
  it('clips and shifts spans to a slice of the text', () => {
    const content = 'my pin is 4711 and my name is Eve';
    const clipped = spansWithin([span('REDACTION', 10, 14), span('REDACTION', 30, 33)], 3, 20);
    expect(clipped).toEqual([span('REDACTION', 7, 11)]);
    expect(composeText(content.slice(3, 20), clipped)).toBe(`pin is ${REDACTION_PLACEHOLDER} and m`);
  });
});
