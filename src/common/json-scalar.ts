import { GraphQLScalarType, Kind, ValueNode } from 'graphql';
import { JSONResolver } from 'graphql-scalars';
import { exactNumber } from './exact-json';

/**
 * graphql-scalars' JSON, except that an integer literal beyond ±2^53 written in the document
 * (`rawPayload: { n: 9007199254740993 }`) stays exact (LosslessNumber) instead of being rounded
 * by parseFloat. Values sent as variables are made exact by the HTTP body parser (api/exact-body.ts).
 */
function literal(ast: ValueNode, variables: Record<string, unknown> | null | undefined): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
      return Number.isSafeInteger(Number(ast.value)) ? Number(ast.value) : exactNumber(ast.value);
    case Kind.FLOAT:
      return parseFloat(ast.value);
    case Kind.OBJECT: {
      const value: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      for (const field of ast.fields) value[field.name.value] = literal(field.value, variables);
      return value;
    }
    case Kind.LIST:
      return ast.values.map((v) => literal(v, variables));
    case Kind.NULL:
      return null;
    case Kind.VARIABLE:
      return variables ? variables[ast.name.value] : undefined;
    default:
      return undefined;
  }
}

export const JsonScalar = new GraphQLScalarType({
  ...JSONResolver.toConfig(),
  parseLiteral: literal,
});
