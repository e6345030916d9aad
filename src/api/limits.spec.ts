import { buildSchema, getIntrospectionQuery, GraphQLSchema, parse } from 'graphql';
import { buildAppSchema } from './schema';
import { measureInputs } from './input-measure';
import { checkOperationLimits, operationDepth, selectOperation } from './limits';

describe('operationDepth', () => {
  it('counts nested fields and follows fragments', () => {
    expect(operationDepth(parse('{ a }'))).toBe(1);
    expect(operationDepth(parse('{ a { b { c } } d }'))).toBe(3);
    expect(operationDepth(parse('fragment F on T { b { c { d } } } query { a { ...F } }'))).toBe(4);
    expect(operationDepth(parse('{ a { ... on T { b { c } } } }'))).toBe(3);
  });

  it('ignores introspection fields and picks the named operation', () => {
    expect(operationDepth(parse('{ __schema { types { fields { type { name } } } } a }'))).toBe(1);
    expect(operationDepth(parse('query A { a } query B { a { b { c } } }'), 'B')).toBe(3);
  });

  it('treats a fragment cycle as infinitely deep', () => {
    expect(operationDepth(parse('fragment F on T { a { ...G } } fragment G on T { b { ...F } } { x { ...F } }'))).toBe(Number.POSITIVE_INFINITY);
  });
});

const SDL = `
  scalar JSON
  input W { name: S, NOT: W, OR: [W!], AND: [W!] }
  input S { eq: String, in: [String!] }
  input E { content: String!, rawPayload: JSON }
  type Query { a(where: W, x: Int): Int, b(input: [E!]): Int }
`;

describe('measureInputs', () => {
  const schema = buildSchema(SDL);
  const measure = (q: string, vars: Record<string, unknown> = {}) => {
    const doc = parse(q);
    return measureInputs(schema, doc, selectOperation(doc), vars, { maxNodes: 1000, maxFilterObjects: 1000 });
  };

  it('counts object nesting in literal arguments, lists adding none', () => {
    expect(measure('{ a(x: 1) }').depth).toBe(0);
    expect(measure('{ a(where: { name: { eq: "v" } }) }').depth).toBe(2);
    expect(measure('{ a(where: { OR: [{ name: { eq: "v" } }, { name: { eq: "w" } }] }) }')).toEqual({ depth: 3, nodes: 7, filterObjects: 5 });
    expect(measure('{ a(where: { NOT: { NOT: { NOT: { name: { eq: "x" } } } } }) }').depth).toBe(5);
  });

  it('follows variables by their declared type and never walks a JSON payload', () => {
    const m = measure('query Q($w: W, $e: [E!]) { a(where: $w) b(input: $e) }', {
      w: { NOT: { OR: [{ NOT: { name: { eq: 'v' } } }] } },
      e: [{ content: 'x', rawPayload: { deep: { deeper: { deepest: [1, 2, 3, { x: [4, 5] }] } } } }, { content: 'y' }],
    });
    expect(m.depth).toBe(5);
    // where: 5 objects + 1 list element; input: 2 list elements + 2 objects; the payload adds nothing.
    expect(m).toEqual({ depth: 5, nodes: 10, filterObjects: 5 });
  });

  it('stops counting once a budget is spent', () => {
    const doc = parse('query($e: [E!]) { b(input: $e) }');
    const e = Array.from({ length: 100_000 }, () => ({}));
    expect(measureInputs(schema, doc, selectOperation(doc), { e }, { maxNodes: 50, maxFilterObjects: 50 }).nodes).toBe(51);
  });
});

