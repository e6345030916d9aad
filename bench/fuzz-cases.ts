import {
  getNamedType,
  getNullableType,
  GraphQLField,
  GraphQLInputType,
  GraphQLNamedType,
  GraphQLObjectType,
  GraphQLSchema,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
} from 'graphql';
// The seeded PRNG (mulberry32) the benchmark data uses: the same seed gives the same cases on every machine.
import { prng } from './memory-data';

export interface FuzzCase {
  readonly name: string;
  readonly body: string;
  readonly headers: Record<string, string>;
  /** Send the admin token (else none). */
  readonly authenticated: boolean;
  /** What is spoken: GraphQL over POST /graphql (the default), MCP JSON-RPC at /mcp, or a GET route. */
  readonly kind?: 'graphql' | 'mcp' | 'get';
  readonly method?: 'GET' | 'POST' | 'DELETE';
  /** Path and query; default /graphql. */
  readonly path?: string;
}

/** An MCP tool as `tools/list` describes it: its name and its input's top-level properties and their JSON types. */
export interface McpToolSpec {
  readonly name: string;
  readonly properties: ReadonlyArray<{ readonly name: string; readonly type: string }>;
}

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

/** Hostile scalars: each is something a client can send that the service must refuse or store cleanly. */
const NASTY_STRINGS = [
  '',
  ' ',
  'a\u0000b',
  '\u0000',
  'x\ud800',
  '\udc00y',
  '\ufffd',
  'é'.repeat(300),
  'x'.repeat(70_000),
  "'; DROP TABLE bronze.events; --",
  '$jwt.namespaces',
  '*',
  'ns*',
  '../../etc/passwd',
  '{"a":1}',
  '2024-02-30T00:00:00Z',
  '9999999999999999999',
  'not-a-uuid',
  '00000000-0000-0000-0000-000000000000',
  'AAAA',
  'YXJyYXljb25uZWN0aW9uOjE=',
  'garbage',
  '\n\r\t',
  '🙂'.repeat(50),
];
const NASTY_NUMBERS = ['0', '-1', '-2147483649', '2147483648', '1e400', '-1e400', '3.4e39', '1.5', 'NaN', '9007199254740993', '-0', '1e-400'];
const NASTY_DATES = [
  '"2024-02-30T00:00:00Z"',
  '"1899-12-31T23:59:59Z"',
  '"2200-01-01T00:00:00Z"',
  '"yesterday"',
  '""',
  '"2024-13-01T00:00:00Z"',
  '"275760-09-13T00:00:00.001Z"',
  '0',
  'true',
];

/** A JSON text (not a value: `1e400` and raw NULs survive) for an input of type `t`, often wrong on purpose. */
function jsonFor(r: Rand, t: GraphQLInputType, depth: number): string {
  const roll = r();
  if (roll < 0.06) return 'null';
  if (roll < 0.1) return pick(r, ['{}', '[]', '"x"', '7', 'true', '[[[[[]]]]]']);
  const nt = getNullableType(t) as GraphQLInputType;
  if (isListType(nt)) {
    // Now and then one wide list at the top; its items are kept flat so a body stays a few MB at most.
    const wide = depth === 0 && r() < 0.05;
    const n = wide ? 3000 : pick(r, [0, 1, 2, 5, 3]);
    return `[${Array.from({ length: n }, () => jsonFor(r, nt.ofType as GraphQLInputType, wide ? 5 : depth + 1)).join(',')}]`;
  }
  if (isInputObjectType(nt)) {
    if (depth > 4) return '{}';
    const fields = Object.values(nt.getFields());
    const chosen = fields.filter((f) => isNonNullType(f.type) || r() < 0.4);
    const parts = chosen.map((f) => `${JSON.stringify(f.name)}:${jsonFor(r, f.type, depth + 1)}`);
    if (r() < 0.1) parts.push('"colour":"blue"');
    return `{${parts.join(',')}}`;
  }
  if (isEnumType(nt)) return r() < 0.8 ? JSON.stringify(pick(r, nt.getValues()).name) : pick(r, ['"NOPE"', '1', '"message"']);
  if (isScalarType(nt)) {
    switch (nt.name) {
      case 'Int':
      case 'Float':
        return pick(r, NASTY_NUMBERS);
      case 'Boolean':
        return pick(r, ['true', 'false', '"yes"', '1']);
      case 'DateTime':
      case 'GraphDateTime':
        return pick(r, NASTY_DATES);
      case 'JSON':
        return pick(r, [
          '{"a":1e400}',
          '{"big":9007199254740993}',
          '{"k":"\\u0000"}',
          '{"s":"\\ud800"}',
          '[1,2,3]',
          '{"d":{"d":{"d":{"d":{"d":{"d":{"d":{"d":{"d":1}}}}}}}}}',
          '"text"',
          `[${'0,'.repeat(2000)}0]`,
        ]);
      default:
        return JSON.stringify(pick(r, NASTY_STRINGS));
    }
  }
  return 'null';
}

