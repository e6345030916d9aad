import { eventChecksum } from '../bronze/checksum';
import { holdsExactNumbers, isExactNumber, parseJsonExact, stringifyExact } from './exact-json';

describe('exact JSON', () => {
  it('keeps integers beyond ±2^53 digit for digit and round-trips the text', () => {
    const text = '{"a":9007199254740993,"b":[-18446744073709551617,1.5,0.1234567890123456789,12],"c":"9007199254740993","d":{"e":null,"f":true}}';
    const v = parseJsonExact(text) as { a: unknown; b: unknown[]; c: unknown };
    expect(isExactNumber(v.a)).toBe(true);
    expect(isExactNumber(v.b[0])).toBe(true);
    expect(v.b.slice(1)).toEqual([1.5, 0.12345678901234568, 12]);
    expect(v.c).toBe('9007199254740993');
    expect(stringifyExact(v)).toBe(
      '{"a":9007199254740993,"b":[-18446744073709551617,1.5,0.12345678901234568,12],"c":"9007199254740993","d":{"e":null,"f":true}}',
    );
  });

  it('answers exactly as JSON.parse / JSON.stringify for text without unsafe integers', () => {
    for (const text of ['{"a":1,"b":"x\\u0000\\ud800","c":[1e5,-0.5]}', '[1234567890123456]', '"s"', '{"a":1,"a":2}', '{"big":9007199254740993,"big":1}']) {
      const v = parseJsonExact(text);
      if (!holdsExactNumbers(v)) expect(stringifyExact(v)).toBe(JSON.stringify(JSON.parse(text)));
    }
    expect(() => parseJsonExact('{"a":12345678901234567890')).toThrow(SyntaxError);
  });

  it('gives the checksum of an exact big integer apart from its rounded value and from the same digits as a string', () => {
    const base = {
      kind: 'message',
      content: 'c',
      provenanceRoot: null,
      conversationId: null,
      sessionId: null,
      sequenceNum: null,
      role: null,
      actor: null,
      occurredAt: null,
    };
    const sum = (payload: string) => eventChecksum({ ...base, rawPayload: parseJsonExact(payload) });
    expect(sum('{"n":9007199254740993}')).toBe(sum('{"n":9007199254740993}'));
    expect(new Set([sum('{"n":9007199254740993}'), sum('{"n":9007199254740992}'), sum('{"n":"9007199254740993"}')]).size).toBe(3);
  });
});
