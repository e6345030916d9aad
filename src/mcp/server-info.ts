/** The name and version every MCP transport reports (a module of its own: `medallion mcp` loads nothing else of the server). */
export const MCP_SERVER_INFO = { name: 'medallion-memory', version: '0.1.0' } as const;
