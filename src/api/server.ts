import http from 'node:http';
import { AddressInfo } from 'node:net';
import { ApolloServer, ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { expressMiddleware } from '@as-integrations/express5';
import express from 'express';
import { ExecutionArgs, GraphQLError, GraphQLSchema, parse, validate } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { AuthContext } from '../access/auth-context';
import { createLoaders, createRequestContext, recheckingAuth, RequestContext, Services } from './context';
import { formatApiError } from './errors';
import { graphiqlRouter } from './graphiql';
import { checkOperationLimits, QueryLimits } from './limits';
import { AppMetrics } from './metrics';

export interface HealthCheck {
  name: string;
  check(): Promise<void>;
}

export interface HttpServerDeps {
  host: string;
  port: number;
  schema: GraphQLSchema;
  services: Services;
  metrics: AppMetrics;
  limits: QueryLimits & { maxRequestBytes: number };
  /** How long a subscription may deliver on grants it has not re-checked. */
  authRecheckMs: number;
  health: readonly HealthCheck[];
  log: { info(msg: string): void; error(msg: string, err?: unknown): void };
}

export interface HttpServerHandle {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

function limitsPlugin(deps: HttpServerDeps): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      const started = process.hrtime.bigint();
      let type = 'unknown';
      return {
        async didResolveOperation({ request, document, operation, schema }) {
          type = operation?.operation ?? 'unknown';
          const err = checkOperationLimits(schema, document, request.variables, request.operationName, deps.limits);
          if (err) throw err;
        },
        async willSendResponse({ response }) {
          const failed = response.body.kind === 'single' && (response.body.singleResult.errors?.length ?? 0) > 0;
          deps.metrics.graphqlOperations.inc({ type, outcome: failed ? 'error' : 'ok' });
          deps.metrics.graphqlSeconds.observe({ type }, Number(process.hrtime.bigint() - started) / 1e9);
        },
      };
    },
  };
}

/** Starts the HTTP server: /graphql (HTTP + graphql-ws), /graphiql, /health, /metrics. */
export async function startHttpServer(deps: HttpServerDeps): Promise<HttpServerHandle> {
  const app = express();
  app.disable('x-powered-by');
  const httpServer = http.createServer(app);
  const formatError = (formatted: Parameters<typeof formatApiError>[0], error: unknown) =>
    formatApiError(formatted, error, (msg, err) => deps.log.error(msg, err));

  const wsServer = new WebSocketServer({ server: httpServer, path: '/graphql', maxPayload: 1024 * 1024 });
  const wsCleanup = useServer<Record<string, unknown>, { auth?: AuthContext; authorization?: string }>(
    {
      schema: deps.schema,
      onConnect: async (ctx) => {
        const authorization = ctx.connectionParams?.authorization ?? ctx.connectionParams?.Authorization;
        ctx.extra.authorization = typeof authorization === 'string' ? authorization : undefined;
        ctx.extra.auth = await deps.services.tokens.authenticate(ctx.extra.authorization);
        return true;
      },
      onSubscribe: (ctx, _id, payload): ExecutionArgs | readonly GraphQLError[] => {
        let document;
        try {
          document = parse(payload.query);
        } catch (err) {
          return [err as GraphQLError];
        }
        const errors = validate(deps.schema, document);
        if (errors.length > 0) return errors;
        const limitError = checkOperationLimits(deps.schema, document, payload.variables ?? undefined, payload.operationName, deps.limits);
        if (limitError) return [limitError];
        const auth = ctx.extra.auth ?? AuthContext.anonymous();
        const contextValue: RequestContext = {
          auth,
          loaders: createLoaders(deps.services),
          services: deps.services,
          currentAuth: recheckingAuth(deps.services, ctx.extra.authorization, auth, deps.authRecheckMs),
        };
        return { schema: deps.schema, document, variableValues: payload.variables, operationName: payload.operationName, contextValue };
      },
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors ? { ...result, errors: result.errors.map((e) => formatError(e.toJSON(), e)) } : undefined,
      onError: (_ctx, _id, _payload, errors) => errors.map((e) => formatError(e.toJSON(), e)),
    },
    wsServer,
  );

  const apollo = new ApolloServer<RequestContext>({
    schema: deps.schema,
    introspection: true,
    includeStacktraceInErrorResponses: false,
    formatError,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      { async serverWillStart() { return { async drainServer() { await wsCleanup.dispose(); } }; } },
      limitsPlugin(deps),
    ],
  });
  await apollo.start();

  app.use((req, res, next) => {
    res.on('finish', () => deps.metrics.httpRequests.inc({ route: req.path.startsWith('/graphiql') ? '/graphiql' : req.path, status: String(res.statusCode) }));
    next();
  });
  app.get('/', (_req, res) => res.redirect('/graphiql'));
  app.use(graphiqlRouter());
  app.get('/health', async (_req, res) => {
    const results = await Promise.all(
      deps.health.map(async (h) => {
        try {
          await h.check();
          return [h.name, { ok: true }] as const;
        } catch (err) {
          return [h.name, { ok: false, error: err instanceof Error ? err.message : String(err) }] as const;
        }
      }),
    );
    const ok = results.every(([, r]) => r.ok);
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'degraded', ...Object.fromEntries(results) });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });
  app.use(
    '/graphql',
    express.json({ limit: deps.limits.maxRequestBytes }),
    expressMiddleware(apollo, {
      context: async ({ req }) => createRequestContext(deps.services, req.headers.authorization),
    }),
  );

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(deps.port, deps.host, () => resolve());
  });
  const port = (httpServer.address() as AddressInfo).port;
  return {
    url: `http://${deps.host}:${port}`,
    port,
    async close() {
      await apollo.stop();
    },
  };
}
