import path from 'node:path';
import { CallToolResult, Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

export type Era = 'modern' | 'legacy';

/**
 * The SDK's own client over real HTTP to the running service's /mcp. `modern` negotiates the
 * 2026-07-28 revision (server/discover); `legacy` is the 2025 initialize handshake most desktop
 * clients still speak.
 */
export async function mcpClient(url: string, token: string | undefined, era: Era = 'modern'): Promise<Client> {
  const client = new Client({ name: 'medallion-test', version: '1.0.0' }, era === 'modern' ? { versionNegotiation: { mode: 'auto' } } : {});
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), token ? { authProvider: { token: async () => token } } : {}));
  return client;
}

/** The compiled CLI (`npm run build`), which `medallion mcp` runs as. */
export const MAIN = path.resolve(__dirname, '..', '..', 'dist', 'src', 'app', 'main.js');

/** `medallion mcp` as a desktop MCP client starts it: the compiled CLI, the token in the environment. */
export function stdioTransport(url: string, token: string): StdioClientTransport {
  return new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, 'mcp', '--url', url],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', MEDALLION_TOKEN: token, LOG_LEVEL: 'silent' },
    stderr: 'pipe',
  });
}

/** The text of a tool result (all its text blocks). */
export function textOf(r: CallToolResult): string {
  return r.content
    .filter((c): c is Extract<typeof c, { type: 'text' }> => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

/** structuredContent, typed by the caller. */
export function dataOf<T>(r: CallToolResult): T {
  return r.structuredContent as T;
}

/**
 * The `{ code, message }` of a tool error, read as any client reads it: `isError` and the text
 * `CODE: message` (no structuredContent, which would have to match the tool's output schema).
 */
export function errorOf(r: { isError?: boolean; content: CallToolResult['content']; structuredContent?: unknown }): { code: string; message: string } {
  if (!r.isError) throw new Error(`expected a tool error, got: ${textOf(r as CallToolResult)}`);
  if (r.structuredContent !== undefined) throw new Error(`a tool error carries structuredContent: ${JSON.stringify(r.structuredContent)}`);
  const m = /^([A-Z][A-Z_]*): ([\s\S]+)$/.exec(textOf(r as CallToolResult));
  if (!m) throw new Error(`a tool error's text is not "CODE: message": ${textOf(r as CallToolResult)}`);
  return { code: m[1] ?? '', message: m[2] ?? '' };
}

/** A raw JSON-RPC POST to /mcp (2025 style), for asserting HTTP statuses and headers. */
export async function rawMcpPost(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(new URL('/mcp', url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}
