import { buildSchema, parse } from 'graphql';
import { operationDepth, operationInputDepth } from './limits';

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

describe('operationInputDepth', () => {
  it('counts object nesting in literal arguments, lists adding none', () => {
    expect(operationInputDepth(parse('{ a(x: 1) }'))).toBe(0);
    expect(operationInputDepth(parse('{ a(where: { name: { eq: "v" } }) }'))).toBe(2);
    expect(operationInputDepth(parse('{ a(where: { OR: [{ name: { eq: "v" } }, { id: { eq: "1" } }] }) }'))).toBe(3);
    expect(operationInputDepth(parse('{ a { b(where: { NOT: { NOT: { NOT: { x: { eq: 1 } } } } }) } }'))).toBe(5);
  });

  it('follows variables, fragments and every operation in the document', () => {
    const doc = parse('query Q($w: W) { a(where: $w) } fragment F on T { b(where: { x: { y: { z: 1 } } }) }');
    expect(operationInputDepth(doc, { w: { NOT: { OR: [{ NOT: { name: { eq: 'v' } } }] } } })).toBe(5);
    expect(operationInputDepth(doc, {})).toBe(3);
  });
});

describe('operationInputDepth with the schema', () => {
  const schema = buildSchema('scalar JSON input E { rawPayload: JSON, name: String } input W { NOT: W, x: Int } type Query { a(where: W, input: [E!]): Int }');

  it('treats a JSON scalar as a leaf, however deep its value nests', () => {
    let deep: unknown = { leaf: 1 };
    for (let i = 0; i < 20; i++) deep = { d: deep };
    const doc = parse('query($input: [E!]) { a(input: $input) }');
    expect(operationInputDepth(doc, { input: [{ name: 'n', rawPayload: deep }] }, schema)).toBe(1);
    expect(operationInputDepth(parse('{ a(input: [{ rawPayload: { a: { b: { c: {} } } } }]) }'), {}, schema)).toBe(1);
    expect(operationInputDepth(parse('{ a(where: { NOT: { NOT: { x: 1 } } }) }'), {}, schema)).toBe(3);
  });

  it('walks a list of 200,000 elements without overflowing the stack', () => {
    const doc = parse('query($input: [E!]) { a(input: $input) }');
    const input = Array.from({ length: 200_000 }, () => ({ name: 'n' }));
    expect(operationInputDepth(doc, { input }, schema)).toBe(1);
    expect(operationInputDepth(doc, { input })).toBe(1);
  });
});
