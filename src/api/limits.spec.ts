import { parse } from 'graphql';
import { operationDepth } from './limits';

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
