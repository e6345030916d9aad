import { Client, SdkHttpError, StreamableHTTPClientTransport, Tool, UnauthorizedError } from '@modelcontextprotocol/client';
import { ProtocolError, Server } from '@modelcontextprotocol/server';
import { serveStdio, StdioServerHandle } from '@modelcontextprotocol/server/stdio';
import { MCP_SERVER_INFO } from './server-info';
import { errorResult } from './tool-error';
import type { ApiErrorCode } from '../api/errors';

export interface McpStdioOptions {
  /** The running service, e.g. http://127.0.0.1:4000 (its /mcp endpoint is used). */
  readonly url: string;
  /** MEDALLION_TOKEN; unset: every request answers that it is not set. */
  readonly token: string | undefined;
  /** stderr only: stdout is the protocol channel. */
  readonly log: (msg: string) => void;
}

/** A problem the person configuring the MCP client can fix (printed without a stack). */
export class McpStdioError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpStdioError';
  }
}

/** A 401 from the service: the SDK reports it as UnauthorizedError (token-only auth provider) or SdkHttpError. */
function isUnauthorized(err: unknown): boolean {
  return err instanceof UnauthorizedError || (err instanceof SdkHttpError && err.status === 401);
}

/** Why fetch could not reach the service (ECONNREFUSED, ENOTFOUND, ...), if that is what failed. */
function unreachable(err: unknown): string | undefined {
  let fetchFailed = false;
  let detail: string | undefined;
  // The SDK wraps fetch's TypeError in `data.cause`; fetch wraps the socket error in `cause`.
  for (let e: unknown = err, hops = 0; e instanceof Error && hops < 6; hops++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
    if (e.name === 'TypeError' && /fetch failed/.test(e.message)) fetchFailed = true;
    else if (fetchFailed) detail ??= e.message;
    e = (e as { cause?: unknown }).cause ?? (e as { data?: { cause?: unknown } }).data?.cause;
  }
  return fetchFailed ? (detail ?? 'fetch failed') : undefined;
}

/** Why the service cannot be used with this configuration: a person can act on `message`. */
interface Unusable {
  readonly code: ApiErrorCode;
  readonly message: string;
}

/** JSON-RPC's server-defined error range: a list the service refused to give (the reason is the message). */
const UPSTREAM_REFUSED = -32001;

/**
 * The running service's /mcp, connected on first use and again after a failure: a desktop client
 * usually starts `medallion mcp` before (or without) the service, with a token that may be wrong.
 */
class Upstream {
  private connected: Promise<{ client: Client; tools: Tool[] }> | undefined;

  constructor(
    private readonly endpoint: URL,
    private readonly token: string | undefined,
  ) {}

  /** The connected client and its tools, or why there is none (then the next call tries again). */
  async get(): Promise<{ client: Client; tools: Tool[] } | Unusable> {
    this.connected ??= this.connect();
    try {
      return await this.connected;
    } catch (err) {
      this.connected = undefined;
      return this.unusable(err);
    }
  }

  /** Forgets the connection after a refusal: a revoked token stays refused, a restarted service is found again. */
  reset(): void {
    const c = this.connected;
    this.connected = undefined;
    void c?.then(({ client }) => client.close()).catch(() => undefined);
  }

  close(): Promise<void> {
    const c = this.connected;
    this.connected = undefined;
    return c ? c.then(({ client }) => client.close()).catch(() => undefined) : Promise.resolve();
  }

  private async connect(): Promise<{ client: Client; tools: Tool[] }> {
    if (!this.token) throw new McpStdioError('MEDALLION_TOKEN is not set');
    const token = this.token;
    const client = new Client({ name: 'medallion-mcp-stdio', version: MCP_SERVER_INFO.version }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(this.endpoint, { authProvider: { token: async () => token } }));
    return { client, tools: (await client.listTools()).tools };
  }

  unusable(err: unknown): Unusable {
    const at = this.endpoint.href;
    if (err instanceof McpStdioError)
      return {
        code: 'UNAUTHENTICATED',
        message: "MEDALLION_TOKEN is not set: put an API token (createToken, with the capabilities the agent needs) in the MCP client's env",
      };
    if (isUnauthorized(err))
      return {
        code: 'UNAUTHENTICATED',
        message: `the service at ${at} refused MEDALLION_TOKEN (401): it is missing, invalid, revoked or expired; set a valid, unrevoked API token in the MCP client's env`,
      };
    const code = unreachable(err);
    if (code) return { code: 'INTERNAL_SERVER_ERROR', message: `cannot reach the service at ${at} (${code}): start it (npm start) or pass --url` };
    return { code: 'INTERNAL_SERVER_ERROR', message: `calling ${at} failed: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/**
 * `medallion mcp`: an MCP server on stdin/stdout for desktop clients, forwarding every request to
 * the running service's `/mcp` with MEDALLION_TOKEN. The service stays the only place tokens are
 * verified (per call: a revoked token stops working at once) and tools run; this process holds no
 * store connection, so it starts in well under a second and can run next to `medallion serve`.
 *
 * It serves even when the service cannot be used (no token, a refused token, the service down):
 * the reason goes to stderr, `tools/list` answers a JSON-RPC error whose message is the reason,
 * and every tool call an `isError` result `CODE: reason`, so the client shows why instead of
 * "Connection closed". Each request tries again, so starting the service later is enough.
 */
export async function runMcpStdio(opts: McpStdioOptions): Promise<StdioServerHandle> {
  const upstream = new Upstream(new URL('/mcp', opts.url), opts.token);
  const first = await upstream.get();
  if ('code' in first) opts.log(`medallion mcp: ${first.message} (serving on stdio anyway: every request answers with this reason until it is fixed)`);
  else opts.log(`medallion mcp: serving ${first.tools.length} tools from ${new URL('/mcp', opts.url).href} on stdio`);
  const instructions = 'code' in first ? undefined : first.client.getInstructions();

  const handle = serveStdio(() => {
    const server = new Server({ ...MCP_SERVER_INFO }, { capabilities: { tools: {} }, ...(instructions ? { instructions } : {}) });
    server.setRequestHandler('tools/list', async () => {
      const up = await upstream.get();
      if ('code' in up) throw new ProtocolError(UPSTREAM_REFUSED, `${up.code}: ${up.message}`, { code: up.code });
      return { tools: up.tools };
    });
    server.setRequestHandler('tools/call', async (request) => {
      const up = await upstream.get();
      if ('code' in up) return errorResult(up.code, up.message);
      try {
        const result = await up.client.callTool({ name: request.params.name, arguments: request.params.arguments });
        const schema = up.tools.find((t) => t.name === request.params.name)?.outputSchema as Record<string, unknown> | undefined;
        return server.projectCallToolResult(result, schema);
      } catch (err) {
        // A refused token (revoked mid-session) or a service gone: the reason, and a fresh connection next time.
        if (!isUnauthorized(err) && !unreachable(err)) throw err;
        upstream.reset();
        const why = upstream.unusable(err);
        return errorResult(why.code, why.message);
      }
    });
    return server;
  });
  return {
    close: async () => {
      await handle.close();
      await upstream.close();
    },
  };
}
