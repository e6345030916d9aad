import { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { GraphQLError } from 'graphql';
import { ApiErrorCode } from './errors';

/** What the transport logs about a refused request: one structured line, never the body. */
export type TransportLog = (fields: Record<string, unknown>, msg: string) => void;

/** The routes `/metrics` labels; anything else is `other`, so a scan cannot grow the label set. */
const ROUTES = ['/graphql', '/graphiql', '/mcp', '/health', '/metrics'] as const;

export function routeLabel(path: string): string {
  if (path === '/') return '/';
  return ROUTES.find((r) => path === r || path.startsWith(`${r}/`)) ?? 'other';
}

/** Answers like a GraphQL server: `{ errors: [{ message, extensions: { code } }] }` as JSON. */
export function sendErrors(res: Response, status: number, errors: ReadonlyArray<GraphQLError | { message: string; extensions: { code: string } }>): void {
  const body = errors.map((e) => (e instanceof GraphQLError ? e.toJSON() : e));
  res
    .status(status)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify({ errors: body }));
}

function describe(
  err: { type?: unknown; status?: unknown; statusCode?: unknown; message?: unknown },
  maxRequestBytes: number,
): { status: number; code: ApiErrorCode; message: string } {
  const status = Number(err.status ?? err.statusCode);
  switch (err.type) {
    case 'entity.too.large':
      return {
        status: 413,
        code: 'LIMIT_EXCEEDED',
        message: `the request body is larger than ${maxRequestBytes} bytes (MAX_REQUEST_BYTES): send smaller batches`,
      };
    case 'entity.parse.failed':
      return {
        status: 400,
        code: 'BAD_USER_INPUT',
        message: 'the request body is not valid JSON: send {"query": "...", "variables": {...}} with content-type application/json',
      };
    case 'charset.unsupported':
      return { status: 415, code: 'BAD_USER_INPUT', message: 'unsupported charset: send the body as UTF-8 (content-type: application/json; charset=utf-8)' };
    case 'encoding.unsupported':
      return { status: 415, code: 'BAD_USER_INPUT', message: 'unsupported content-encoding: send the body as identity, gzip, deflate or br' };
    case 'request.aborted':
      return { status: 400, code: 'BAD_USER_INPUT', message: 'the request was aborted before its body arrived' };
    default:
      if (Number.isInteger(status) && status >= 400 && status < 500) {
        // Body-parser wraps stream and decompression failures (a corrupt gzip body) as 400s.
        return {
          status,
          code: status === 413 ? 'LIMIT_EXCEEDED' : 'BAD_USER_INPUT',
          message: 'the request body could not be read (corrupt compression or an invalid length): send it again, uncompressed or correctly encoded',
        };
      }
      return { status: 500, code: 'INTERNAL_SERVER_ERROR', message: 'internal error: the service logged the details' };
  }
}

/**
 * The last handler of the app: every error reaches the client as GraphQL-style JSON with a
 * code and no internals (Express's HTML page with its stack trace is never served), and is
 * logged as one line with the request's method, path and the error's kind, never its body.
 */
export function jsonErrorHandler(maxRequestBytes: number, log: TransportLog): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) return next(err);
    const e = (err ?? {}) as { type?: unknown; status?: unknown; statusCode?: unknown; message?: unknown };
    const d = describe(e, maxRequestBytes);
    log(
      {
        status: d.status,
        code: d.code,
        kind: typeof e.type === 'string' ? e.type : undefined,
        method: req.method,
        path: req.originalUrl.split('?')[0],
        contentType: req.headers['content-type'],
        contentEncoding: req.headers['content-encoding'],
        contentLength: req.headers['content-length'],
        ...(d.status >= 500 ? { error: e.message } : {}),
      },
      'refused an HTTP request',
    );
    sendErrors(res, d.status, [{ message: d.message, extensions: { code: d.code } }]);
  };
}

/** JSON 404 for any path the service does not serve. */
export const notFound: RequestHandler = (req, res) => {
  sendErrors(res, 404, [
    {
      message: `no route ${req.method} ${req.originalUrl.split('?')[0]?.slice(0, 200)}: the API is POST /graphql (GraphiQL at /graphiql)`,
      extensions: { code: 'NOT_FOUND' },
    },
  ]);
};
