import os from 'node:os';
import { hostHeaderValidation, originValidation, requireBearerAuth } from '@modelcontextprotocol/express';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { AuthInfo, createMcpHandler, OAuthError, OAuthErrorCode, OAuthTokenVerifier } from '@modelcontextprotocol/server';
import express, { Router } from 'express';
import { AuthContext } from '../access/auth-context';
import { TokenService } from '../access/token.service';
import { buildMcpServer, McpServerDeps } from './mcp-server';

export interface McpHttpDeps extends McpServerDeps {
  /** The address the service listens on (HOST): decides which Host and Origin headers are accepted. */
  readonly bindHost: string;
  /** Further host names clients reach the service by (MCP_ALLOWED_HOSTS), e.g. behind a proxy or DNS name. */
  readonly allowedHosts?: readonly string[];
  readonly maxRequestBytes: number;
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
  const handler = createMcpHandler(({ authInfo }) => buildMcpServer(deps, authOf(authInfo)), {
    onerror: (err) => deps.log('MCP request failed', err),
    maxRequestBodySize: deps.maxRequestBytes,
  });
  const node = toNodeHandler(handler, { onerror: (err) => deps.log('MCP request failed', err), maxRequestBodySize: deps.maxRequestBytes });
  const router = express.Router();
  router.use(hostHeaderValidation(hosts), originValidation(hosts));
  router.use(requireBearerAuth({ verifier: tokenVerifier(deps.services.tokens) }));
  // The SDK reads the body itself (bounded), so malformed JSON gets a JSON-RPC parse error.
  router.all('/', (req, res) => void node(req, res));
  return { router, close: () => handler.close() };
}
