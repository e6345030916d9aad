import os from 'node:os';
import { hostHeaderValidation, originValidation } from '@modelcontextprotocol/express';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  AuthInfo,
  bearerAuthChallengeResponse,
  createMcpHandler,
  OAuthError,
  OAuthErrorCode,
  OAuthTokenVerifier,
  verifyBearerToken,
} from '@modelcontextprotocol/server';
import express, { Router } from 'express';
import { AuthContext } from '../access/auth-context';
import { TokenRevocations } from '../access/token-revocations';
import { TokenService } from '../access/token.service';
import { buildMcpServer, McpServerDeps } from './mcp-server';

/**
 * Whether the SDK's `onerror` is about what the client sent (malformed JSON-RPC, wrong headers or
 * method, a request the protocol refuses): answered 4xx by the SDK, logged without a stack.
 */
export function isMcpClientError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'number' && code >= -32700 && code <= -32600) return true;
  const message = err instanceof Error ? err.message : String(err);
  // `Rejected inbound request (<cell>): …`: the SDK's words for a body or header it refuses (answered 400).
  return /^(Rejected inbound request|Parse error|Invalid Request|Invalid params|Method not found|Not Acceptable|Unsupported Media Type|Method not allowed|Bad Request|Conflict|Session not found|Invalid event ID|Payload Too Large|Request body)/i.test(
    message,
  );
}

/**
 * Logs an SDK error: a client's mistake as code + message at warn (no stack: it is not a fault of
 * the service, and a scan would otherwise fill the log with stacks); anything else with its stack.
 */
export function mcpErrorLogger(log: (msg: string, err: unknown) => void, warn: (fields: Record<string, unknown>, msg: string) => void): (err: unknown) => void {
  return (err) => {
    if (!isMcpClientError(err)) return log('MCP request failed', err);
    const code = (err as { code?: unknown } | null)?.code;
    const message = (err instanceof Error ? err.message : String(err)).slice(0, 300);
    warn({ code: typeof code === 'number' || typeof code === 'string' ? code : 'CLIENT_ERROR', message }, 'MCP request refused');
  };
}

export interface McpHttpDeps extends McpServerDeps {
  /** The address the service listens on (HOST): decides which Host and Origin headers are accepted. */
  readonly bindHost: string;
  /** Further host names clients reach the service by (MCP_ALLOWED_HOSTS), e.g. behind a proxy or DNS name. */
  readonly allowedHosts?: readonly string[];
  readonly maxRequestBytes: number;
  /** Where client errors go (code and message only); unset: `log`. */
  readonly warn?: (fields: Record<string, unknown>, msg: string) => void;
  /** Ends a response still open when its token is revoked or expires (NOTIFY, timer): issue 24. */
  readonly revocations?: TokenRevocations;
}

export interface McpHttpHandle {
  readonly router: Router;
  close(): Promise<void>;
}

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];
const bracket = (h: string) => (h.includes(':') && !h.startsWith('[') ? `[${h}]` : h);

/**
 * The host names a request may carry in `Host` (and a browser in `Origin`): DNS-rebinding
 * protection. A page on evil.example that resolves its name to this machine still sends
 * `Host: evil.example`, which is refused. Loopback names always; a specific bind address
 * (HOST) too; a wildcard bind also the machine's name and interface addresses; and the names an
 * operator lists (MCP_ALLOWED_HOSTS) for a service reached through a DNS name or a proxy.
 */
export function allowedHostnames(bindHost: string, extra: readonly string[] = []): string[] {
  const wildcard = bindHost === '0.0.0.0' || bindHost === '::' || bindHost === '';
  const own = wildcard
    ? [
        os.hostname(),
        ...Object.values(os.networkInterfaces())
          .flat()
          .flatMap((i) => (i ? [bracket(i.address)] : [])),
      ]
    : [bracket(bindHost)];
  return [...new Set([...LOOPBACK, ...[...own, ...extra.map(bracket)].map((h) => h.toLowerCase())])];
}

/** The capabilities a token holds on some namespace: its OAuth-style scopes. */
const scopesOf = (auth: AuthContext): string[] => [...new Set(auth.principal?.grants.flatMap((g) => g.capabilities) ?? [])];

/**
 * Bearer verification by the service's own token table, once per HTTP request: a revoked or
 * expired token is refused (401) on the very next request. The verified AuthContext rides in
 * `extra`; `expiresAt` is required by the SDK and covers this request only.
 */
export function tokenVerifier(tokens: TokenService): OAuthTokenVerifier {
  return {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const auth = await tokens.authenticate(token);
      if (!auth.principal) {
        throw new OAuthError(OAuthErrorCode.InvalidToken, 'missing, invalid, revoked or expired API token: send "Authorization: Bearer <token>"');
      }
      return {
        token,
        clientId: auth.principal.name,
        scopes: scopesOf(auth),
        expiresAt: Math.floor(Date.now() / 1000) + 60,
        extra: { auth },
      };
    },
  };
}

