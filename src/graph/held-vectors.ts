import { ScoredId } from './cypher/search-channel';

/**
 * A small namespace's vectors held in the API's process (docs/search.md "Held vectors"), so the
 * exact vector channels score in JavaScript instead of reading every vector out of Neo4j at each
 * search (bench/search-profile on conv-26: Neo4j's exact cosine 13/21 ms a channel, the scan of
 * the same candidates without their vectors 5-6 ms, the cosine here ~1 ms).
 *
 * Neo4j stays the authority on *which* nodes a search may score: each search asks it for the
 * candidates that pass the channel's filter (namespace, visibility, type, asOf …) with the text
 * their vector embeds; this holds only vectors, each under a hash of that text. A node whose text
 * changed (an overlay, a redaction) or that this process has never seen has its vector read from
 * Neo4j in the same transaction. So a worker process's writes are searchable on the next search,
 * a hidden or erased node is never scored (it is not a candidate), and a vector is never scored
 * against text other than the one it embeds. Entries a namespace's candidates no longer name are
 * dropped at its next search; whole namespaces leave least recently searched first past `maxBytes`.
 */
export interface HeldCandidate {
  id: string;
  /** `textHash` of the text the node's vector embeds, as Neo4j holds it now (composed: overlays and redactions applied). */
  key: number;
  events?: string[];
  supersededBy?: string[];
}

/** A node's vector as Neo4j holds it, with `textHash` of the text it embeds. */
export interface StoredVector {
  id: string;
  key: number;
  vector: readonly number[];
}

interface Held {
  /** Hash of the embedded text (`textHash`). */
  key: number;
  /** The vector scaled to length 1 (cosine is then a dot product). */
  unit: Float32Array;
}

interface Space {
  byId: Map<string, Held>;
  bytes: number;
}

/** Bytes an entry costs beyond its vector: the map entry, the id string, the object. */
const ENTRY_OVERHEAD = 160;

export class HeldVectors {
  /** Spaces in least- to most-recently searched order (a Map keeps insertion order). */
  private readonly spaces = new Map<string, Space>();
  private total = 0;

  constructor(private readonly maxBytes: number) {}

  get enabled(): boolean {
    return this.maxBytes > 0;
  }

  /** Bytes held now (vectors and per-entry overhead). */
  get bytes(): number {
    return this.total;
  }

  /**
   * The exact top `k` of `candidates` by cosine to `query` (Neo4j's `vector.similarity.cosine`:
   * (1 + cos) / 2, ties by id), and every scored candidate's score. Vectors missing here, or held
   * under another text, are read through `read` first. Candidates whose vector is not of the
   * query's length are not scored (as the Cypher channel's `embeddingDims` filter). `complete`:
   * the candidates are every node the space's unfiltered search may score (no type, entity,
   * importance or time filter), so what they do not name may leave (`prune`).
   */
  async topK(
    space: string,
    candidates: readonly HeldCandidate[],
    query: readonly number[],
    k: number,
    read: (ids: string[]) => Promise<StoredVector[]>,
    complete = true,
  ): Promise<{ hits: ScoredId[]; scores: Record<string, number>; read: number }> {
    const missing = this.missing(space, candidates);
    const s = this.touch(space);
    const fresh = new Map<string, Held>();
    if (missing.length > 0) {
      for (const r of await read(missing)) {
        const held = { key: r.key, unit: unitVector(r.vector) };
        fresh.set(r.id, held);
        this.put(s, r.id, held);
      }
    }
    const q = unitVector(query);
    const dims = q.length;
    const scored: ScoredId[] = [];
    const scores: Record<string, number> = {};
    for (let i = 0; i < candidates.length; i++) {
      const c = candidates[i] as HeldCandidate;
      const isFresh = fresh.get(c.id);
      const held = isFresh ?? s.byId.get(c.id);
      // Held under another text (changed between the two reads): not scored rather than scored stale.
      if (held === undefined || held.unit.length !== dims || (isFresh === undefined && held.key !== c.key)) continue;
      const score = (1 + Math.max(-1, Math.min(1, dot(held.unit, q, dims)))) / 2;
      scores[c.id] = score;
      scored.push({ id: c.id, score, ...(c.events ? { events: c.events } : {}), ...(c.supersededBy ? { supersededBy: c.supersededBy } : {}) });
    }
    scored.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    if (complete) this.prune(s, candidates);
    this.evict(space);
    return { hits: scored.slice(0, k), scores, read: missing.length };
  }

  /** Whether `space` has been read (it may hold nothing: a namespace without vectors) and not evicted since. */
  holds(space: string): boolean {
    return this.spaces.has(space);
  }

  /** The ids of `candidates` whose vector is not held under their current text. */
  missing(space: string, candidates: readonly HeldCandidate[]): string[] {
    const s = this.spaces.get(space);
    return candidates.filter((c) => s?.byId.get(c.id)?.key !== c.key).map((c) => c.id);
  }

  /** Holds vectors read apart from a search (`SearchService` fills a namespace new to the process in the background). */
  hold(space: string, vectors: readonly StoredVector[]): void {
    const s = this.touch(space);
    for (const r of vectors) this.put(s, r.id, { key: r.key, unit: unitVector(r.vector) });
    this.evict(space);
  }

  private touch(space: string): Space {
    const s = this.spaces.get(space) ?? { byId: new Map<string, Held>(), bytes: 0 };
    this.spaces.delete(space);
    this.spaces.set(space, s);
    return s;
  }

  private put(s: Space, id: string, held: Held): void {
    const old = s.byId.get(id);
    if (old) this.adjust(s, -(old.unit.byteLength + ENTRY_OVERHEAD));
    s.byId.set(id, held);
    this.adjust(s, held.unit.byteLength + ENTRY_OVERHEAD);
  }

  /**
   * Entries an unfiltered search's candidates no longer name (erased, hidden, superseded) leave
   * once they are more than a quarter of the space (a filtered search never prunes: it names fewer
   * candidates, and searches alternating filters would read the namespace again each time).
   */
  private prune(s: Space, candidates: readonly HeldCandidate[]): void {
    if (s.byId.size <= candidates.length + Math.max(16, candidates.length / 4)) return;
    const named = new Set(candidates.map((c) => c.id));
    for (const [id, held] of s.byId) {
      if (named.has(id)) continue;
      s.byId.delete(id);
      this.adjust(s, -(held.unit.byteLength + ENTRY_OVERHEAD));
    }
  }

  private evict(current: string): void {
    for (const [space, s] of this.spaces) {
      if (this.total <= this.maxBytes || space === current) break;
      this.total -= s.bytes;
      this.spaces.delete(space);
    }
  }

  private adjust(s: Space, delta: number): void {
    s.bytes += delta;
    this.total += delta;
  }
}

function dot(a: Float32Array, b: Float32Array, n: number): number {
  let sum = 0;
  for (let j = 0; j < n; j++) sum += (a[j] as number) * (b[j] as number);
  return sum;
}

/** `v` scaled to length 1 (a zero vector stays zero: its cosine is 0, as Neo4j's would be undefined). */
function unitVector(v: readonly number[]): Float32Array {
  let norm = 0;
  for (const x of v) norm += x * x;
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = (v[i] as number) * scale;
  return out;
}

/**
 * A 53-bit hash of a text (cyrb53): the key a vector is held under. Two different texts of one
 * node colliding would need 2^53 tries; a collision would score the node by its previous text's vector.
 */
export function textHash(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
