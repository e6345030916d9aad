import neo4j, { Integer } from 'neo4j-driver';
import { assertIdentifier, CypherRunner } from './cypher-runner';
import { addDigestRow, BUCKET_HEX, DIGEST_HEX, KindDigests } from '../key-buckets';

/** A kind's keys in the graph: a MATCH binding the namespace to `$ns`, and the key expression over its variables. */
export interface GraphKeyCypher {
  match: string;
  key: string;
}

/** Hex digit -> value, for Cypher (it has no hex parsing); Neo4j integers, so that the sums stay integers. */
const HEX: Record<string, Integer> = Object.fromEntries([...'0123456789abcdef'].map((c, i) => [c, neo4j.int(i)]));

/** `coalesce(key, 'null')`: a null key reads as the text 'null', as `String(null)` did in the full read. */
const keyExpr = (q: GraphKeyCypher): string => `coalesce(${q.key}, 'null')`;

/** Every key of each kind (the full read: a fallback, and what tests compare against). */
export async function readKeys(tx: CypherRunner, namespace: string, queries: Record<string, GraphKeyCypher>): Promise<Record<string, string[]>> {
  const keys: Record<string, string[]> = {};
  for (const [kind, q] of Object.entries(queries)) {
    keys[kind] = (await tx.run(`${q.match} RETURN ${keyExpr(q)} AS k`, { ns: namespace })).records.map((r) => String(r.get('k')));
  }
  return keys;
}

/**
 * Per kind and bucket, the count and 40-bit sum of the keys' MD5 (see graph/key-buckets.ts), in
 * one statement. Needs APOC core's `apoc.util.md5` (the API's start already requires APOC).
 */
export async function readKeyDigests(tx: CypherRunner, namespace: string, queries: Record<string, GraphKeyCypher>): Promise<KindDigests> {
  const parts = Object.entries(queries).map(([kind, q]) => `${q.match} RETURN '${assertIdentifier(kind)}' AS kind, ${keyExpr(q)} AS k`);
  const res = await tx.run(
    `CALL { ${parts.join(' UNION ALL ')} }
     WITH kind, apoc.util.md5([k]) AS h
     WITH kind, substring(h, 0, ${BUCKET_HEX}) AS b, reduce(x = 0, c IN split(substring(h, ${BUCKET_HEX}, ${DIGEST_HEX}), '') | x * 16 + $hex[c]) AS v
     RETURN kind, b, count(*) AS n, toString(sum(v)) AS s`,
    { ns: namespace, hex: HEX },
  );
  const out: KindDigests = {};
  for (const r of res.records) addDigestRow(out, String(r.get('kind')), String(r.get('b')), Number(r.get('n')), String(r.get('s')));
  return out;
}

/** The keys of one kind that fall in `buckets`. */
export async function readKeysInBuckets(tx: CypherRunner, namespace: string, q: GraphKeyCypher, buckets: readonly string[]): Promise<string[]> {
  const res = await tx.run(`${q.match} WITH ${keyExpr(q)} AS k WHERE substring(apoc.util.md5([k]), 0, ${BUCKET_HEX}) IN $buckets RETURN k`, {
    ns: namespace,
    buckets: [...buckets],
  });
  return res.records.map((r) => String(r.get('k')));
}
