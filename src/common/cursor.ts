import { BronzeException, BronzeExceptionCode } from './bronze.exception';
import { EventPosition } from './event-query.repository';
import { UUID } from './event.repository';

/** Opaque page cursors: base64url of a small JSON position. They carry no namespace or content. */
export function encodeCursor(p: EventPosition): string {
  return Buffer.from(JSON.stringify([p.occurredAtMicros, p.id])).toString('base64url');
}

export function decodeCursor(cursor: string): EventPosition {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && parsed.length === 2) {
      const [t, id] = parsed as unknown[];
      if (typeof t === 'string' && /^-?\d{1,19}$/.test(t) && typeof id === 'string' && UUID.test(id)) return { occurredAtMicros: t, id };
    }
  } catch {
    // fall through
  }
  throw new BronzeException(BronzeExceptionCode.INVALID_CURSOR, 'invalid cursor: pass an endCursor or edge cursor from a previous page, unchanged');
}
