import { McpServer } from '@modelcontextprotocol/server';
import { AuthContext } from '../access/auth-context';
import { contextFor, Services } from '../api/context';
import { listEntitiesTool, listFactsTool, whatChangedTool } from './list.tools';
import { addMemoryTool, searchMemoryTool } from './memory.tools';
import { getFactTool, getProvenanceTool } from './read.tools';
import { aboutTool, relatedContextTool } from './gold.tools';
import { McpLimits, McpTool } from './tool-kit';

export const MCP_SERVER_INFO = { name: 'medallion-memory', version: '0.1.0' } as const;

const INSTRUCTIONS =
  'Long-term memory for this agent, organised in namespaces. Recall with search_memory before answering from memory; ' +
  'store what the user says with add_memory (idempotent by key); read a fact and its sources with get_fact and get_provenance; ' +
  'browse with list_facts, list_entities and what_changed; ask what is known about one person, place or thing by name with about. ' +
  'Your token grants capabilities (search, ingest, read, list) per namespace; ' +
  'a tool called on a namespace outside them is refused with the capability it needs.';

/** The tools, in the order clients list them. */
export function mcpTools(limits: McpLimits): McpTool[] {
  return [
    searchMemoryTool,
    addMemoryTool(limits.maxBatchSize),
    getFactTool,
    getProvenanceTool,
    listFactsTool(limits.maxPageSize),
    listEntitiesTool(limits.maxPageSize),
    whatChangedTool,
    aboutTool,
    relatedContextTool,
  ];
}

export interface McpServerDeps {
  readonly services: Services;
  readonly limits: McpLimits;
  readonly log: (msg: string, err: unknown) => void;
}

/**
 * One MCP server instance for one caller: the SDK builds one per HTTP request, so `auth` is the
 * token as verified for this very request, and each call gets fresh loaders (no cache outlives it).
 */
export function buildMcpServer(deps: McpServerDeps, auth: AuthContext): McpServer {
  const server = new McpServer(MCP_SERVER_INFO, { instructions: INSTRUCTIONS });
  const scope = () => ({ auth, ctx: contextFor(deps.services, auth), limits: deps.limits, log: deps.log });
  for (const tool of mcpTools(deps.limits)) tool.register(server, scope);
  return server;
}
