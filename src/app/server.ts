import http from 'node:http';
import { AddressInfo } from 'node:net';
import { ApolloServer, ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { expressMiddleware } from '@as-integrations/express5';
import { exactJsonBody, keepBodyTextWhenUnsafe } from '../api/exact-body';
import express, { RequestHandler } from 'express';
import { ExecutionArgs, GraphQLError, GraphQLSchema, validate } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocket, WebSocketServer } from 'ws';
import { AuthContext } from '../access/auth-context';
import { TokenRevocations } from '../access/token-revocations';
import { mcpHttpRouter } from '../mcp/mcp-http';
import { McpLimits } from '../mcp/tool-kit';
import { exploreArgumentError } from '../api/explore/explore.args';
import { recheckingAuth, RequestScope, scopeFor, Services } from '../scope/request-scope';
import { formatApiError } from '../api/errors';
import { graphiqlRouter } from '../api/graphiql';
import { jsonErrorHandler, notFound, routeLabel, sendErrors, TransportLog } from '../api/http-transport';
import { checkOperationLimits, QueryLimits } from '../api/limits';
import { AppMetrics } from '../api/metrics';
import { HealthSection } from './health';
import { healthEndpoint, metricsEndpoint } from './ops-endpoints';
import { OperationLabels, OTHER_OPERATION } from '../api/operation-label';
import { checkRequest, DEFAULT_REQUEST_BOUNDS, RequestBounds, RequestRefused } from '../api/request-bounds';
import { activeSpan, SpanStatusCode, startSpanAround } from '../platform/telemetry/tracing';

/** How long a stop waits for open HTTP requests (streams included) before closing their sockets. */
export const STOP_GRACE_MS = 1000;

export interface HttpServerDeps {
  host: string;
  port: number;
  schema: GraphQLSchema;
  services: Services;
  metrics: AppMetrics;
  limits: QueryLimits & { maxRequestBytes: number };
  /** Checked on the raw request before validation; DEFAULT_REQUEST_BOUNDS when not given. */
  bounds?: RequestBounds;
  /** How long a subscription may deliver on grants it has not re-checked (the backstop to `revocations`). */
  authRecheckMs: number;
  /** Idle keep-alive connections stay open this long (HTTP_KEEP_ALIVE_SECONDS); Node's own default is 5 s. */
  keepAliveMs?: number;
  /** Closes a graphql-ws socket the moment its token is revoked (NOTIFY) or expires (timer). */
  revocations?: TokenRevocations;
  /** The sections of /health (health.ts); 503 when one is not ok. */
  health: readonly HealthSection[];
  /** METRICS_TOKEN: when set, /metrics answers 401 without `Authorization: Bearer <it>`. */
  metricsToken?: string;
  /** Serve MCP (Streamable HTTP) at /mcp with these limits (the GraphQL API's). */
  mcp?: McpLimits;
  /** Host names /mcp accepts besides loopback and HOST (MCP_ALLOWED_HOSTS). */
  mcpAllowedHosts?: readonly string[];
  log: { info(msg: string): void; error(msg: string, err?: unknown): void; warn?: TransportLog };
}

