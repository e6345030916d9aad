import type { CallToolResult, McpServer, StandardSchemaWithJSON, ToolAnnotations } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { AuthContext } from '../access/auth-context';
import { AccessException, AccessExceptionCode } from '../access/access.exception';
import { InputException, InputExceptionCode } from '../common/app-exception';
import { isValidNamespace, NAMESPACE_RULE } from '../common/namespace';
import { Capability, capabilityGrants } from '../access/capability';
import { apiCodeOf, ApiErrorCode } from '../api/errors';
import { requireStorableArgs } from '../common/input';
import { RequestScope } from '../scope/request-scope';
import { pipelineMetrics, secondsSince } from '../platform/telemetry/metrics';
import { SpanStatusCode, traced } from '../platform/telemetry/tracing';
import { errorResult, TOOL_ERROR_META_KEY } from './tool-error';

/** The limits a tool shares with the GraphQL API (config.ts): advertised in schemas, enforced by the services. */
export interface McpLimits {
  readonly maxPageSize: number;
  readonly maxBatchSize: number;
}

/** What one tool call runs with: the caller, a fresh per-call request scope (loaders), the limits. */
export interface ToolScope {
  readonly auth: AuthContext;
  readonly ctx: RequestScope;
  readonly limits: McpLimits;
  readonly log: (msg: string, err: unknown) => void;
}

/** A tool's answer: text for the model, `data` as structuredContent (matching the tool's output schema). */
export interface ToolAnswer {
  readonly text: string;
  readonly data: Record<string, unknown>;
}

/**
 * One MCP tool over the same services as the GraphQL resolvers. `capability` is checked on the
 * `namespace` argument before the call runs (`requireToolAccess`: a FORBIDDEN tool error); tools that take an
 * id instead (`namespaced: false`) find the namespace from the row, and a row outside the caller's
 * grants looks missing, as in GraphQL.
 */
export interface ToolDefinition<S extends z.ZodObject> {
  readonly name: string;
  readonly title: string;
  readonly capability: Capability;
  readonly namespaced: boolean;
  readonly description: string;
  readonly input: S;
  readonly output: z.ZodObject;
  readonly annotations: ToolAnnotations;
  /** false for tools that check each item themselves (ingest), as the GraphQL middleware does. */
  readonly checkStorableText?: boolean;
  run(scope: ToolScope, args: z.output<S>): Promise<ToolAnswer>;
}

/** A tool with its argument type erased, ready to register on a server for one caller. */
export interface McpTool {
  readonly name: string;
  readonly capability: Capability;
  readonly namespaced: boolean;
  register(server: McpServer, scope: () => ToolScope): void;
}

/** Arguments after the schema check: the parsed value, or why it was refused (answered BAD_USER_INPUT by the tool). */
export type Checked<T> = { readonly ok: true; readonly args: T } | { readonly ok: false; readonly message: string };

/**
 * The tool's zod schema as the SDK wants it, except that a value the schema refuses still reaches
 * the tool (as `{ ok: false }`), so that it is answered with the same BAD_USER_INPUT code and
 * structured error as every other refusal instead of the SDK's code-less text.
 */
