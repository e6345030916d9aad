/** The codes the service puts in `extensions.code` (see the API's error reference). */
export type ServerErrorCode =
  | 'BAD_USER_INPUT'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'LIMIT_EXCEEDED'
  | 'INTERNAL_SERVER_ERROR'
  | 'GRAPHQL_VALIDATION_FAILED'
  | 'GRAPHQL_PARSE_FAILED'
  | 'BAD_REQUEST';

/**
 * Every `code` a MemoryClientError can carry: the service's codes, plus `NETWORK_ERROR` (the
 * service could not be reached, or the connection dropped before an answer), `HTTP_ERROR` (an
 * answer that is not GraphQL, e.g. a proxy's 502) and `UNKNOWN` (a GraphQL error without a code).
 */
export type MemoryErrorCode = ServerErrorCode | 'NETWORK_ERROR' | 'HTTP_ERROR' | 'UNKNOWN';

/** One GraphQL error as the service returns it. */
export interface GraphQLErrorPayload {
  message: string;
  path?: ReadonlyArray<string | number>;
  extensions?: Record<string, unknown>;
}

const SERVER_CODES: ReadonlySet<string> = new Set<ServerErrorCode>([
  'BAD_USER_INPUT',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'CONFLICT',
  'LIMIT_EXCEEDED',
  'INTERNAL_SERVER_ERROR',
  'GRAPHQL_VALIDATION_FAILED',
  'GRAPHQL_PARSE_FAILED',
  'BAD_REQUEST',
]);

// A brand instead of `instanceof` alone: an app that loads both the ESM and the CJS build (the
// dual-package hazard) gets two classes, and MemoryClientError.is() still recognises both.
const BRAND = Symbol.for('@medallion-memory/client.MemoryClientError');

/** Options for MemoryClientError beyond its message and code. */
export interface MemoryClientErrorDetails {
  errors?: ReadonlyArray<GraphQLErrorPayload>;
  status?: number;
  /** The service's `Retry-After`, in milliseconds. */
  retryAfterMs?: number;
  cause?: unknown;
}

/**
 * What every MemoryClient call throws. `code` is the service's `extensions.code` of the first
 * error (or a client-side code), `errors` every GraphQL error as sent, `status` the HTTP status
 * when there was an answer. `retryable` says whether sending the same request again may succeed.
 */
export class MemoryClientError extends Error {
  readonly code: MemoryErrorCode;
  readonly errors: ReadonlyArray<GraphQLErrorPayload>;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, code: MemoryErrorCode, details: MemoryClientErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'MemoryClientError';
    this.code = code;
    this.errors = details.errors ?? [];
    this.status = details.status;
    this.retryAfterMs = details.retryAfterMs;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** `extensions.reason` of the first error when the service gave one (e.g. `BATCH_TOO_LARGE`). */
  get reason(): string | undefined {
    const reason = this.errors[0]?.extensions?.reason;
    return typeof reason === 'string' ? reason : undefined;
  }

  /** Transient failures only: the network, a gateway or overload status, or a server-side fault. */
  get retryable(): boolean {
    if (this.code === 'NETWORK_ERROR' || this.code === 'INTERNAL_SERVER_ERROR') return true;
    return this.code === 'HTTP_ERROR' && this.status !== undefined && (this.status === 408 || this.status === 429 || this.status >= 500);
  }

  /** True for a MemoryClientError from either build of this package. */
  static is(err: unknown): err is MemoryClientError {
    return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
  }
}

/** The error for a GraphQL answer that carries `errors`, with the first error's code. */
export function fromGraphQLErrors(errors: ReadonlyArray<GraphQLErrorPayload>, status: number | undefined): MemoryClientError {
  const first = errors[0];
  const raw = first?.extensions?.code;
  const code: MemoryErrorCode = typeof raw === 'string' && SERVER_CODES.has(raw) ? (raw as ServerErrorCode) : 'UNKNOWN';
  return new MemoryClientError(first?.message ?? 'the service answered with errors', code, { errors, status });
}
