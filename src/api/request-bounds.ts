import { DocumentNode, FragmentDefinitionNode, GraphQLError, GraphQLSchema, Kind, OperationDefinitionNode, parse, SelectionSetNode, visit } from 'graphql';
import { AuthContext } from '../access/auth-context';
import { apiError } from './errors';
import { measureInputs } from './input-measure';
import { QueryLimits, selectOperation } from './limits';

/**
 * Bounds checked on the raw request, before graphql-js validates or coerces anything: each is
 * linear in the request and stops at its bound, so no request can stall the process before it
 * is authenticated and priced.
 */
export interface RequestBounds {
  /** UTF-8 bytes of the `query` text. */
  readonly maxDocumentBytes: number;
  /** Lexical tokens of the document (graphql's `parse({ maxTokens })`). */
  readonly maxTokens: number;
  /** Aliased fields in the document. */
  readonly maxAliases: number;
  /** Field selections in the document (fragments counted once; their reuse is priced by complexity). */
  readonly maxFields: number;
  /** Input objects plus list elements across all arguments and variables (JSON payloads not walked). */
  readonly maxInputNodes: number;
  /** Input objects inside generated `where` filters (every one is a predicate evaluated per node). */
  readonly maxFilterObjects: number;
}

export const DEFAULT_REQUEST_BOUNDS: RequestBounds = Object.freeze({
  maxDocumentBytes: 256 * 1024,
  maxTokens: 20_000,
  maxAliases: 100,
  maxFields: 1_000,
  maxInputNodes: 10_000,
  maxFilterObjects: 100,
});

/** An operation as it arrives over HTTP (body or query string) or graphql-ws (subscribe payload). */
export interface OperationRequest {
  readonly query: unknown;
  readonly variables?: unknown;
  readonly operationName?: unknown;
}

export interface CheckedRequest {
  readonly document: DocumentNode;
  readonly operation: OperationDefinitionNode | undefined;
  readonly variables: Record<string, unknown>;
  readonly operationName: string | undefined;
}

/** A request refused before validation, with the HTTP status it is answered with. */
export class RequestRefused {
  constructor(
    readonly error: GraphQLError,
    readonly status: number,
  ) {}
}

const refuse = (status: number, ...args: Parameters<typeof apiError>) => new RequestRefused(apiError(...args), status);
const INTROSPECTION_ROOTS = new Set(['__schema', '__type', '__typename']);

/** Root field names the operation selects, through fragments and inline fragments. */
function rootFields(operation: OperationDefinitionNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>): Set<string> {
  const out = new Set<string>();
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode) => {
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) out.add(sel.name.value);
      else if (sel.kind === Kind.INLINE_FRAGMENT) walk(sel.selectionSet);
      else if (!seen.has(sel.name.value)) {
        seen.add(sel.name.value);
        const frag = fragments.get(sel.name.value);
        if (frag) walk(frag.selectionSet);
      }
    }
  };
  walk(operation.selectionSet);
  return out;
}

function parseBounded(query: string, bounds: RequestBounds): DocumentNode | RequestRefused {
  try {
    return parse(query, { maxTokens: bounds.maxTokens });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (/contains more th(?:an|at) \d+ tokens/.test(message)) {
      return refuse(400, 'LIMIT_EXCEEDED', `the document has more than ${bounds.maxTokens} tokens: send fewer fields and pass values as variables`, {
        limit: 'tokens',
        max: bounds.maxTokens,
      });
    }
    const syntax = err instanceof GraphQLError ? err : undefined;
    return new RequestRefused(
      new GraphQLError(message, { nodes: undefined, source: syntax?.source, positions: syntax?.positions, extensions: { code: 'GRAPHQL_PARSE_FAILED' } }),
      400,
    );
  }
}

function countFields(document: DocumentNode): { fields: number; aliases: number } {
  let fields = 0;
  let aliases = 0;
  visit(document, {
    Field(node) {
      fields++;
      if (node.alias) aliases++;
    },
  });
  return { fields, aliases };
}

/** The request's variables as an object, or a refusal (a GET sends them as a JSON string). */
function variablesOf(raw: unknown): Record<string, unknown> | RequestRefused {
  let v = raw;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v) as unknown;
    } catch {
      return refuse(400, 'BAD_USER_INPUT', '`variables` is not valid JSON: send an object');
    }
  }
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) return refuse(400, 'BAD_USER_INPUT', '`variables` must be a JSON object mapping variable names to values');
  return v as Record<string, unknown>;
}

