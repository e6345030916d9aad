import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

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
 * SHA-256 (hex) of the RFC 8785 (JSON Canonicalization Scheme) serialisation of
 * `{ "v": 1, ...ChecksumFields }`. Two submissions of the same key are "the same event" exactly
 * when their checksums are equal. See docs/bronze.md.
 */
export function eventChecksum(fields: ChecksumFields): string {
  const canonical = canonicalize({ v: 1, ...fields });
  if (canonical === undefined) throw new Error('checksum: fields are not serialisable');
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}
