import { parse } from 'graphql';
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