/**
 * Checks a request before graphql-js validates it: text size, tokens, fields and aliases,
 * authentication (an anonymous caller may only introspect), the transport, then the width and
 * depth of its inputs. Returns the parsed request, or why it is refused.
 */
export function checkRequest(
  schema: GraphQLSchema,
  request: OperationRequest,
  auth: AuthContext,
  transport: 'http' | 'ws',
  limits: QueryLimits,
  bounds: RequestBounds = DEFAULT_REQUEST_BOUNDS,
): CheckedRequest | RequestRefused {
  const { query, operationName } = request;
  if (typeof query !== 'string' || query.trim() === '') return refuse(400, 'BAD_USER_INPUT', 'send the operation as a non-empty string in `query`');
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string')
    return refuse(400, 'BAD_USER_INPUT', '`operationName` must be a string');
  const bytes = Buffer.byteLength(query, 'utf8');
  if (bytes > bounds.maxDocumentBytes) {
    return refuse(
      400,
      'LIMIT_EXCEEDED',
      `the document is ${bytes} bytes, above the limit of ${bounds.maxDocumentBytes}: send fewer fields and pass large values as variables`,
      { limit: 'documentBytes', max: bounds.maxDocumentBytes },
    );
  }
  const document = parseBounded(query, bounds);
  if (document instanceof RequestRefused) return document;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  const operation = selectOperation(document, operationName);
  const candidates = operation ? [operation] : document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (!auth.isAuthenticated && candidates.some((op) => [...rootFields(op, fragments)].some((f) => !INTROSPECTION_ROOTS.has(f)))) {
    return refuse(
      401,
      'UNAUTHENTICATED',
      'missing or invalid API token: send "Authorization: Bearer <token>" (graphql-ws: connectionParams.authorization); without one only introspection is served',
    );
  }
  if (transport === 'http' && operation?.operation === 'subscription') {
    return refuse(400, 'BAD_USER_INPUT', 'subscriptions are served over graphql-ws only: open a WebSocket to /graphql (protocol graphql-transport-ws)');
  }
  const { fields, aliases } = countFields(document);
  if (aliases > bounds.maxAliases)
    return refuse(400, 'LIMIT_EXCEEDED', `the document has ${aliases} aliases, above the limit of ${bounds.maxAliases}: split it into several requests`, {
      limit: 'aliases',
      max: bounds.maxAliases,
    });
  if (fields > bounds.maxFields)
    return refuse(
      400,
      'LIMIT_EXCEEDED',
      `the document selects ${fields} fields, above the limit of ${bounds.maxFields}: use fragments or split it into several requests`,
      { limit: 'fields', max: bounds.maxFields },
    );
  const variables = variablesOf(request.variables);
  if (variables instanceof RequestRefused) return variables;
  const measure = measureInputs(schema, document, operation, variables, { maxNodes: bounds.maxInputNodes, maxFilterObjects: bounds.maxFilterObjects });
  if (measure.nodes > bounds.maxInputNodes) {
    return refuse(
      400,
      'LIMIT_EXCEEDED',
      `the arguments hold more than ${bounds.maxInputNodes} input objects and list elements: send smaller batches or shorter lists`,
      { limit: 'inputNodes', max: bounds.maxInputNodes },
    );
  }
  if (measure.filterObjects > bounds.maxFilterObjects) {
    return refuse(
      400,
      'LIMIT_EXCEEDED',
      `the where filters hold more than ${bounds.maxFilterObjects} conditions: use fewer OR/AND branches (an "in" list tests many values at once)`,
      { limit: 'filterObjects', max: bounds.maxFilterObjects },
    );
  }
  if (measure.depth > limits.maxInputDepth) {
    return refuse(
      400,
      'LIMIT_EXCEEDED',
      `argument nesting ${measure.depth} exceeds the limit of ${limits.maxInputDepth}: use fewer nested filters (each relationship hop in a where filter adds two levels)`,
      { limit: 'inputDepth', max: limits.maxInputDepth },
    );
  }
  return { document, operation, variables, operationName: operationName ?? undefined };
}