/** A small selection of the field's result: scalar leaves, and one nested level of objects. */
function selection(type: GraphQLNamedType, r: Rand, depth: number): string {
  if (isLeafType(type)) return '';
  if (!isObjectType(type)) return '{ __typename }';
  const fields = Object.values(type.getFields()).filter((f) => f.args.every((a) => !isNonNullType(a.type)));
  const leaves = fields.filter((f) => isLeafType(getNamedType(f.type)));
  const objects = fields.filter((f) => isObjectType(getNamedType(f.type)));
  const chosen = leaves.filter(() => r() < 0.5).map((f) => f.name);
  if (depth < 2) for (const f of objects.filter(() => r() < 0.3)) chosen.push(`${f.name} ${selection(getNamedType(f.type), r, depth + 1)}`);
  return `{ __typename ${chosen.join(' ')} }`;
}

function rootFields(schema: GraphQLSchema): Array<{ op: 'query' | 'mutation' | 'subscription'; field: GraphQLField<unknown, unknown> }> {
  const out: Array<{ op: 'query' | 'mutation' | 'subscription'; field: GraphQLField<unknown, unknown> }> = [];
  const roots: Array<['query' | 'mutation' | 'subscription', GraphQLObjectType | null | undefined]> = [
    ['query', schema.getQueryType()],
    ['mutation', schema.getMutationType()],
    ['subscription', schema.getSubscriptionType()],
  ];
  for (const [op, type] of roots) for (const field of Object.values(type?.getFields() ?? {})) out.push({ op, field });
  return out;
}

/** One operation on `field` with every argument passed as a (usually hostile) variable. */
function operationCase(r: Rand, op: string, field: GraphQLField<unknown, unknown>, i: number): FuzzCase {
  const args = field.args.filter((a) => isNonNullType(a.type) || r() < 0.6);
  const defs = args.map((a) => `$${a.name}: ${a.type.toString()}`).join(', ');
  const call = args.length > 0 ? `(${args.map((a) => `${a.name}: $${a.name}`).join(', ')})` : '';
  const query = `${op} Fuzz${defs ? `(${defs})` : ''} { ${field.name}${call} ${selection(getNamedType(field.type), r, 0)} }`;
  const vars = args.map((a) => `${JSON.stringify(a.name)}:${jsonFor(r, a.type, 0)}`).join(',');
  return {
    name: `#${i} ${op} ${field.name}(${args.map((a) => a.name).join(',')})`,
    body: `{"query":${JSON.stringify(query)},"variables":{${vars}}}`,
    headers: { 'content-type': 'application/json' },
    authenticated: r() < 0.85,
  };
}

/** Requests broken below GraphQL: bodies, encodings, documents. */
function transportCase(r: Rand, i: number, someQuery: string): FuzzCase {
  const kinds: Array<() => { body: string; headers?: Record<string, string> }> = [
    () => ({ body: someQuery.slice(0, Math.floor(r() * someQuery.length)) }),
    () => ({ body: '{"query": "{ viewer { name } }"}', headers: { 'content-type': 'application/json; charset=' + pick(r, ['klingon', 'utf-16', 'latin1']) } }),
    () => ({
      body: 'not gzip at all',
      headers: { 'content-type': 'application/json', 'content-encoding': pick(r, ['gzip', 'deflate', 'br', 'zstd', 'x-compress']) },
    }),
    () => ({
      body: JSON.stringify({
        query: pick(r, [
          '{',
          '}}}',
          'query {',
          '{ viewer { name ',
          'fragment F on Query { ...F } { ...F }',
          '{ __schema { types { fields { type { fields { name } } } } } }',
          'subscription { jobProgress(jobId: "x") { id } }',
          'query A { viewer { name } } query B { viewer { name } }',
          '{ viewer(x: 1) { name } }',
          '{ nope }',
          `{ ${'a: viewer { name } '.repeat(150)} }`,
        ]),
      }),
    }),
    () => ({ body: JSON.stringify([{ query: '{ viewer { name } }' }]) }),
    () => ({ body: JSON.stringify({ query: 7, variables: 'x' }) }),
    () => ({ body: JSON.stringify({ query: '{ viewer { name } }', variables: [1], operationName: 5 }) }),
    () => ({ body: `{"query":"${'{'.repeat(500)}"}` }),
    () => ({
      body: '{"query": "{ viewer { name } }"}',
      headers: { 'content-type': pick(r, ['text/plain', 'application/x-www-form-urlencoded', 'application/graphql', 'multipart/form-data']) },
    }),
    () => ({ body: Array.from({ length: 64 }, () => String.fromCharCode(Math.floor(r() * 256))).join('') }),
  ];
  const k = Math.floor(r() * kinds.length);
  const made = (kinds[k] as () => { body: string; headers?: Record<string, string> })();
  return {
    name: `#${i} transport kind ${k}`,
    body: made.body,
    headers: { 'content-type': 'application/json', ...(made.headers ?? {}) },
    authenticated: r() < 0.7,
  };
}