export interface HttpServerHandle {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

function limitsPlugin(deps: HttpServerDeps, labels: OperationLabels): ApolloServerPlugin<RequestScope> {
  return {
    async requestDidStart() {
      const started = process.hrtime.bigint();
      let type = 'unknown';
      let label = OTHER_OPERATION;
      return {
        async didResolveOperation({ request, document, operation, schema }) {
          type = operation?.operation ?? 'unknown';
          // The label, never the client's own name: span names and attributes leave for a trace backend.
          label = labels.of(operation);
          activeSpan()?.updateName(`${type} ${label}`);
          activeSpan()?.setAttributes({ 'graphql.operation.type': type, 'graphql.operation.name': label });
          const err =
            checkOperationLimits(schema, document, request.variables, request.operationName, deps.limits) ??
            exploreArgumentError(schema, document, request.variables ?? {});
          // A request error, not a server fault: answered 400 like parse and validation failures.
          if (err) throw new GraphQLError(err.message, { extensions: { ...err.extensions, http: { status: 400 } } });
        },
        async willSendResponse({ response }) {
          const errors = response.body.kind === 'single' ? (response.body.singleResult.errors ?? []) : [];
          // `internal`: a fault of the service (the error-rate alert counts these), `error`: a refusal of the request.
          const outcome = errors.some((e) => e.extensions?.code === 'INTERNAL_SERVER_ERROR') ? 'internal' : errors.length > 0 ? 'error' : 'ok';
          deps.metrics.observeGraphql(type, label, outcome, Number(process.hrtime.bigint() - started) / 1e9);
        },
      };
    },
  };
}

/**
 * Tracing on: a server span per request, continuing the caller's W3C `traceparent` header when it
 * sends one; the GraphQL plugin renames it after the operation. Mounted after the body parser, so
 * the span's context is the one the resolvers (and the ingest they call) run in.
 */
function traceRequest(route: string): RequestHandler {
  return (req, res, next) => {
    const span = startSpanAround(`${req.method} ${route}`, { 'http.request.method': req.method, 'http.route': route }, req.headers, next);
    if (span)
      res.once('close', () => {
        span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      });
  };
}

/**
 * Runs before Apollo on every /graphql request: authenticates, then checks the raw request
 * (checkRequest) so that nothing expensive runs for a request that will be refused anyway.
 */
function guardRequest(deps: HttpServerDeps, bounds: RequestBounds): RequestHandler {
  return async (req, res, next) => {
    try {
      if (req.method !== 'POST' && req.method !== 'GET') return next();
      const auth = await deps.services.tokens.authenticate(req.headers.authorization);
      res.locals.auth = auth;
      const params: unknown = req.method === 'GET' ? req.query : req.body;
      if (params === null || typeof params !== 'object' || Array.isArray(params)) {
        const message = Array.isArray(params)
          ? 'batched requests are not supported: send one operation per request'
          : 'send a JSON object {"query": "...", "variables": {...}} with content-type application/json';
        return sendErrors(res, 400, [{ message, extensions: { code: 'BAD_USER_INPUT' } }]);
      }
      const p = params as Record<string, unknown>;
      const checked = checkRequest(deps.schema, { query: p.query, variables: p.variables, operationName: p.operationName }, auth, 'http', deps.limits, bounds);
      if (checked instanceof RequestRefused) {
        if (checked.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
        return sendErrors(res, checked.status, [checked.error]);
      }
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** Starts the HTTP server: /graphql (HTTP + graphql-ws), /graphiql, /health, /metrics. */
export async function startHttpServer(deps: HttpServerDeps): Promise<HttpServerHandle> {
  const app = express();
  app.disable('x-powered-by');
  const httpServer = http.createServer(app);
  // Node closes an idle keep-alive socket after 5 s. A client pool whose own idle timer fires late
  // (a busy event loop) can still write on that socket and gets "other side closed". Keeping idle
  // sockets longer than clients and proxies do (their usual 60 s) closes that window; the headers
  // timeout must stay above it or Node cuts a slow request's headers first.
  const keepAliveMs = deps.keepAliveMs ?? 65_000;
  httpServer.keepAliveTimeout = keepAliveMs;
  httpServer.headersTimeout = Math.max(60_000, keepAliveMs + 1_000);
  const formatError = (formatted: Parameters<typeof formatApiError>[0], error: unknown) =>
    formatApiError(formatted, error, (msg, err) => deps.log.error(msg, err));

  const bounds = deps.bounds ?? DEFAULT_REQUEST_BOUNDS;
  const warn: TransportLog = deps.log.warn ?? ((fields, msg) => deps.log.error(msg, fields));
  /**
   * Issue 24: a revoked or expired token's socket is closed at once (4403), ending every
   * subscription on it; nothing more is sent after the close. One watch per socket and token.
   */
  const watchToken = (extra: { socket: WebSocket; watching?: { tokenId: string; stop: () => void } }, auth: AuthContext): void => {
    const principal = auth.principal;
    if (!deps.revocations || !principal || extra.watching?.tokenId === principal.tokenId) return;
    extra.watching?.stop();
    const stop = deps.revocations.watch(principal, (end) => {
      if (extra.socket.readyState === extra.socket.OPEN)
        extra.socket.close(4403, end === 'revoked' ? 'UNAUTHENTICATED: the API token was revoked' : 'UNAUTHENTICATED: the API token expired');
    });
    extra.watching = { tokenId: principal.tokenId, stop };
  };
  const wsServer = new WebSocketServer({ server: httpServer, path: '/graphql', maxPayload: 1024 * 1024 });
  const wsCleanup = useServer<Record<string, unknown>, { authorization?: string; watching?: { tokenId: string; stop: () => void } }>(
    {
      schema: deps.schema,
      onConnect: async (ctx) => {
        const authorization = ctx.connectionParams?.authorization ?? ctx.connectionParams?.Authorization;
        ctx.extra.authorization = typeof authorization === 'string' ? authorization : undefined;
        return true;
      },
      onSubscribe: async (ctx, _id, payload): Promise<ExecutionArgs | readonly GraphQLError[]> => {
        // Every operation re-verifies the connection's token, as an HTTP request does: a token
        // revoked or expired since the socket opened is UNAUTHENTICATED from then on.
        const auth = await deps.services.tokens.authenticate(ctx.extra.authorization);
        const checked = checkRequest(deps.schema, payload, auth, 'ws', deps.limits, bounds);
        if (checked instanceof RequestRefused) return [checked.error];
        const { document, variables, operationName } = checked;
        const errors = validate(deps.schema, document);
        if (errors.length > 0) return errors;
        const limitError =
          checkOperationLimits(deps.schema, document, variables, operationName, deps.limits) ?? exploreArgumentError(deps.schema, document, variables);
        if (limitError) return [limitError];
        watchToken(ctx.extra, auth);
        const contextValue = scopeFor(deps.services, auth, recheckingAuth(deps.services, ctx.extra.authorization, auth, deps.authRecheckMs));
        return { schema: deps.schema, document, variableValues: variables, operationName, contextValue };
      },
      onClose: (ctx) => ctx.extra.watching?.stop(),
      onNext: (_ctx, _id, _payload, _args, result) => (result.errors ? { ...result, errors: result.errors.map((e) => formatError(e.toJSON(), e)) } : undefined),
      onError: (_ctx, _id, _payload, errors) => errors.map((e) => formatError(e.toJSON(), e)),
    },
    wsServer,
  );

  const apollo = new ApolloServer<RequestScope>({
    schema: deps.schema,
    introspection: true,
    includeStacktraceInErrorResponses: false,
    // Every document passes checkRequest first, so none may arrive as a bare hash.
    persistedQueries: false,
    // The process's signal handler stops the app (this server included) and then the stores, in
    // order; Apollo's own handler would stop only itself and re-send the signal.
    stopOnTerminationSignals: false,
    formatError,
    plugins: [
      // Open requests get STOP_GRACE_MS to finish, then their sockets are closed. Apollo's default
      // of 10 s was what a stop waited for whenever a client held a stream open (an MCP client's
      // GET event stream, GraphiQL), so stopping took 11-13 s while nothing was happening.
      ApolloServerPluginDrainHttpServer({ httpServer, stopGracePeriodMillis: STOP_GRACE_MS }),
      {
        async serverWillStart() {
          return {
            async drainServer() {
              await wsCleanup.dispose();
            },
          };
        },
      },
      limitsPlugin(deps, new OperationLabels(deps.schema)),
    ],
  });
  await apollo.start();

  app.use((req, res, next) => {
    // Labelled before routing: a mounted router rewrites req.path ('/graphql' → '/').
    const route = routeLabel(req.path);
    res.on('finish', () => deps.metrics.httpRequests.inc({ route, status: String(res.statusCode) }));
    next();
  });
  app.get('/', (_req, res) => res.redirect('/graphiql'));
  app.use(graphiqlRouter());
  app.get('/health', healthEndpoint(deps.health));
  app.get('/metrics', metricsEndpoint(deps.metrics.registry, deps.metricsToken));
  app.use(
    '/graphql',
    express.json({ limit: deps.limits.maxRequestBytes, verify: keepBodyTextWhenUnsafe }),
    exactJsonBody,
    traceRequest('/graphql'),
    guardRequest(deps, bounds),
    expressMiddleware(apollo, {
      context: async ({ res }) => scopeFor(deps.services, res.locals.auth as AuthContext),
    }),
  );
  const mcp = deps.mcp
    ? mcpHttpRouter({
        services: deps.services,
        limits: deps.mcp,
        log: (m, e) => deps.log.error(m, e),
        warn,
        bindHost: deps.host,
        allowedHosts: deps.mcpAllowedHosts,
        maxRequestBytes: deps.limits.maxRequestBytes,
        revocations: deps.revocations,
      })
    : undefined;
  if (mcp) app.use('/mcp', traceRequest('/mcp'), mcp.router);
  app.use(notFound);
  app.use(jsonErrorHandler(deps.limits.maxRequestBytes, warn));

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(deps.port, deps.host, () => resolve());
  });
  const port = (httpServer.address() as AddressInfo).port;
  return {
    url: `http://${deps.host}:${port}`,
    port,
    async close() {
      await mcp?.close();
      await apollo.stop();
    },
  };
}
