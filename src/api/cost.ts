import { getNamedType, getNullableType, isCompositeType, isListType } from 'graphql';
import { ComplexityEstimator } from 'graphql-query-complexity';
import { NESTED_LIST_MAX } from '../common/limits';
import { EXPLORE_DEFAULT_PAGE, EXPLORE_MAX_PAGE, EXPLORE_PREFIX } from './explore/explore.typedefs';

/** Real maximum sizes of lists without a page size, where they differ from NESTED_LIST_MAX. */
const LIST_SIZE: Readonly<Record<string, number>> = {
  // At most MAX_GRANTS (token.service.ts) grants per token.
  'Viewer.grants': 100,
  'ApiToken.grants': 100,
  // Stored with the decision: CANDIDATE_LIMIT (at most 100) candidates.
  'JudgeDecision.candidates': 100,
  // ProvenanceService limits: 500 entities, 2,000 relationships per subgraph.
  'Subgraph.entities': 500,
  'Subgraph.relationships': 2000,
  // GoldReadService limits (gold/reads/gold-read.service.ts): RELATED_CONTEXT_MAX_ENTITIES / _RELATIONSHIPS, RELATED_CONTEXT_FACTS,
  // PREFERENCES_MAX, REPLACED_MAX.
  'GoldSubgraph.entities': 100,
  'GoldSubgraph.relationships': 200,
  'GoldSubgraph.facts': 100,
  'GoldEntity.preferences': 20,
  'Preference.replaced': 10,
  'GraphConsistencyReport.counts': 10,
};

/** Page size a root list uses when the caller gives none (the services' defaults). */
const DEFAULT_PAGE: Readonly<Record<string, number>> = {
  'Query.events': 50,
  'Query.facts': 50,
  'Query.entities': 50,
  'Query.changes': 100,
  // EventService.maxConversationEvents: `conversation` without `limit` returns up to 10,000.
  'Query.conversation': 10_000,
  'Query.searchMemory': 10,
};

/**
 * Work a field does before any of its children: search embeds the query and runs vector, keyword
 * and graph channels; traversals walk Neo4j; the consistency report reads a whole namespace.
 */
const BASE_COST: Readonly<Record<string, number>> = {
  // One search costs ~100 ms of embedding and 8 index queries: about 1.5 % of the default budget
  // (MAX_QUERY_COMPLEXITY 200000), so one operation holds some 60 searches, not thousands.
  'Query.searchMemory': 3000,
  'Query.provenance': 1000,
  'Query.derivedFrom': 500,
  'Query.neighbourhood': 2000,
  'Query.shortestPath': 2000,
  'Query.relatedContext': 2000,
  'Query.changes': 200,
  'Query.graphConsistency': 20000,
  'Query.conversation': 100,
  'Mutation.rebuildGraph': 1000,
  'Mutation.rebuildSilver': 1000,
  'Mutation.reembed': 1000,
  'Mutation.retryDeadLetters': 500,
  'Mutation.createToken': 200,
  'Mutation.ingestEvent': 50,
};

/**
 * Each key of a `sort` argument (the generated exploration fields: `sort: [GraphFactSort!]`, each
 * item naming one or more fields). Neo4j orders by every key before it pages, so a long list made
 * each request take 3.5 to 4.2 s while it cost nothing here. At this price the default budget
 * (MAX_QUERY_COMPLEXITY 200000) holds at most 100 keys in one operation; a real sort uses 1 to 3.
 */
export const SORT_KEY_COST = 2000;

/** The number of keys a `sort` value names (leaves of its objects), counted up to `cap`. */
export function sortKeys(value: unknown, cap = 1_000_000): number {
  let n = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && n < cap) {
    const v = stack.pop();
    if (v === null || v === undefined) continue;
    if (Array.isArray(v)) stack.push(...v);
    else if (typeof v === 'object') stack.push(...Object.values(v as Record<string, unknown>));
    else n += 1;
  }
  return n;
}

/** The whole schema described once; its shape is bounded separately (introspectionShapeError). */
export const INTROSPECTION_SCHEMA_COST = 2000;

function pageSize(key: string, args: Record<string, unknown>, isExplore: boolean, paginated: boolean): number | undefined {
  const asked = typeof args.first === 'number' ? args.first : typeof args.limit === 'number' ? args.limit : undefined;
  // @limit(max) clamps what the generated exploration lists return.
  if (asked !== undefined) return isExplore ? Math.min(asked, EXPLORE_MAX_PAGE) : asked;
  if (key === 'Mutation.ingestEvents') return Array.isArray(args.input) ? args.input.length : 1;
  if (DEFAULT_PAGE[key] !== undefined) return DEFAULT_PAGE[key];
  if (paginated && isExplore) return EXPLORE_DEFAULT_PAGE;
  return undefined;
}

/**
 * Prices every field by the work it causes: a list costs its children times the most items it
 * can return (the page asked for, the service's default page, or the nested cap), plus the base
 * cost of the field itself. Introspection lists cost their children once (their shape is bounded
 * by `introspectionShapeError`); `__schema` costs a flat INTROSPECTION_SCHEMA_COST.
 */
export const costEstimator: ComplexityEstimator = ({ type, field, args, childComplexity }) => {
  if (field.name === '__schema') return INTROSPECTION_SCHEMA_COST;
  if (type.name.startsWith('__') || field.name.startsWith('__')) return 1 + childComplexity;
  const key = `${type.name}.${field.name}`;
  const base = (BASE_COST[key] ?? 0) + SORT_KEY_COST * sortKeys(args.sort);
  const named = getNamedType(field.type);
  const isList = isListType(getNullableType(field.type));
  const paginated = field.args.some((a) => a.name === 'first' || a.name === 'limit');
  const isExplore = named.name.startsWith(EXPLORE_PREFIX);
  // A connection's edges are its page: the connection field already multiplied by the page size.
  if (field.name === 'edges' && type.name.endsWith('Connection')) return 1 + childComplexity;
  let size = pageSize(key, args, isExplore, paginated);
  if (size === undefined && isList && isCompositeType(named)) size = LIST_SIZE[key] ?? NESTED_LIST_MAX;
  if (size === undefined) return 1 + base + childComplexity;
  return 1 + base + childComplexity * Math.max(1, Math.min(size, Number.MAX_SAFE_INTEGER));
};
