import { DocumentNode, FragmentDefinitionNode, getVariableValues, GraphQLError, GraphQLSchema, Kind, OperationDefinitionNode, SelectionSetNode } from 'graphql';
import { getComplexity } from 'graphql-query-complexity';
import { costEstimator } from './cost';
import { apiError } from './errors';

export interface QueryLimits {
  maxDepth: number;
  maxComplexity: number;
  /** Deepest nesting of an argument value: generated `where` filters nest one level per relationship hop. */
  maxInputDepth: number;
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

/** Introspection lists that expand to one entry per type, field or value of the schema. */
const EXPANDING = new Set(['types', 'fields', 'inputFields', 'enumValues', 'interfaces', 'possibleTypes', 'directives']);
/** The standard introspection query nests two expanding lists (types → fields) and one `args`. */
const MAX_EXPANDING = 2;
const MAX_ARGS = 1;

/**
 * LIMIT_EXCEEDED when an introspection selection nests more than the standard query does
 * (`__schema { types { fields { type { fields … } } } }` grows with the schema to a power).
 */
export function introspectionShapeError(document: DocumentNode, operationName?: string | null): GraphQLError | undefined {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  const operation = selectOperation(document, operationName);
  if (!operation) return undefined;
  let bad = false;
  const walk = (set: SelectionSetNode, inside: boolean, expanding: number, args: number, seen: ReadonlySet<string>): void => {
    for (const sel of set.selections) {
      if (bad) return;
      if (sel.kind === Kind.FIELD) {
        const name = sel.name.value;
        const enters = inside || name === '__schema' || name === '__type';
        const e = expanding + (inside && EXPANDING.has(name) ? 1 : 0);
        const a = args + (inside && name === 'args' ? 1 : 0);
        if (e > MAX_EXPANDING || a > MAX_ARGS) bad = true;
        else if (sel.selectionSet) walk(sel.selectionSet, enters, e, a, seen);
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        walk(sel.selectionSet, inside, expanding, args, seen);
      } else {
        const frag = fragments.get(sel.name.value);
        if (frag && !seen.has(sel.name.value)) walk(frag.selectionSet, inside, expanding, args, new Set([...seen, sel.name.value]));
      }
    }
  };
  walk(operation.selectionSet, false, 0, 0, new Set());
  if (!bad) return undefined;
  return apiError(
    'LIMIT_EXCEEDED',
    `introspection nests deeper than the standard introspection query (at most ${MAX_EXPANDING} of ${[...EXPANDING].join('/')} and ${MAX_ARGS} "args" on one path): ask for the schema once and follow type names`,
    { limit: 'introspection' },
  );
}

/** The operation graphql-js will run: the named one, or the only one. */
export function selectOperation(document: DocumentNode, operationName?: string | null): OperationDefinitionNode | undefined {
  const ops = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (operationName) return ops.find((o) => o.name?.value === operationName);
  return ops.length === 1 ? ops[0] : undefined;
}

/** Coercion errors built before a request is refused: graphql-js's own bound in execution. */
const VARIABLE_ERRORS_MAX = 50;

/** The message graphql-query-complexity throws when an operation has more nodes than it will evaluate. */
const TOO_MANY_NODES = /maximum allowed number of nodes/;

/** The operation's cost; an operation whose cost cannot be computed is refused, never let through. */
function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown>,
  operationName: string | null | undefined,
  limits: QueryLimits,
): number | GraphQLError {
  // Variables that cannot be coerced are refused first, at the first bad value and with at most
  // as many errors as execution builds: graphql-query-complexity's coercion has no bound and
  // builds an error (with a printout of the item) for every bad element, 0.1 s of the event loop
  // for 500 bad events and ten times that for a list at the input bound. (Valid variables are
  // coerced again by the pricing: ~7 ms per 500 events; the library takes no coerced values.)
  const operation = selectOperation(document, operationName);
  const coerced = getVariableValues(schema, operation?.variableDefinitions ?? [], variables, { maxErrors: VARIABLE_ERRORS_MAX });
  const first = coerced.errors?.[0];
  if (first) return apiError('BAD_USER_INPUT', first.message);
  try {
    return getComplexity({ schema, query: document, variables, operationName: operationName ?? undefined, estimators: [costEstimator] });
  } catch (err) {
    if (err instanceof GraphQLError && TOO_MANY_NODES.test(err.message)) {
      return apiError('LIMIT_EXCEEDED', `the operation has too many fields to price (fragments included, at most 10,000): ask for fewer fields or split it`, {
        limit: 'complexity',
        max: limits.maxComplexity,
      });
    }
    if (err instanceof GraphQLError) {
      // Argument values that cannot be coerced: the same error execution would give.
      return apiError('BAD_USER_INPUT', err.message);
    }
    return apiError('LIMIT_EXCEEDED', `the cost of this operation could not be computed, so it is refused: simplify it (fewer fragments, plain arguments)`, {
      limit: 'complexity',
      max: limits.maxComplexity,
    });
  }
}

/** LIMIT_EXCEEDED when a validated operation is too deep or too costly; undefined when it may run. */
export function checkOperationLimits(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName: string | null | undefined,
  limits: QueryLimits,
): GraphQLError | undefined {
  const depth = operationDepth(document, operationName);
  if (depth > limits.maxDepth) {
    return apiError(
      'LIMIT_EXCEEDED',
      `query depth ${Number.isFinite(depth) ? depth : '∞ (fragment cycle)'} exceeds the limit of ${limits.maxDepth}: ask for fewer nested levels`,
      { limit: 'depth', max: limits.maxDepth },
    );
  }
  const shape = introspectionShapeError(document, operationName);
  if (shape) return shape;
  const cost = operationCost(schema, document, variables ?? {}, operationName, limits);
  if (cost instanceof GraphQLError) return cost;
  if (cost > limits.maxComplexity) {
    return apiError(
      'LIMIT_EXCEEDED',
      `query complexity ${cost} exceeds the limit of ${limits.maxComplexity}: request smaller pages (first/limit), fewer aliases or fewer nested lists`,
      { limit: 'complexity', max: limits.maxComplexity, complexity: cost },
    );
  }
  return undefined;
}
