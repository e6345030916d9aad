import { createHash } from 'node:crypto';
import { bucketOf, countOf, differingBuckets, digestKeys } from './key-buckets';

const keys = Array.from({ length: 2000 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}->x@0:${i % 7}`);

describe('key buckets', () => {
  it('buckets a key by the first two hex digits of its MD5 and sums the next ten as a 40-bit integer', () => {
    const h = createHash('md5').update('abc').digest('hex');
    expect(bucketOf('abc')).toBe(h.slice(0, 2));
    expect(digestKeys(['abc'])).toEqual(new Map([[h.slice(0, 2), { n: 1, s: BigInt(`0x${h.slice(2, 12)}`) }]]));
  });

  it('is independent of order and counts every key, duplicates included', () => {
    const d = digestKeys(keys);
    expect(countOf(d)).toBe(2000);
    expect(d.size).toBeGreaterThan(250);
    expect(differingBuckets(d, digestKeys([...keys].reverse()))).toEqual([]);
    expect(countOf(digestKeys([...keys, keys[0] as string]))).toBe(2001);
    expect(differingBuckets(d, digestKeys([...keys, keys[0] as string]))).toEqual([bucketOf(keys[0] as string)]);
  });

  it('finds the buckets of a missing key, an extra key, and a swap that keeps the count', () => {
    const d = digestKeys(keys);
    const dropped = keys.slice(1);
    expect(differingBuckets(d, digestKeys(dropped))).toEqual([bucketOf(keys[0] as string)]);
    const added = [...keys, 'stray'];
    expect(differingBuckets(d, digestKeys(added))).toEqual([bucketOf('stray')]);
    // Same count in the bucket, another key: only the sum tells.
    const b = bucketOf(keys[0] as string);
    let other = 0;
    while (bucketOf(`swap-${other}`) !== b) other += 1;
    const swapped = [`swap-${other}`, ...keys.slice(1)];
    expect(countOf(digestKeys(swapped))).toBe(2000);
    expect(differingBuckets(d, digestKeys(swapped))).toEqual([b]);
    expect(differingBuckets(undefined, d)).toHaveLength(d.size);
  });
});
