import { GraphQLError, GraphQLFormattedError } from 'graphql';
import { AppErrorKind, AppException } from '../common/app-exception';
import { assertUnreachable } from '../common/assert-unreachable';

/** The stable codes clients read in `extensions.code`. */
export type ApiErrorCode = 'BAD_USER_INPUT' | 'UNAUTHENTICATED' | 'FORBIDDEN' | 'NOT_FOUND' | 'CONFLICT' | 'LIMIT_EXCEEDED' | 'INTERNAL_SERVER_ERROR';

/** The GraphQL code of each kind of domain error (every layer's exception names its kind). */
export function apiCodeOfKind(kind: AppErrorKind): ApiErrorCode {
  switch (kind) {
    case AppErrorKind.BAD_INPUT:
      return 'BAD_USER_INPUT';
    case AppErrorKind.UNAUTHENTICATED:
      return 'UNAUTHENTICATED';
    case AppErrorKind.FORBIDDEN:
      return 'FORBIDDEN';
    case AppErrorKind.NOT_FOUND:
      return 'NOT_FOUND';
    case AppErrorKind.CONFLICT:
      return 'CONFLICT';
    case AppErrorKind.LIMIT_EXCEEDED:
      return 'LIMIT_EXCEEDED';
    default:
      return assertUnreachable(kind);
  }
}

/** Maps a domain exception to its API code and reason (the layer's own code); undefined for anything unexpected. */
export function apiCodeOf(err: unknown): { code: ApiErrorCode; reason: string } | undefined {
  return err instanceof AppException ? { code: apiCodeOfKind(err.kind), reason: err.code } : undefined;
}

/** Neo4j's codes for a transaction that outlived the timeout the service set on it. */
const NEO4J_TIMEOUT_CODES = /^Neo\.ClientError\.Transaction\.TransactionTimedOut/;

/** The first error in an `originalError` chain (delegation wraps errors more than once) that matches. */
function findInChain(error: unknown, test: (e: Error & { code?: unknown }) => boolean): (Error & { code?: unknown }) | undefined {
  for (let e: unknown = error, hops = 0; e instanceof Error && hops < 10; e = (e as { originalError?: unknown }).originalError, hops++) {
    if (test(e)) return e;
  }
  return undefined;
}

export function apiError(code: ApiErrorCode, message: string, extra: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code, ...extra } });
}

const PASS_THROUGH = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'OPERATION_RESOLUTION_FAILURE',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'CONFLICT',
  'LIMIT_EXCEEDED',
]);

/**
 * The one place errors leave the service: domain exceptions get their code and message;
 * GraphQL's own request errors pass through; anything else becomes INTERNAL_SERVER_ERROR with
 * no internals shown (it is logged instead).
 */
export function formatApiError(formatted: GraphQLFormattedError, error: unknown, log: (msg: string, err: unknown) => void): GraphQLFormattedError {
  const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
  const mapped = apiCodeOf(original);
  if (mapped) {
    return { ...formatted, message: (original as Error).message, extensions: { code: mapped.code, reason: mapped.reason } };
  }
  if (findInChain(error, (e) => typeof e.code === 'string' && NEO4J_TIMEOUT_CODES.test(e.code))) {
    return {
      message: 'the graph query did not finish within its time limit (EXPLORE_TIMEOUT_MS): ask for smaller pages, fewer nested levels or narrower filters',
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: 'LIMIT_EXCEEDED', reason: 'QUERY_TIMEOUT' },
    };
  }
  const code = formatted.extensions?.code;
  if (typeof code === 'string' && PASS_THROUGH.has(code)) {
    const { stacktrace: _stack, ...extensions } = formatted.extensions ?? {};
    return { ...formatted, extensions };
  }
  if (original instanceof GraphQLError && original.extensions?.code === undefined && !original.originalError) {
    // Validation and coercion errors thrown by graphql-js itself carry no code.
    return { ...formatted, extensions: { code: 'BAD_USER_INPUT' } };
  }
  log('unexpected error', original);
  return {
    message: 'internal error: the service logged the details',
    locations: formatted.locations,
    path: formatted.path,
    extensions: { code: 'INTERNAL_SERVER_ERROR' },
  };
}