export function checkedArgs<S extends z.ZodObject>(tool: string, schema: S): StandardSchemaWithJSON<z.input<S>, Checked<z.output<S>>> {
  const target = (t: string): 'draft-2020-12' | 'draft-07' => (t === 'draft-07' ? 'draft-07' : 'draft-2020-12');
  return {
    '~standard': {
      version: 1,
      vendor: 'medallion',
      validate: (value: unknown) => {
        const parsed = schema.safeParse(value);
        if (parsed.success) return { value: { ok: true, args: parsed.data } };
        const problems = parsed.error.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : 'arguments'}: ${i.message}`);
        return { value: { ok: false, message: `invalid arguments for ${tool}: ${problems.join('; ')}` } };
      },
      jsonSchema: {
        input: (o) => z.toJSONSchema(schema, { target: target(o.target), io: 'input' }) as Record<string, unknown>,
        output: (o) => z.toJSONSchema(schema, { target: target(o.target), io: 'output' }) as Record<string, unknown>,
      },
    },
  };
}

export { errorResult, TOOL_ERROR_META_KEY } from './tool-error';

/** A refusal a tool makes itself, where GraphQL answers null (e.g. an id that is missing or outside the grants). */
export class ToolRefusal extends Error {
  constructor(
    readonly code: ApiErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ToolRefusal';
  }
}

/** The GraphQL API's mapping (api/errors.ts) for a tool: domain codes and messages; anything else is logged and hidden. */
export function toolErrorOf(err: unknown, log: (msg: string, err: unknown) => void): CallToolResult {
  if (err instanceof ToolRefusal) return errorResult(err.code, err.message);
  const mapped = apiCodeOf(err);
  if (mapped) return errorResult(mapped.code, (err as Error).message, mapped.reason);
  log('unexpected error in an MCP tool', err);
  return errorResult('INTERNAL_SERVER_ERROR', 'internal error: the service logged the details');
}

/** Whether any grant of the caller holds `capability` (on some namespace). */
export function holdsAnywhere(auth: AuthContext, capability: Capability): boolean {
  return auth.principal?.grants.some((g) => g.capabilities.some((c) => capabilityGrants(c, capability))) ?? false;
}

/**
 * The capability check, before the tool runs, as a refusal the tool answers (`isError`, its code),
 * the same over Streamable HTTP as over stdio: a malformed namespace is BAD_USER_INPUT (not a
 * missing capability), a namespace outside the token's grants FORBIDDEN with GraphQL's message
 * (`AuthContext.require`). Tools that take an id instead find the namespace from the row (a row
 * outside the grants reads as NOT_FOUND); they are refused here only when the token holds the
 * capability on no namespace. Only a token the service cannot use is an HTTP 401 (mcp-http.ts).
 */
export function requireToolAccess(def: { name: string; capability: Capability; namespaced: boolean }, auth: AuthContext, args: Record<string, unknown>): void {
  const namespace = args.namespace;
  if (def.namespaced && typeof namespace === 'string') {
    if (!isValidNamespace(namespace)) throw new InputException(InputExceptionCode.INVALID_ARGUMENT, `namespace: ${NAMESPACE_RULE}`);
    auth.require(def.capability, namespace);
    return;
  }
  if (!holdsAnywhere(auth, def.capability)) {
    throw new AccessException(
      AccessExceptionCode.FORBIDDEN,
      `token "${auth.principal?.name ?? ''}" holds the "${def.capability}" capability on no namespace (${def.name}); ask an admin for a grant`,
    );
  }
}

/** A tool call's outcome label: `ok`, `error` (refused: bad input, a grant missing) or `internal` (a fault of the service). */
function outcomeOf(result: CallToolResult): 'ok' | 'error' | 'internal' {
  if (!result.isError) return 'ok';
  const error = result._meta?.[TOOL_ERROR_META_KEY] as { code?: unknown } | undefined;
  return error?.code === 'INTERNAL_SERVER_ERROR' ? 'internal' : 'error';
}

/** Builds the registrable tool: schema check, storable-text check, the run, and the error mapping. */
export function defineTool<S extends z.ZodObject>(def: ToolDefinition<S>): McpTool {
  return {
    name: def.name,
    capability: def.capability,
    namespaced: def.namespaced,
    register(server, scope) {
      const runTool = async (checked: Checked<z.output<S>>): Promise<CallToolResult> => {
        if (!checked.ok) return errorResult('BAD_USER_INPUT', checked.message, 'INVALID_ARGUMENT');
        const s = scope();
        try {
          requireToolAccess(def, s.auth, checked.args as Record<string, unknown>);
          if (def.checkStorableText !== false) requireStorableArgs(checked.args as Record<string, unknown>);
          const answer = await def.run(s, checked.args);
          return { content: [{ type: 'text', text: answer.text }], structuredContent: answer.data };
        } catch (err) {
          return toolErrorOf(err, s.log);
        }
      };
      server.registerTool(
        def.name,
        {
          title: def.title,
          description: def.description,
          inputSchema: checkedArgs(def.name, def.input),
          outputSchema: def.output,
          annotations: def.annotations,
        },
        // One `execute_tool <name>` span (tracing on) and medallion_mcp_tool_seconds per call; the
        // tool names are this server's own, so the label set is bounded.
        async (checked): Promise<CallToolResult> => {
          const started = process.hrtime.bigint();
          const result = await traced(`execute_tool ${def.name}`, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': def.name }, async (span) => {
            const r = await runTool(checked);
            if (r.isError) span?.setStatus({ code: SpanStatusCode.ERROR });
            return r;
          });
          pipelineMetrics.mcpSeconds.observe({ tool: def.name, outcome: outcomeOf(result) }, secondsSince(started));
          return result;
        },
      );
    },
  };
}
