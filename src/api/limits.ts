import {
  ArgumentNode,
  DocumentNode,
  FragmentDefinitionNode,
  getNamedType,
  GraphQLError,
  GraphQLInputType,
  GraphQLSchema,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  Kind,
  OperationDefinitionNode,
  SelectionSetNode,
  TypeInfo,
  ValueNode,
  visit,
  visitWithTypeInfo,
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

/**
 * Nesting depth of an argument value (an object is one level; lists add none), variables included.
 * Iterative, so a list of 100k elements or a deeply nested value cannot overflow the stack. With
 * the expected input type known, a scalar is a leaf however it nests: a JSON scalar (an event's
 * rawPayload) is not a filter, and its depth is checked per item (MAX_PAYLOAD_DEPTH).
 */
function valueDepth(root: ValueNode, rootType: GraphQLInputType | undefined, variables: Record<string, unknown>): number {
  let max = 0;
  const stack: Array<{ node?: ValueNode; value?: unknown; type: GraphQLInputType | undefined; depth: number }> = [{ node: root, type: rootType, depth: 0 }];
  while (stack.length > 0) {
    const { node, value, type: wrapped, depth } = stack.pop() as (typeof stack)[number];
    const type = wrapped && isNonNullType(wrapped) ? wrapped.ofType : wrapped;
    if (node?.kind === Kind.VARIABLE) {
      stack.push({ value: variables[node.name.value], type, depth });
      continue;
    }
    if (type && isLeafType(type)) continue;
    const element = type && isListType(type) ? (type.ofType as GraphQLInputType) : undefined;
    const fieldType = (name: string) => (type && isInputObjectType(type) ? type.getFields()[name]?.type : undefined);
    if (node?.kind === Kind.LIST) {
      for (const v of node.values) stack.push({ node: v, type: element, depth });
    } else if (node?.kind === Kind.OBJECT) {
      max = Math.max(max, depth + 1);
      for (const f of node.fields) stack.push({ node: f.value, type: fieldType(f.name.value), depth: depth + 1 });
    } else if (!node && Array.isArray(value)) {
      for (const v of value) stack.push({ value: v, type: element, depth });
    } else if (!node && value !== null && typeof value === 'object') {
      max = Math.max(max, depth + 1);
      for (const [k, v] of Object.entries(value)) stack.push({ value: v, type: fieldType(k), depth: depth + 1 });
    }
  }
  return max;
}

/** The deepest argument value anywhere in the document (every operation and fragment); `schema` makes scalars leaves. */
export function operationInputDepth(document: DocumentNode, variables: Record<string, unknown> = {}, schema?: GraphQLSchema): number {
  let max = 0;
  const typeInfo = schema ? new TypeInfo(schema) : undefined;
  const visitor = {
    Argument(node: ArgumentNode) {
      max = Math.max(max, valueDepth(node.value, typeInfo?.getInputType() ?? undefined, variables));
    },
  };
  visit(document, typeInfo ? visitWithTypeInfo(typeInfo, visitor) : visitor);
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
  const inputDepth = operationInputDepth(document, variables, schema);
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
