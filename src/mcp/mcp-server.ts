import { McpServer } from '@modelcontextprotocol/server';
import { AuthContext } from '../access/auth-context';
import { scopeFor, Services } from '../scope/request-scope';
import { listEntitiesTool, listFactsTool, whatChangedTool } from './list.tools';
import { addMemoryTool, searchMemoryTool } from './memory.tools';
import { getFactTool, getProvenanceTool } from './read.tools';
import { aboutTool, relatedContextTool } from './gold.tools';
import { McpLimits, McpTool } from './tool-kit';
import { MCP_SERVER_INFO } from './server-info';

export { MCP_SERVER_INFO };

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
  const scope = () => ({ auth, ctx: scopeFor(deps.services, auth), limits: deps.limits, log: deps.log });
  for (const tool of mcpTools(deps.limits)) tool.register(server, scope);
  refuseInvalidParams(server);
  return server;
}

/** JSON-RPC "Invalid params". */
const INVALID_PARAMS = -32602;

type Outcome = { ok: boolean; reason?: string; message?: string };
interface SdkInternals {
  _requestHandlers?: Map<string, (request: unknown, ctx: unknown) => Promise<unknown>>;
  _customSchemaRequestMethods?: Set<string>;
  _negotiatedWireCodec?: () => { validateRequest(method: string, request: unknown): Outcome; validateInputRequest?(method: string, request: unknown): Outcome };
}

/**
 * The SDK validates a spec request's params inside the handler and throws a plain Error when they
 * do not fit (`initialize` without params, `tools/call` with params null, …), which it answers as
 * -32603 Internal error. Each handler is wrapped to run the SDK's own validation first and answer
 * a mismatch as -32602 Invalid params with the SDK's message. Reaches into SDK internals (checked
 * at run time: when they are missing nothing is wrapped); test/e2e/input-limits.test.ts and the
 * fuzz notice a change.
 */
function refuseInvalidParams(server: McpServer): void {
  const inner = server.server as unknown as SdkInternals;
  const handlers = inner._requestHandlers;
  const codec = inner._negotiatedWireCodec?.bind(inner);
  if (!(handlers instanceof Map) || !codec) return;
  for (const [method, handler] of handlers) {
    if (inner._customSchemaRequestMethods?.has(method)) continue;
    handlers.set(method, async (request, ctx) => {
      const c = codec();
      let outcome = c.validateRequest(method, request);
      if (!outcome.ok && outcome.reason === 'not-in-era' && c.validateInputRequest) outcome = c.validateInputRequest(method, request);
      if (!outcome.ok && outcome.reason !== 'not-in-era') {
        throw Object.assign(new Error(`Invalid params for ${method}: ${String(outcome.message ?? 'they do not match the method').slice(0, 500)}`), {
          code: INVALID_PARAMS,
        });
      }
      return handler(request, ctx);
    });
  }
}
