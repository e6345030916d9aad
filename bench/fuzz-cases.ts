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

/** `count` cases from `seed`: about 80% operations spread over every root field, 20% transport. */
export function fuzzCases(schema: GraphQLSchema, seed: number, count: number): FuzzCase[] {
  const r = prng(seed);
  const fields = rootFields(schema);
  const cases: FuzzCase[] = [];
  for (let i = 0; i < count; i++) {
    if (r() < 0.8) {
      const { op, field } = fields[i % fields.length] as (typeof fields)[number];
      cases.push(operationCase(r, op, field, i));
    } else {
      cases.push(transportCase(r, i, (cases[cases.length - 1] ?? { body: '{}' }).body));
    }
  }
  return cases;
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
    const res = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { ...c.headers, ...(c.authenticated ? { authorization: `Bearer ${token}` } : {}) },
      body: c.body,
    });
    return judge(res.status, await res.text(), maxBytes);
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : '';
    return { ok: false, problem: `request failed: ${err instanceof Error ? err.message : String(err)}${cause}` };
  }
}
