import { EventKind, EventSubmission, RejectCode, Role } from './event.types';
import { validateSubmission } from './event-validation';

const limits = { maxContentBytes: 100, maxPayloadBytes: 50, maxPayloadDepth: 4 };
const now = new Date('2026-11-29T12:00:00.000Z');
const anEvent = (over: Partial<EventSubmission> = {}): EventSubmission => ({
  namespace: 'team-a',
  source: 'slack',
  sourceEventId: 'm-1',
  kind: EventKind.MESSAGE,
  content: 'I use vim for everything',
  ...over,
});
const codeOf = (over: Partial<EventSubmission>) => {
  const v = validateSubmission(anEvent(over), limits, now);
  return v.ok ? 'OK' : v.code;
};

describe('validateSubmission', () => {
  it('normalises a valid event and defaults occurredAt to now', () => {
    const v = validateSubmission(anEvent({ role: 'USER' }), limits, now);
    expect(v.ok).toBe(true);
    if (!v.ok) return;
    expect(v.event.kind).toBe('message');
    expect(v.event.role).toBe(Role.USER);
    expect(v.event.occurredAt).toEqual(now);
    expect(v.event.occurredAtGiven).toBe(false);
    expect(v.event.checksum).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each<[string, Partial<EventSubmission>, RejectCode]>([
    ['missing namespace', { namespace: '' }, RejectCode.MISSING_FIELD],
    ['bad namespace', { namespace: 'a b' }, RejectCode.INVALID_NAMESPACE],
    ['empty source', { source: '  ' }, RejectCode.MISSING_FIELD],
    ['missing sourceEventId', { sourceEventId: undefined as unknown as string }, RejectCode.MISSING_FIELD],
    ['unknown kind', { kind: 'TELEGRAM' }, RejectCode.INVALID_ENUM],
    ['unknown role', { role: 'BOSS' }, RejectCode.INVALID_ENUM],
    ['empty content', { content: '' }, RejectCode.MISSING_FIELD],
    ['content too large', { content: 'é'.repeat(51) }, RejectCode.CONTENT_TOO_LARGE],
    ['payload too large', { rawPayload: { big: 'x'.repeat(60) } }, RejectCode.PAYLOAD_TOO_LARGE],
    ['NUL in content', { content: 'a\u0000b' }, RejectCode.INVALID_FIELD],
    ['lone high surrogate in content', { content: 'a\ud800' }, RejectCode.INVALID_UNICODE],
    ['lone low surrogate in a key field', { sourceEventId: 'k\udc00' }, RejectCode.INVALID_UNICODE],
    ['lone surrogate in conversationId', { conversationId: 'c\ud800' }, RejectCode.INVALID_UNICODE],
    ['NUL in source', { source: 'a\u0000' }, RejectCode.INVALID_FIELD],
    ['NUL in the tool-call id', { kind: EventKind.TOOL_CALL, rawPayload: { id: 'c\u0000' } }, RejectCode.INVALID_FIELD],
    ['lone surrogate in the tool-call id', { kind: EventKind.TOOL_RESULT, rawPayload: { tool_call_id: 'c\ud800' } }, RejectCode.INVALID_UNICODE],
    ['a non-finite number in the payload (1e400)', { rawPayload: { n: [1, Infinity] } }, RejectCode.INVALID_FIELD],
    // eslint-disable-next-line no-loss-of-precision -- the case is a literal that JSON.parse would round
    ['an integer beyond 2^53 already rounded to a JS number', { rawPayload: { n: 9007199254740993 } }, RejectCode.INVALID_FIELD],
    ['a payload deeper than maxPayloadDepth', { rawPayload: { a: { b: [{ c: {} }] } } }, RejectCode.PAYLOAD_TOO_DEEP],
    ['unparseable time', { occurredAt: 'yesterday' }, RejectCode.INVALID_TIMESTAMP],
    ['time out of range', { occurredAt: '20025-01-01T00:00:00Z' }, RejectCode.INVALID_TIMESTAMP],
    ['negative sequence', { sequenceNum: -1 }, RejectCode.INVALID_FIELD],
    ['provenance without scheme', { provenanceRoot: 'not a uri' }, RejectCode.INVALID_FIELD],
  ])('rejects %s', (_name, over, code) => expect(codeOf(over)).toBe(code));

  it('accepts a payload exactly maxPayloadDepth deep, safe integers, and NUL or lone surrogates inside payload strings (kept escaped in JSON)', () => {
    expect(codeOf({ rawPayload: { a: { b: [{}] } } })).toBe('OK');
    expect(codeOf({ rawPayload: { n: 9007199254740991, m: -9007199254740991 } })).toBe('OK');
    expect(codeOf({ rawPayload: { f: 1.5e-300 } })).toBe('OK');
    const v = validateSubmission(anEvent({ rawPayload: { s: 'a\u0000\ud800' } }), limits, now);
    expect(v.ok && v.event.rawPayloadText).toBe('{"s":"a\\u0000\\ud800"}');
  });

  it('checks a very wide or very deep payload without recursion', () => {
    const wide = { maxContentBytes: 100, maxPayloadBytes: 10_000_000, maxPayloadDepth: 64 };
    const ok = validateSubmission(anEvent({ rawPayload: new Array(200_000).fill(1) }), wide, now);
    expect(ok.ok).toBe(true);
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const v = validateSubmission(anEvent({ rawPayload: deep }), wide, now);
    expect(v.ok ? 'OK' : v.code).toBe(RejectCode.PAYLOAD_TOO_DEEP);
  });

  it('allows empty content when a payload carries the event (tool calls)', () => {
    expect(codeOf({ content: '', kind: EventKind.TOOL_CALL, rawPayload: { tool: 'ls' } })).toBe('OK');
  });

  it('keeps the checksum stable across resubmission and sensitive to content', () => {
    const sum = (over: Partial<EventSubmission>) => {
      const v = validateSubmission(anEvent(over), limits, now);
      if (!v.ok) throw new Error(v.reason);
      return v.event.checksum;
    };
    const later = new Date(now.getTime() + 60_000);
    const again = validateSubmission(anEvent(), limits, later);
    expect(again.ok && again.event.checksum).toBe(sum({}));
    expect(sum({ content: 'I use emacs' })).not.toBe(sum({}));
    expect(sum({ rawPayload: { b: 1, a: 2 } })).toBe(sum({ rawPayload: { a: 2, b: 1 } }));
    expect(sum({ occurredAt: '2026-01-01T00:00:00Z' })).toBe(sum({ occurredAt: new Date('2026-01-01T00:00:00.000Z') }));
    expect(sum({ occurredAt: '2026-01-01T00:00:00Z' })).not.toBe(sum({}));
  });
});