/** JSON-RPC's server-defined error range: the code of a refused token in a 401's JSON-RPC body. */
export const UNAUTHENTICATED_RPC_CODE = -32001;

/**
 * Bearer authentication for /mcp: the token verified on every request (`tokenVerifier`), its
 * AuthContext in `req.auth` for the SDK. A token the service cannot use (missing, unknown,
 * revoked, expired, not a bearer token) is the one refusal that is an HTTP status: 401 with the
 * RFC 6750 challenge (`WWW-Authenticate: Bearer error="invalid_token", error_description=…`) and,
 * as the body, a JSON-RPC error whose message is the reason. The SDKs surface that body: the
 * Python SDK turns a non-2xx status into `-32603 "Server returned an error response"` unless the
 * body is a JSON-RPC error, and the TypeScript SDK puts the body in its error's message. Every
 * other refusal is a tool error (tool-kit.ts `requireToolAccess`).
 */
export function bearerAuth(tokens: TokenService): express.RequestHandler {
  const verifier = tokenVerifier(tokens);
  return (req, res, next) => {
    verifyBearerToken(req.headers.authorization, { verifier }).then(
      (auth) => {
        (req as { auth?: AuthInfo }).auth = auth;
        next();
      },
      (err: unknown) => {
        const answer = bearerAuthChallengeResponse(err);
        const challenge = answer.headers.get('WWW-Authenticate');
        if (challenge !== null) res.setHeader('WWW-Authenticate', challenge);
        const reason = err instanceof OAuthError ? err.message : 'the API token could not be verified';
        // The SDK's own words for a missing or malformed header ("Missing Authorization header") say what, not how.
        const message = reason.includes('Authorization: Bearer') ? reason : `${reason}: send "Authorization: Bearer <token>" with an API token`;
        res
          .status(answer.status)
          .type('application/json')
          .send(
            JSON.stringify({
              jsonrpc: '2.0',
              id: null,
              error: { code: UNAUTHENTICATED_RPC_CODE, message: `UNAUTHENTICATED: ${message}`, data: { code: 'UNAUTHENTICATED', reason: 'invalid_token' } },
            }),
          );
      },
    );
  };
}

/**
 * Every request is verified on arrival, but a response can outlive its token: a
 * `subscriptions/listen` SSE stream (2026-07-28 clients) stays open for as long as the client
 * likes, and a slow tool call streams. Each response is watched while it is open; when its token
 * is revoked (the NOTIFY of `access.revoke_token`, in every API process) or reaches `expiresAt`,
 * the response is destroyed: the client sees the stream end at once, the SDK's abort signal
 * tears the exchange down, and the client's next request is refused 401 by the verifier.
 */
export function endOnRevocation(revocations: TokenRevocations): express.RequestHandler {
  return (req, res, next) => {
    const principal = authOf((req as { auth?: AuthInfo }).auth).principal;
    if (principal) {
      const stop = revocations.watch(principal, () => res.destroy());
      res.once('close', stop);
    }
    next();
  };
}

/** The AuthContext the verifier attached; anonymous (nothing allowed) if none. */
export function authOf(authInfo: AuthInfo | undefined): AuthContext {
  const auth = authInfo?.extra?.auth;
  return auth instanceof AuthContext ? auth : AuthContext.anonymous();
}

/**
 * `/mcp`: MCP Streamable HTTP (both the 2026-07-28 per-request protocol and stateless 2025
 * clients), behind Host/Origin validation and bearer authentication. One server instance per
 * request, built for that request's verified caller.
 */
export function mcpHttpRouter(deps: McpHttpDeps): McpHttpHandle {
  const hosts = allowedHostnames(deps.bindHost, deps.allowedHosts);
  const onerror = mcpErrorLogger(deps.log, deps.warn ?? ((fields, msg) => deps.log(msg, fields)));
  const handler = createMcpHandler(({ authInfo }) => buildMcpServer(deps, authOf(authInfo)), { onerror, maxRequestBodySize: deps.maxRequestBytes });
  const node = toNodeHandler(handler, { onerror, maxRequestBodySize: deps.maxRequestBytes });
  const router = express.Router();
  router.use(hostHeaderValidation(hosts), originValidation(hosts));
  router.use(bearerAuth(deps.services.tokens));
  if (deps.revocations) router.use(endOnRevocation(deps.revocations));
  // The SDK reads the body itself (bounded), so malformed JSON gets a JSON-RPC parse error.
  router.all('/', (req, res) => void node(req, res));
  return { router, close: () => handler.close() };
}
