import { isExactNumber } from '../common/exact-json';
import { RejectCode } from './event.types';

/**
 * Checks a raw payload without recursion (a hostile payload may be arbitrarily deep or wide):
 * nesting (objects and arrays) at most `maxDepth` levels, and every number one that JSON text
 * and Postgres keep exactly. Integers beyond ±2^53 arrive exact (LosslessNumber, see
 * common/exact-json.ts) over HTTP and are stored digit for digit; a plain JS number that large
 * was already rounded on its way in (a graphql-ws message), so it is refused rather than stored
 * changed. Strings may hold any code units: the payload is stored as JSON
 * text, where NUL and lone surrogates stay escaped (`\u0000`, `\ud800`) and read back unchanged.
 */
export function payloadProblem(payload: unknown, maxDepth: number): { code: RejectCode; reason: string } | undefined {
  const stack: Array<{ v: unknown; depth: number; path: string }> = [{ v: payload, depth: 0, path: 'rawPayload' }];
  while (stack.length > 0) {
    const { v, depth, path } = stack.pop() as { v: unknown; depth: number; path: string };
    if (isExactNumber(v)) continue;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) {
        return {
          code: RejectCode.INVALID_FIELD,
          reason: `${path} holds a number beyond the range of a double (such as 1e400, read as Infinity): send it as a string`,
        };
      }
      if (Number.isInteger(v) && !Number.isSafeInteger(v)) {
        return {
          code: RejectCode.INVALID_FIELD,
          reason: `${path} holds the integer ${v}, beyond ±2^53-1 (9007199254740991): it was rounded on its way in (graphql-ws messages are parsed by JSON.parse), so it would not be stored as sent; send it over HTTP POST /graphql, which keeps it exact, or as a string`,
        };
      }
    } else if (v !== null && typeof v === 'object') {
      if (depth + 1 > maxDepth) {
        return {
          code: RejectCode.PAYLOAD_TOO_DEEP,
          reason: `rawPayload nests deeper than ${maxDepth} levels of objects and arrays (MAX_PAYLOAD_DEPTH) at ${path}: flatten it`,
        };
      }
      if (Array.isArray(v)) {
        for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], depth: depth + 1, path: `${path}[${i}]` });
      } else {
        for (const [k, child] of Object.entries(v)) stack.push({ v: child, depth: depth + 1, path: `${path}.${k.slice(0, 40)}` });
      }
    }
  }
  return undefined;
}
