import { Client, InsufficientScopeError, SdkHttpError, StreamableHTTPClientTransport, Tool, UnauthorizedError } from '@modelcontextprotocol/client';
import { CallToolResult, Server } from '@modelcontextprotocol/server';
import { serveStdio, StdioServerHandle } from '@modelcontextprotocol/server/stdio';
import { MCP_SERVER_INFO } from './server-info';
import { errorResult } from './tool-error';

export interface McpStdioOptions {
  /** The running service, e.g. http://127.0.0.1:4000 (its /mcp endpoint is used). */
  readonly url: string;
  readonly token: string;
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

/** Turns a refused forwarded call into the tool error the model reads (stdio has no HTTP status). */
function forwardedError(err: unknown): CallToolResult {
  if (err instanceof InsufficientScopeError) {
    const scope = err.requiredScope ? ` (needs "${err.requiredScope}")` : '';
    return errorResult('FORBIDDEN', `${err.errorDescription ?? 'the token lacks the capability this call needs'}${scope}`);
  }
  if (isUnauthorized(err)) return errorResult('UNAUTHENTICATED', 'the service refused MEDALLION_TOKEN: it is missing, invalid, revoked or expired');
  throw err;
}

/**
 * `medallion mcp`: an MCP server on stdin/stdout for desktop clients, forwarding every request to
 * the running service's `/mcp` with MEDALLION_TOKEN. The service stays the only place tokens are
 * verified (per call: a revoked token stops working at once) and tools run; this process holds no
 * store connection, so it starts in well under a second and can run next to `medallion serve`.
 */
export async function runMcpStdio(opts: McpStdioOptions): Promise<StdioServerHandle> {
  const endpoint = new URL('/mcp', opts.url);
  const remote = new Client({ name: 'medallion-mcp-stdio', version: MCP_SERVER_INFO.version }, { versionNegotiation: { mode: 'auto' } });
  let tools: Tool[];
  try {
    await remote.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: { token: async () => opts.token } }));
    tools = (await remote.listTools()).tools;
  } catch (err) {
    const code = unreachable(err);
    if (code) throw new McpStdioError(`cannot reach the service at ${endpoint.href} (${code}): start it (npm start) or pass --url`);
    if (isUnauthorized(err)) throw new McpStdioError(`the service at ${endpoint.href} refused MEDALLION_TOKEN (401): set a valid, unrevoked API token`);
    throw new McpStdioError(`connecting to ${endpoint.href} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  const outputSchemas = new Map(tools.map((t) => [t.name, t.outputSchema as Record<string, unknown> | undefined]));
  opts.log(`medallion mcp: serving ${tools.length} tools from ${endpoint.href} on stdio`);

  return serveStdio(() => {
    const server = new Server(
      { ...MCP_SERVER_INFO },
      { capabilities: { tools: {} }, ...(remote.getInstructions() ? { instructions: remote.getInstructions() } : {}) },
    );
    server.setRequestHandler('tools/list', async () => ({ tools }));
    server.setRequestHandler('tools/call', async (request) => {
      let result: CallToolResult;
      try {
        result = await remote.callTool({ name: request.params.name, arguments: request.params.arguments });
      } catch (err) {
        result = forwardedError(err);
      }
      return server.projectCallToolResult(result, outputSchemas.get(request.params.name));
    });
    return server;
  });
}
