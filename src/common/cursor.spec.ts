import { InputException } from './app-exception';
import { decodeCursor, encodeCursor } from './cursor';

const id = '0b5c7a4e-1f6d-4c1a-9a51-2f1e0c9d8b7a';
const raw = (t: string) => Buffer.from(JSON.stringify([t, id])).toString('base64url');

describe('page cursors', () => {
  it('round-trips a position', () => {
    expect(decodeCursor(encodeCursor({ micros: '1764400000000000', id }))).toEqual({ micros: '1764400000000000', id });
    expect(decodeCursor(raw('-2208988800000000'))).toEqual({ micros: '-2208988800000000', id }); // 1900
  });

  it('refuses a time outside the years 0001-9999 (19 digits overflowed Postgres before)', () => {
    for (const t of ['9223372036854775807', '-9223372036854775808', '1000000000000000000', '253402300800000000']) {
      expect(() => decodeCursor(raw(t))).toThrow(InputException);
    }
    expect(() => decodeCursor('garbage')).toThrow(/invalid cursor/);
  });
});
