import {
  DocumentNode,
  FragmentDefinitionNode,
  getNamedType,
  GraphQLError,
  GraphQLSchema,
  Kind,
  OperationDefinitionNode,
  SelectionSetNode,
  ValueNode,
  visit,
} from 'graphql';
import { ComplexityEstimator, getComplexity, simpleEstimator } from 'graphql-query-complexity';
import { EXPLORE_DEFAULT_PAGE, EXPLORE_PREFIX } from '../graph/explore/explore.typedefs';
import { apiError } from './errors';

export interface QueryLimits {
  maxDepth: number;
  maxComplexity: number;
  /** Deepest nesting of an argument value: generated `where` filters nest one level per relationship hop. */
  maxInputDepth: number;
}

/** Nesting depth of an argument value (an object is one level; lists add none), variables included. */
function valueDepth(value: ValueNode, variables: Record<string, unknown>): number {
  switch (value.kind) {
    case Kind.OBJECT:
      return 1 + Math.max(0, ...value.fields.map((f) => valueDepth(f.value, variables)));
    case Kind.LIST:
      return Math.max(0, ...value.values.map((v) => valueDepth(v, variables)));
    case Kind.VARIABLE:
      return jsonDepth(variables[value.name.value]);
    default:
      return 0;
  }
}

function jsonDepth(value: unknown, level = 0): number {
  if (level > 1000) return Number.POSITIVE_INFINITY;
  if (Array.isArray(value)) return Math.max(0, ...value.map((v) => jsonDepth(v, level + 1)));
  if (value !== null && typeof value === 'object') return 1 + Math.max(0, ...Object.values(value).map((v) => jsonDepth(v, level + 1)));
  return 0;
}

/** The deepest argument value anywhere in the document (every operation and fragment). */
export function operationInputDepth(document: DocumentNode, variables: Record<string, unknown> = {}): number {
  let max = 0;
  visit(document, {
    Argument(node) {
      max = Math.max(max, valueDepth(node.value, variables));
    },
  });
  return max;
}

/** Depth of the deepest field path in the operation, following fragments (cycles count as too deep). */
export function operationDepth(document: DocumentNode, operationName?: string | null): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  let operation: OperationDefinitionNode | undefined;
  for (const def of document.definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    if (def.kind === Kind.OPERATION_DEFINITION && (!operationName || def.name?.value === operationName)) operation ??= def;
  }
  if (!operation) return 0;
  const visit = (set: SelectionSetNode, depth: number, seen: ReadonlySet<string>): number => {
    let max = depth;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        if (sel.name.value.startsWith('__')) continue; // introspection is bounded by the schema
        max = Math.max(max, sel.selectionSet ? visit(sel.selectionSet, depth + 1, seen) : depth + 1);
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        max = Math.max(max, visit(sel.selectionSet, depth, seen));
      } else {
        const name = sel.name.value;
        const frag = fragments.get(name);
        if (!frag) continue;
        if (seen.has(name)) return Number.POSITIVE_INFINITY;
        max = Math.max(max, visit(frag.selectionSet, depth, new Set([...seen, name])));
      }
    }
    return max;
  };
  return visit(operation.selectionSet, 0, new Set());
}

/**
 * A list field costs its children times the page size it asks for (`first` / `limit`). The
 * generated exploration lists (`Graph…`) that ask for none return their `@limit` default, so
 * they cost that many: open nested traversals are priced at what they would really load.
 */
export const paginationEstimator: ComplexityEstimator = ({ args, field, childComplexity }) => {
  let size = typeof args.first === 'number' ? args.first : typeof args.limit === 'number' ? args.limit : undefined;
  const paginated = field.args.some((a) => a.name === 'first' || a.name === 'limit');
  if (size === undefined && paginated && getNamedType(field.type).name.startsWith(EXPLORE_PREFIX)) size = EXPLORE_DEFAULT_PAGE;
  return size === undefined ? undefined : 1 + childComplexity * Math.max(1, size);
};

/** LIMIT_EXCEEDED when an operation is too deep or too costly; undefined when it may run. */
export function checkOperationLimits(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName: string | null | undefined,
  limits: QueryLimits,
): GraphQLError | undefined {
  const depth = operationDepth(document, operationName);
  if (depth > limits.maxDepth) {
    return apiError('LIMIT_EXCEEDED', `query depth ${Number.isFinite(depth) ? depth : '∞ (fragment cycle)'} exceeds the limit of ${limits.maxDepth}: ask for fewer nested levels`, { limit: 'depth', max: limits.maxDepth });
  }
  const inputDepth = operationInputDepth(document, variables);
  if (inputDepth > limits.maxInputDepth) {
    return apiError('LIMIT_EXCEEDED', `argument nesting ${Number.isFinite(inputDepth) ? inputDepth : '∞'} exceeds the limit of ${limits.maxInputDepth}: use fewer nested filters (each relationship hop in a where filter adds two levels)`, { limit: 'inputDepth', max: limits.maxInputDepth });
  }
  let complexity: number;
  try {
    complexity = getComplexity({
      schema,
      query: document,
      variables: variables ?? {},
      operationName: operationName ?? undefined,
      estimators: [paginationEstimator, simpleEstimator({ defaultComplexity: 1 })],
    });
  } catch {
    return undefined; // invalid operations are reported by validation
  }
  if (complexity > limits.maxComplexity) {
    return apiError('LIMIT_EXCEEDED', `query complexity ${complexity} exceeds the limit of ${limits.maxComplexity}: request smaller pages or fewer nested fields`, { limit: 'complexity', max: limits.maxComplexity, complexity });
  }
  return undefined;
}
