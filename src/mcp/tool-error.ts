// The tool error shape alone, without the tool kit's imports: `medallion mcp` (stdio) loads it and
// answers at once (mcp-stdio.ts).
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { ApiErrorCode } from '../api/errors';

/** Where a tool error's `{ code, message, reason }` travels for clients that want it as data. */
export const TOOL_ERROR_META_KEY = 'medallion-memory/error';

/**
 * A tool error as the MCP spec's tool-result rules want it: `isError: true` and `CODE: message`
 * as text, which every client reads. No structuredContent: a client validates that against the
 * tool's output schema (the official SDK throws -32602 on a mismatch), and an error is no answer.
 * The same fields ride in `_meta` for clients that want them as data.
 */
export function errorResult(code: ApiErrorCode, message: string, reason?: string): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: `${code}: ${message}` }],
    _meta: { [TOOL_ERROR_META_KEY]: { code, message, ...(reason ? { reason } : {}) } },
  };
}
