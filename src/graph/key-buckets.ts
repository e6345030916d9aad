import { createHash } from 'node:crypto';

/**
 * Bucketed key digests: how `GraphRebuildService.checkConsistency` compares the keys of a kind
 * (node ids, edge keys) in Postgres and Neo4j without shipping them all.
 *
 * Each key is hashed with MD5 (Postgres `md5()`, APOC's `apoc.util.md5` in Neo4j, node:crypto
 * here; all three hash the UTF-8 bytes of the key text). The first BUCKET_HEX hex digits pick the
 * bucket (256 buckets); the next DIGEST_HEX hex digits, read as a 40-bit integer, are summed per
 * bucket. Each store returns per bucket the count and the sum; a bucket is read key by key only
 * where the two disagree.
 *
 * Soundness: a difference can only hide if, in one bucket, the keys only in Postgres (A) and the
 * keys only in Neo4j (B) have the same count and the same sum of their 40-bit values (a duplicate
 * key in one store changes its count, so it is always seen). MD5 of distinct texts behaves as a
 * random function here (nobody chooses the ids against the check), so for A != B the two sums
 * agree with probability at most about 2^-40 per differing bucket: well below once in 10^12
 * checks. A false *disagreement* (say a driver that hashed other bytes) costs only time: that
 * bucket is compared key by key, exactly.
 */
export const BUCKET_HEX = 2;
export const DIGEST_HEX = 10;

export interface BucketDigest {
  /** Keys in the bucket. */
  n: number;
  /** Sum of their 40-bit values. */
  s: bigint;
}

/** Per kind, bucket (`00`..`ff`) -> digest; a bucket without keys is absent. */
export type KindDigests = Record<string, Map<string, BucketDigest>>;

/** The bucket of a key, as the SQL and Cypher compute it. */
export function bucketOf(key: string): string {
  return createHash('md5').update(key, 'utf8').digest('hex').slice(0, BUCKET_HEX);
}

/** Digests of keys held in memory (Gold's keys come through a port as lists). */
export function digestKeys(keys: readonly string[]): Map<string, BucketDigest> {
  const out = new Map<string, BucketDigest>();
  for (const k of keys) {
    const h = createHash('md5').update(k, 'utf8').digest('hex');
    const b = h.slice(0, BUCKET_HEX);
    const d = out.get(b) ?? { n: 0, s: 0n };
    d.n += 1;
    d.s += BigInt(`0x${h.slice(BUCKET_HEX, BUCKET_HEX + DIGEST_HEX)}`);
    out.set(b, d);
  }
  return out;
}

/** Adds one store's row (kind, bucket, count, sum as decimal text) to `into`. */
export function addDigestRow(into: KindDigests, kind: string, bucket: string, n: number, sum: string): void {
  const m = into[kind] ?? new Map<string, BucketDigest>();
  m.set(bucket, { n, s: BigInt(sum) });
  into[kind] = m;
}

/** Total keys of a kind. */
export function countOf(d: Map<string, BucketDigest> | undefined): number {
  let n = 0;
  for (const b of d?.values() ?? []) n += b.n;
  return n;
}

/** Buckets whose count or sum differ between the two stores (sorted). */
export function differingBuckets(a: Map<string, BucketDigest> | undefined, b: Map<string, BucketDigest> | undefined): string[] {
  const out: string[] = [];
  for (const bucket of new Set([...(a?.keys() ?? []), ...(b?.keys() ?? [])])) {
    const x = a?.get(bucket);
    const y = b?.get(bucket);
    if (x?.n !== y?.n || x?.s !== y?.s) out.push(bucket);
  }
  return out.sort();
}
