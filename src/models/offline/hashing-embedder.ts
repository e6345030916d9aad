/**
 * A deterministic, dependency-free Embedder: feature hashing ("the hashing trick") of word
 * unigrams, word bigrams and character trigrams into N dimensions, L2-normalised. No model, no
 * I/O. It captures lexical overlap only (shared words and word pieces), not meaning: "vim" and
 * "neovim" are close through their trigrams, "car" and "automobile" are not. It is the fallback when
 * the ONNX model cannot load, and a fast embedder for tests.
 */
import type { Embedder } from '../../silver/model-ports';

export interface HashingEmbedderOptions {
  /** Vector length (default 384, the same as the offline ONNX models, so they fit the same columns). */
  dimensions?: number;
}

/** 32-bit FNV-1a over the string's UTF-16 code units, with a seed mixed in first. */
function fnv1a(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  // Final avalanche (murmur3 fmix32), so nearby strings spread over the buckets.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

/** Feature weights: whole words count most, then word pairs, then trigrams of each word. */
const W_UNIGRAM = 1.0;
const W_BIGRAM = 0.7;
const W_TRIGRAM = 0.35;

export class HashingEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;

  constructor(opts: HashingEmbedderOptions = {}) {
    const dims = opts.dimensions ?? 384;
    if (!Number.isInteger(dims) || dims < 8) throw new Error(`HashingEmbedder: dimensions must be an integer >= 8, got ${dims}`);
    this.dimensions = dims;
    this.model = `hashing-ngrams-${dims}@1`;
  }

  /** Lowercased words: letters and digits (any script), with inner apostrophes, dots and hyphens dropped. */
  static words(text: string): string[] {
    return text
      .normalize('NFKD')
      .replace(/\p{Mn}/gu, '')
      .toLowerCase()
      .replace(/(?<=[\p{L}\p{N}])['’.-](?=[\p{L}\p{N}])/gu, '')
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w.length > 0);
  }

  private add(v: Float64Array, feature: string, weight: number): void {
    const h = fnv1a(feature, 0);
    const sign = fnv1a(feature, 0x9e3779b9) & 1 ? 1 : -1; // signed hashing: collisions cancel on average
    v[h % this.dimensions] += sign * weight;
  }

  embedOne(text: string): number[] {
    const v = new Float64Array(this.dimensions);
    const words = HashingEmbedder.words(text);
    for (let i = 0; i < words.length; i++) {
      const w = words[i];
      this.add(v, `w:${w}`, W_UNIGRAM);
      if (i + 1 < words.length) this.add(v, `b:${w} ${words[i + 1]}`, W_BIGRAM);
      const padded = `<${w}>`;
      const chars = Array.from(padded);
      for (let j = 0; j + 3 <= chars.length; j++) this.add(v, `c:${chars.slice(j, j + 3).join('')}`, W_TRIGRAM);
    }
    let norm = 0;
    for (let i = 0; i < v.length; i++) norm += v[i] * v[i];
    norm = Math.sqrt(norm);
    if (norm === 0) {
      // Empty or symbol-only text: a fixed unit vector, so the contract (unit length) holds.
      const out = new Array<number>(this.dimensions).fill(0);
      out[0] = 1;
      return out;
    }
    return Array.from(v, (x) => x / norm);
  }

  async embed(texts: string[]): Promise<number[][]> {
    return texts.map((t) => this.embedOne(t));
  }

  /** Lexical features are symmetric: a query embeds like any text. */
  embedQuery(texts: string[]): Promise<number[][]> {
    return this.embed(texts);
  }
}
