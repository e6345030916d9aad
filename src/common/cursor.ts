import { InputException, InputExceptionCode } from './app-exception';
import { UUID } from './ids';

/** A row's place in a (timestamp, id) ordered listing: the timestamp in epoch microseconds. */
export interface Position {
  micros: string;
  id: string;
}

// Every position a listing hands out lies within the years 0001-9999; outside it Postgres
// arithmetic on the timestamp overflows (a 19-digit time made the query fail with an internal error).
const MIN_MICROS = -62135596800000000n; // 0001-01-01T00:00:00Z
const MAX_MICROS = 253402300800000000n; // 10000-01-01T00:00:00Z

const inRange = (t: string): boolean => {
  const n = BigInt(t);
  return n >= MIN_MICROS && n < MAX_MICROS;
};

/** Opaque page cursors: base64url of a small JSON position. They carry no namespace or content. */
export function encodeCursor(p: Position): string {
  return Buffer.from(JSON.stringify([p.micros, p.id])).toString('base64url');
}

export function decodeCursor(cursor: string): Position {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && parsed.length === 2) {
      const [t, id] = parsed as unknown[];
      if (typeof t === 'string' && /^-?\d{1,19}$/.test(t) && inRange(t) && typeof id === 'string' && UUID.test(id)) return { micros: t, id };
    }
  } catch {
    // fall through
  }
  throw new InputException(InputExceptionCode.INVALID_CURSOR, 'invalid cursor: pass an endCursor or edge cursor from a previous page, unchanged');
}
