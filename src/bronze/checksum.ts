import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { holdsExactNumbers, isExactNumber } from '../common/exact-json';

/** The fields of a submission that its checksum covers (the idempotency key is not among them). */
export interface ChecksumFields {
  kind: string;
  content: string;
  rawPayload: unknown;
  provenanceRoot: string | null;
  conversationId: string | null;
  sessionId: string | null;
  sequenceNum: number | null;
  role: string | null;
  actor: string | null;
  /** ISO-8601 UTC with milliseconds when the client gave a time; null when the server defaulted it. */
  occurredAt: string | null;
}

/**
 * JCS writes numbers as ECMAScript does, which rounds integers beyond ±2^53; an exact one
 * (LosslessNumber) is written as `{"\u0000exact": "<digits>"}` instead, a key no JSON client sends
 * by accident, so 9007199254740993 and …992 (or the string "9007199254740993") differ.
 */
const EXACT_KEY = '\u0000exact';
function forCanonical(value: unknown): unknown {
  return holdsExactNumbers(value) ? markExact(value) : value;
}

function markExact(value: unknown): unknown {
  if (isExactNumber(value)) return { [EXACT_KEY]: value.toString() };
  if (Array.isArray(value)) return value.map(markExact);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, markExact(v)]));
  return value;
}

/**
 * SHA-256 (hex) of the RFC 8785 (JSON Canonicalization Scheme) serialisation of
 * `{ "v": 1, ...ChecksumFields }`. Two submissions of the same key are "the same event" exactly
 * when their checksums are equal. See docs/bronze.md.
 */
export function eventChecksum(fields: ChecksumFields): string {
  const canonical = canonicalize({ v: 1, ...fields, rawPayload: forCanonical(fields.rawPayload) });
  if (canonical === undefined) throw new Error('checksum: fields are not serialisable');
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}