/** A JSON text for an MCP argument of JSON type `type`, often wrong on purpose. */
function mcpValue(r: Rand, type: string): string {
  const roll = r();
  if (roll < 0.08) return pick(r, ['null', '{}', '[]', '7', 'true', '"x"']);
  switch (type) {
    case 'integer':
    case 'number':
      return pick(r, NASTY_NUMBERS);
    case 'boolean':
      return pick(r, ['true', 'false', '"yes"']);
    case 'array':
      return `[${Array.from({ length: pick(r, [0, 1, 3, 200]) }, () => (r() < 0.5 ? JSON.stringify(pick(r, NASTY_STRINGS)) : `{"content":${JSON.stringify(pick(r, NASTY_STRINGS))},"key":"k"}`)).join(',')}]`;
    case 'object':
      return pick(r, ['{}', '{"a":1}', '{"d":{"d":{"d":{"d":{"d":1}}}}}']);
    default:
      return JSON.stringify(pick(r, NASTY_STRINGS));
  }
}

/** One MCP request: a call of every tool with hostile arguments, or a broken JSON-RPC message. */
function mcpCase(r: Rand, tools: readonly McpToolSpec[], i: number): FuzzCase {
  const accept = r() < 0.9 ? 'application/json, text/event-stream' : pick(r, ['application/json', 'text/html', '*/*']);
  const headers = { 'content-type': r() < 0.95 ? 'application/json' : 'text/plain', accept };
  const tool = tools.length > 0 && r() < 0.75 ? (tools[i % tools.length] as McpToolSpec) : undefined;
  if (tool) {
    const props = tool.properties.filter(() => r() < 0.8).map((p) => `${JSON.stringify(p.name)}:${mcpValue(r, p.type)}`);
    if (r() < 0.1) props.push('"colour":"blue"');
    const args = r() < 0.05 ? pick(r, ['null', '[]', '"x"']) : `{${props.join(',')}}`;
    return {
      name: `#${i} mcp tools/call ${tool.name}`,
      body: `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":${JSON.stringify(tool.name)},"arguments":${args}}}`,
      headers,
      authenticated: r() < 0.85,
      kind: 'mcp',
      path: '/mcp',
    };
  }
  const bodies = [
    `{"jsonrpc":"2.0","id":${i},"method":"initialize"}`,
    `{"jsonrpc":"2.0","id":${i},"method":"initialize","params":${pick(r, ['null', '7', '{}', '[]', '{"protocolVersion":7}', '{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"1"}}'])}}`,
    `{"jsonrpc":"2.0","id":${i},"method":"tools/list"}`,
    `{"jsonrpc":"2.0","id":${i},"method":"ping"}`,
    `{"jsonrpc":"2.0","id":${i},"method":${JSON.stringify(pick(r, ['nope', 'resources/list', 'prompts/get', 'server/discover', 'tools/call', '']))},"params":${pick(r, ['{}', 'null', '{"name":"x"}', '[]'])}}`,
    `{"jsonrpc":"1.0","id":1,"method":"ping"}`,
    `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
    `[${Array.from({ length: pick(r, [0, 2, 150]) }, (_, k) => `{"jsonrpc":"2.0","id":${k},"method":"ping"}`).join(',')}]`,
    pick(r, ['{', 'null', '7', '"x"', '[]', '{"id":{}}', 'not json']),
    `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":${JSON.stringify(pick(r, NASTY_STRINGS))},"arguments":{}}}`,
  ];
  return { name: `#${i} mcp message`, body: pick(r, bodies), headers, authenticated: r() < 0.85, kind: 'mcp', path: '/mcp' };
}