describe('checkOperationLimits on the app schema', () => {
  let schema: GraphQLSchema;
  beforeAll(async () => {
    schema = await buildAppSchema();
  });
  const limits = { maxDepth: 12, maxComplexity: 20_000, maxInputDepth: 8 };
  const check = (q: string, vars: Record<string, unknown> = {}) => checkOperationLimits(schema, parse(q), vars, undefined, limits)?.extensions;

  it('refuses an operation too large to price instead of letting it through', () => {
    const padding = Array.from({ length: 10_001 }, () => '__typename').join(' ');
    expect(check(`{ ${padding} }`)).toMatchObject({ code: 'LIMIT_EXCEEDED', limit: 'complexity' });
  });

  it('refuses variables that cannot be coerced at the first bad item, not after building an error for each', () => {
    // 5,000 events without their required `source`: graphql-query-complexity alone built 10,000
    // errors (each printing its item, a second of the event loop) and reported the last one.
    const input = Array.from({ length: 5_000 }, (_, i) => ({ namespace: 'n', kind: 'MESSAGE', content: `turn ${i}`, sourceEventId: `e${i}` }));
    const err = checkOperationLimits(
      schema,
      parse('mutation($input: [EventInput!]!) { ingestEvents(input: $input) { __typename } }'),
      { input },
      undefined,
      limits,
    );
    expect(err?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(err?.message).toMatch(/at "input\[0\]"; Field "source" of required type "String!" was not provided/);
  });

  it('prices nested lists without a page size at their real maximum', () => {
    const nested = '{ entities(namespace: "n", first: 500) { edges { node { facts { sources { event { id } } } } } } }';
    expect(check(nested)).toMatchObject({ code: 'LIMIT_EXCEEDED', limit: 'complexity' });
    expect(check('{ conversation(namespace: "n", conversationId: "c") { id facts { id } } }')).toMatchObject({ code: 'LIMIT_EXCEEDED' });
    expect(check('{ conversation(namespace: "n", conversationId: "c", limit: 20) { id facts { id } } }')).toBeUndefined();
    expect(check('{ fact(id: "x") { id sources { quote event { id } } supersedes { id } decisions { action candidates { id } } } }')).toBeUndefined();
  });

  it('prices search and traversals by their work: 200 aliased searches are refused, a few are not', () => {
    const searches = (n: number) =>
      `{ ${Array.from({ length: n }, (_, i) => `s${i}: searchMemory(namespace: "n", query: "q") { score fact { id statement } }`).join(' ')} }`;
    expect(check(searches(3))).toBeUndefined();
    expect(check(searches(200))).toMatchObject({ code: 'LIMIT_EXCEEDED', limit: 'complexity' });
    const paths = Array.from({ length: 140 }, (_, i) => `p${i}: provenance(factId: "f") { steps { distance } }`).join(' ');
    expect(check(`{ ${paths} }`)).toMatchObject({ code: 'LIMIT_EXCEEDED' });
  });

  it('prices sort lists by their keys: a long one is refused before it reaches Neo4j, a real one is not (issue 24)', () => {
    const q = 'query($s: [GraphEventSort!]) { graphEvents(limit: 10, sort: $s) { id } }';
    expect(check(q, { s: [{ occurredAt: 'DESC' }, { id: 'ASC' }] })).toBeUndefined();
    // 3,000 sort items took 3.5-4.2 s per request and cost nothing; now they are LIMIT_EXCEEDED.
    const long = Array.from({ length: 3000 }, (_, i) => (i % 2 === 0 ? { occurredAt: 'DESC' } : { id: 'ASC', namespace: 'ASC' }));
    expect(check(q, { s: long })).toMatchObject({ code: 'LIMIT_EXCEEDED', limit: 'complexity' });
    // Within one item too: every key counts.
    expect(check(`{ graphEvents(limit: 1, sort: [${Array.from({ length: 20 }, () => '{ id: ASC, occurredAt: DESC }').join(', ')}]) { id } }`)).toMatchObject({
      code: 'LIMIT_EXCEEDED',
    });
  });

  it('lets the standard introspection query through, but not a nested one', () => {
    const full = getIntrospectionQuery();
    expect(check(full)).toBeUndefined();
    expect(check('{ __schema { types { fields { type { fields { name } } } } } }')).toMatchObject({ code: 'LIMIT_EXCEEDED', limit: 'introspection' });
    expect(check(`{ ${Array.from({ length: 20 }, (_, i) => `i${i}: __schema { queryType { name } }`).join(' ')} }`)).toMatchObject({ code: 'LIMIT_EXCEEDED' });
  });
});
