import {
  DocumentNode,
  FragmentDefinitionNode,
  GraphQLError,
  GraphQLSchema,
  Kind,
  OperationDefinitionNode,
  SelectionSetNode,
} from 'graphql';
import { ComplexityEstimator, getComplexity, simpleEstimator } from 'graphql-query-complexity';
import { apiError } from './errors';

export interface QueryLimits {
  maxDepth: number;
  maxComplexity: number;
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

/** A list field costs its children times the page size it asks for (`first` / `limit`). */
export const paginationEstimator: ComplexityEstimator = ({ args, childComplexity }) => {
  const size = typeof args.first === 'number' ? args.first : typeof args.limit === 'number' ? args.limit : undefined;
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