/** A GET of every route the service serves, and of some it does not. */
function getCase(r: Rand, i: number, someQuery: string): FuzzCase {
  // A lone surrogate cannot be percent-encoded: send what a client's URL encoder would (U+FFFD).
  const encodeURIComponent = (x: unknown): string =>
    globalThis.encodeURIComponent(String(x).replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'));
  const q = (() => {
    try {
      const query = (JSON.parse(someQuery) as { query?: unknown } | null)?.query;
      return typeof query === 'string' ? query : '{ viewer { name } }';
    } catch {
      return '{ viewer { name } }';
    }
  })();
  const path = pick(r, [
    '/',
    '/graphiql',
    '/health',
    '/metrics',
    `/graphql?query=${encodeURIComponent(q)}`,
    `/graphql?query=${encodeURIComponent('{ viewer { name } }')}&variables=${encodeURIComponent(pick(r, ['{', '[]', '{"a":1}', 'null']))}`,
    `/graphql?query=${encodeURIComponent(pick(r, NASTY_STRINGS).slice(0, 2000))}`,
    '/graphql',
    '/mcp',
    '/nope',
    `/graphiql/${encodeURIComponent(pick(r, NASTY_STRINGS).slice(0, 200))}`,
    '/%E0%A4%A',
    `/health?${'x'.repeat(pick(r, [10, 5000]))}`,
  ]);
  return {
    name: `#${i} GET ${path.slice(0, 60)}`,
    body: '',
    headers: r() < 0.5 ? { accept: pick(r, ['application/json', 'text/html', 'text/event-stream', '*/*']) } : {},
    authenticated: r() < 0.7,
    kind: 'get',
    method: path === '/mcp' && r() < 0.3 ? 'DELETE' : 'GET',
    path,
  };
}

/**
 * `count` cases from `seed`: about 65% GraphQL operations spread over every root field, 15%
 * broken GraphQL transport, 12% MCP (every tool of `tools`, and broken JSON-RPC), 8% GET routes.
 */
export function fuzzCases(schema: GraphQLSchema, seed: number, count: number, tools: readonly McpToolSpec[] = []): FuzzCase[] {
  const r = prng(seed);
  const fields = rootFields(schema);
  const cases: FuzzCase[] = [];
  for (let i = 0; i < count; i++) {
    const roll = r();
    const last = (cases[cases.length - 1] ?? { body: '{}' }).body;
    if (roll < 0.65) {
      const { op, field } = fields[i % fields.length] as (typeof fields)[number];
      cases.push(operationCase(r, op, field, i));
    } else if (roll < 0.8) {
      cases.push(transportCase(r, i, last));
    } else if (roll < 0.92) {
      cases.push(mcpCase(r, tools, i));
    } else {
      cases.push(getCase(r, i, last));
    }
  }
  return cases;
}

/** The MCP tools the running service lists, for `fuzzCases`. */
export async function listMcpTools(url: string, token: string): Promise<McpToolSpec[]> {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  const [message] = jsonRpcMessages(await res.text());
  const tools = (message as { result?: { tools?: Array<{ name: string; inputSchema?: { properties?: Record<string, { type?: unknown }> } }> } } | undefined)
    ?.result?.tools;
  if (!tools || tools.length === 0) throw new Error(`tools/list gave no tools (HTTP ${res.status})`);
  return tools.map((t) => ({
    name: t.name,
    properties: Object.entries(t.inputSchema?.properties ?? {}).map(([name, p]) => ({ name, type: typeof p.type === 'string' ? p.type : 'string' })),
  }));
}

/** The JSON-RPC messages of an MCP answer: a JSON body (one message or a batch) or SSE `data:` lines. */
function jsonRpcMessages(text: string): unknown[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  const datas = trimmed.startsWith('{') || trimmed.startsWith('[') ? [trimmed] : [...trimmed.matchAll(/^data: ?(.*)$/gm)].map((m) => m[1] ?? '');
  return datas.flatMap((d) => {
    const v = JSON.parse(d) as unknown;
    return Array.isArray(v) ? v : [v];
  });
}

/** An MCP answer: no 5xx, bounded, and no -32603 Internal error or INTERNAL_SERVER_ERROR tool result. */
export function judgeMcp(status: number, text: string, maxBytes: number): FuzzVerdict {
  if (status >= 500) return { ok: false, problem: `HTTP ${status}: ${text.slice(0, 300)}` };
  if (text.length > maxBytes) return { ok: false, problem: `answer of ${text.length} bytes` };
  if (/node_modules|\bat \S+ \(\//.test(text)) return { ok: false, problem: `internals in the answer: ${text.slice(0, 200)}` };
  let messages: unknown[];
  try {
    messages = jsonRpcMessages(text);
  } catch {
    return { ok: false, problem: `not JSON-RPC (HTTP ${status}): ${text.slice(0, 200)}` };
  }
  for (const m of messages as Array<{ error?: { code?: unknown }; result?: { structuredContent?: { error?: { code?: unknown } } } }>) {
    if (m?.error?.code === -32603) return { ok: false, problem: `INTERNAL (-32603): ${JSON.stringify(m).slice(0, 300)}` };
    if (m?.result?.structuredContent?.error?.code === 'INTERNAL_SERVER_ERROR')
      return { ok: false, problem: `INTERNAL tool result: ${JSON.stringify(m).slice(0, 300)}` };
  }
  return { ok: true };
}

/** A GET answer: no 5xx and nothing of the service's internals. */
export function judgeGet(status: number, text: string): FuzzVerdict {
  if (status >= 500) return { ok: false, problem: `HTTP ${status}: ${text.slice(0, 300)}` };
  if (/node_modules|\bat \S+ \(\//.test(text)) return { ok: false, problem: `internals in the answer: ${text.slice(0, 200)}` };
  if (/"code":\s*"INTERNAL_SERVER_ERROR"/.test(text)) return { ok: false, problem: `INTERNAL: ${text.slice(0, 300)}` };
  return { ok: true };
}

export interface FuzzVerdict {
  readonly ok: boolean;
  readonly problem?: string;
}

/** What every answer must be: JSON, GraphQL-shaped, coded errors, no INTERNAL, no 5xx, bounded. */
export function judge(status: number, text: string, maxBytes: number): FuzzVerdict {
  if (status >= 500) return { ok: false, problem: `HTTP ${status}: ${text.slice(0, 300)}` };
  if (text.length > maxBytes) return { ok: false, problem: `answer of ${text.length} bytes` };
  let body: { data?: unknown; errors?: Array<{ message?: unknown; extensions?: { code?: unknown } }> };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return { ok: false, problem: `not JSON (HTTP ${status}): ${text.slice(0, 200)}` };
  }
  if (body === null || typeof body !== 'object' || (!('data' in body) && !Array.isArray(body.errors)))
    return { ok: false, problem: `not a GraphQL response: ${text.slice(0, 200)}` };
  for (const e of body.errors ?? []) {
    if (typeof e.message !== 'string') return { ok: false, problem: `error without message: ${JSON.stringify(e).slice(0, 200)}` };
    const code = e.extensions?.code;
    if (typeof code !== 'string') return { ok: false, problem: `error without code: ${JSON.stringify(e).slice(0, 300)}` };
    if (code === 'INTERNAL_SERVER_ERROR') return { ok: false, problem: `INTERNAL: ${JSON.stringify(e).slice(0, 300)}` };
  }
  if (/node_modules|\bat \S+ \(\/|<html/i.test(text)) return { ok: false, problem: `internals in the answer: ${text.slice(0, 200)}` };
  return { ok: true };
}

/** Sends one case and judges the answer. */
export async function runCase(url: string, token: string, c: FuzzCase, maxBytes: number): Promise<FuzzVerdict> {
  try {
    const method = c.method ?? 'POST';
    const res = await fetch(`${url}${c.path ?? '/graphql'}`, {
      method,
      headers: { ...c.headers, ...(c.authenticated ? { authorization: `Bearer ${token}` } : {}) },
      body: method === 'POST' ? c.body : undefined,
    });
    const text = await res.text();
    if (c.kind === 'mcp') return judgeMcp(res.status, text, maxBytes);
    if (c.kind === 'get') return judgeGet(res.status, text);
    return judge(res.status, text, maxBytes);
  } catch (err) {
    return { ok: false, problem: `request failed: ${describeFailure(err)}` };
  }
}

/**
 * An error and its causes as one line ("fetch failed <- other side closed (UND_ERR_SOCKET)").
 * Read by shape, not `instanceof`: under jest, fetch's errors come from another realm.
 */
function describeFailure(err: unknown, depth = 0): string {
  if (typeof err !== 'object' || err === null) return String(err);
  const e = err as { message?: unknown; code?: unknown; cause?: unknown };
  const here = `${typeof e.message === 'string' ? e.message : String(err)}${typeof e.code === 'string' ? ` (${e.code})` : ''}`;
  return e.cause !== undefined && depth < 3 ? `${here} <- ${describeFailure(e.cause, depth + 1)}` : here;
}
