import { LRUCache } from 'lru-cache';

/**
 * The vectors of a namespace's nodes, held in the searching process so the exact vector channel
 * scores them in process instead of reading every node's vector out of Neo4j's property store and
 * computing its cosine in Cypher at each search (the two exact scans were the largest statements
 * of a search, bench/results/search-profile-*.json).
 *
 * Freshness does not depend on which process wrote a vector: every write of a node's vector gives
 * it a new random `embeddingStamp` in the same statement (fact-nodes.ts, event-nodes.ts), the
 * search's listing statement reads each listed node's stamp, and a vector is reused only while its
 * stamp is the one the listing read; otherwise, and for a node without a stamp, the vector is read
 * again. So an API process and a worker process need no channel between them: a re-embedded fact
 * or a redacted event (its text, so its vector, changed) is read anew at the next search, and a
 * node that is gone, or that the filter drops, is not listed, so never scored. Which nodes are
 * scored is decided by Neo4j (namespace and filters) at every search; the cache only holds vectors.
 */

/** A node's stored vector as Neo4j returns it, with the stamp of that write (null: written before stamps). */
export interface StoredVector {
  id: string;
  stamp: number | null;
  vector: readonly number[];
}

/** A vector ready to score: its 32-bit values, as Neo4j stores them, and its length. */
export interface ScorableVector {
  vector: Float32Array;
  norm: number;
}

interface CachedVector extends ScorableVector {
  stamp: number;
}

/** One namespace's vectors of one label and model, and their size in bytes (what the LRU counts). */
class NamespaceVectors {
  readonly byId = new Map<string, CachedVector>();
  bytes = 0;

  put(id: string, v: CachedVector): void {
    const old = this.byId.get(id);
    if (old) this.bytes -= bytesOf(old);
    this.byId.set(id, v);
    this.bytes += bytesOf(v);
  }

  drop(id: string): void {
    const old = this.byId.get(id);
    if (!old) return;
    this.bytes -= bytesOf(old);
    this.byId.delete(id);
  }
}

/** A vector's bytes plus what its id and entry cost, roughly. */
function bytesOf(v: ScorableVector): number {
  return v.vector.byteLength + 128;
}

export function scorable(values: readonly number[]): ScorableVector {
  const vector = Float32Array.from(values);
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += (vector[i] as number) * (vector[i] as number);
  return { vector, norm: Math.sqrt(sum) };
}

/** How often listed vectors were found in process, and how many had to be read from Neo4j (tests and benches count them). */
export interface NodeVectorCounts {
  reused: number;
  read: number;
}

/**
 * Per (label, model, namespace), least recently searched namespaces evicted first once the vectors
 * held pass `maxBytes` (SEARCH_VECTOR_CACHE_MB). With `maxBytes` 0 nothing is held: every listed
 * vector is read from Neo4j at every search.
 */
export class NodeVectorCache {
  private readonly sets: LRUCache<string, NamespaceVectors> | null;
  private readonly counts: NodeVectorCounts = { reused: 0, read: 0 };

  constructor(maxBytes: number) {
    this.sets = maxBytes > 0 ? new LRUCache<string, NamespaceVectors>({ maxSize: maxBytes, sizeCalculation: (s) => Math.max(1, s.bytes) }) : null;
  }

  /**
   * The vectors of `listed` (the nodes a listing statement returned, with the stamps it read):
   * those held with the same stamp from memory, the rest read by `read` (one statement for all of
   * them) and kept. `embedded`: how many nodes of the label and model the namespace has now; when
   * more are held, the held ones the listing did not return are let go (removed nodes).
   */
  async vectors(
    key: string,
    listed: ReadonlyArray<{ id: string; stamp: number | null }>,
    embedded: number,
    read: (ids: string[]) => Promise<StoredVector[]>,
  ): Promise<Map<string, ScorableVector>> {
    const held = this.sets?.get(key);
    const found = new Map<string, ScorableVector>();
    const missing: string[] = [];
    for (const n of listed) {
      const v = n.stamp === null ? undefined : held?.byId.get(n.id);
      if (v && v.stamp === n.stamp) found.set(n.id, v);
      else missing.push(n.id);
    }
    this.counts.reused += found.size;
    if (missing.length === 0) return found;
    const fresh = await read(missing);
    this.counts.read += fresh.length;
    const set = held ?? new NamespaceVectors();
    for (const s of fresh) {
      const v = scorable(s.vector);
      found.set(s.id, v);
      if (s.stamp === null) set.drop(s.id);
      else set.put(s.id, { ...v, stamp: s.stamp });
    }
    if (set.byId.size > embedded) {
      const now = new Set(listed.map((n) => n.id));
      for (const id of [...set.byId.keys()]) if (!now.has(id)) set.drop(id);
    }
    // Set again, so the LRU counts the set's new size (and may evict older namespaces).
    this.sets?.set(key, set);
    return found;
  }

  /** Reused and read vectors since this cache was made. */
  counted(): NodeVectorCounts {
    return { ...this.counts };
  }

  /** Bytes of vectors held, over every namespace. */
  heldBytes(): number {
    return this.sets?.calculatedSize ?? 0;
  }
}

/** The key of one label's vectors of one model in one namespace. */
export function nodeVectorKey(label: string, model: string, namespace: string): string {
  return `${label}\u0000${model}\u0000${namespace}`;
}

/**
 * Neo4j's `vector.similarity.cosine` of `a` and the query: (1 + cosine) / 2, in [0, 1]. Null where
 * Neo4j's exact statement would not score the node: another length, or a zero vector.
 */
export function similarity(a: ScorableVector, query: Float64Array, queryNorm: number): number | null {
  if (a.vector.length !== query.length || a.norm === 0 || queryNorm === 0) return null;
  let dot = 0;
  for (let i = 0; i < query.length; i++) dot += (a.vector[i] as number) * (query[i] as number);
  return (1 + dot / (a.norm * queryNorm)) / 2;
}
