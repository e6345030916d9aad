import { Fact } from '../silver/silver.types';

/** The retrieval channels of memory search. */
export type SearchChannel = 'vector' | 'keyword' | 'graph';

/** Reciprocal-rank-fusion constant (Cormack et al. 2009; graphiti and Elasticsearch use 60 too). */
export const RRF_K = 60;

export interface RankedId {
  id: string;
}

export interface FusedHit {
  id: string;
  /** Sum over the channels that found it of 1 / (RRF_K + rank), rank 1-based. */
  score: number;
  channels: SearchChannel[];
}

/**
 * Reciprocal rank fusion: every channel contributes 1/(k + rank) for each fact it ranked, so a fact
 * several channels agree on rises, and scores of different scales (cosine, BM25) never mix.
 * Ties break on the best single rank, then on id, so results are deterministic.
 */
export function fuseByReciprocalRank(lists: Partial<Record<SearchChannel, readonly RankedId[]>>, k = RRF_K): FusedHit[] {
  const acc = new Map<string, FusedHit & { best: number }>();
  for (const channel of ['vector', 'keyword', 'graph'] as const) {
    const list = lists[channel] ?? [];
    const seen = new Set<string>();
    list.forEach((item, i) => {
      if (seen.has(item.id)) return;
      seen.add(item.id);
      const hit = acc.get(item.id) ?? { id: item.id, score: 0, channels: [], best: Number.POSITIVE_INFINITY };
      hit.score += 1 / (k + i + 1);
      hit.channels.push(channel);
      hit.best = Math.min(hit.best, i + 1);
      acc.set(item.id, hit);
    });
  }
  return [...acc.values()]
    .sort((a, b) => b.score - a.score || a.best - b.best || a.id.localeCompare(b.id))
    .map(({ best: _b, ...hit }) => hit);
}

/** Lucene's reserved characters (the classic query parser), escaped with a backslash. */
const LUCENE_SPECIAL = /[+\-&|!(){}[\]^"~*?:\\/]/g;

export function escapeLucene(term: string): string {
  return term.replace(LUCENE_SPECIAL, (c) => `\\${c}`);
}

/**
 * A safe Lucene query for free text: its words (letters and digits, lowercased so AND/OR/NOT are
 * never operators), escaped, de-duplicated, at most `maxTerms`, ORed. Null when no word is left.
 */
export function toLuceneQuery(text: string, maxTerms = 32): string | null {
  const words = text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  const terms = [...new Set(words)].slice(0, maxTerms).map(escapeLucene);
  return terms.length > 0 ? terms.join(' ') : null;
}

export interface SearchFilterInput {
  factTypes?: readonly string[] | null;
  entityId?: string | null;
  minImportance?: number | null;
  includeSuperseded?: boolean | null;
}

/**
 * The same filter search applies in Cypher, on a Postgres row: hits are re-checked against the
 * current Silver state, which may be ahead of the projection. Without asOf: current facts (not
 * superseded: validTo null, not retired) unless includeSuperseded. With asOf T: facts true in the
 * world at T (validFrom <= T < validTo) and still believed (retiredAt null) unless includeSuperseded.
 */
export function matchesSearchFilter(f: Fact, namespace: string, filter: SearchFilterInput, asOf: Date | null): boolean {
  if (f.namespace !== namespace) return false;
  if (filter.factTypes && filter.factTypes.length > 0 && !filter.factTypes.includes(f.factType)) return false;
  if (filter.entityId && f.subjectEntityId !== filter.entityId && f.objectEntityId !== filter.entityId) return false;
  if (filter.minImportance !== null && filter.minImportance !== undefined && !(f.importance >= filter.minImportance)) return false;
  const includeSuperseded = filter.includeSuperseded ?? false;
  if (asOf) {
    if (f.validFrom.getTime() > asOf.getTime()) return false;
    if (f.validTo && f.validTo.getTime() <= asOf.getTime()) return false;
    return includeSuperseded || f.retiredAt === null;
  }
  return includeSuperseded || (f.validTo === null && f.retiredAt === null);
}
