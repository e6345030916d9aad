import { DocumentNode, getArgumentValues, getNamedType, GraphQLError, GraphQLSchema, TypeInfo, visit, visitWithTypeInfo } from 'graphql';
import { EXPLORE_PREFIX } from './explore.typedefs';

/** @neo4j/graphql cursors are graphql-relay offsets: base64("arrayconnection:<offset>"). */
const CURSOR = /^arrayconnection:(\d{1,9})$/;

/** The offset an exploration cursor stands for, or undefined when it is not one this API issued. */
export function exploreCursorOffset(cursor: string): number | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(cursor)) return undefined;
  const m = CURSOR.exec(Buffer.from(cursor, 'base64').toString('utf8'));
  return m ? Number(m[1]) : undefined;
}

const badInput = (message: string) => new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });

/**
 * BAD_USER_INPUT for paging arguments of the generated exploration fields that @neo4j/graphql
 * would otherwise ignore or fail on: a cursor it did not issue (silently read from the start),
 * a negative `first`, `limit` or `offset`. Runs on the validated document, before execution.
 */
export function exploreArgumentError(schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown>): GraphQLError | undefined {
  const typeInfo = new TypeInfo(schema);
  let error: GraphQLError | undefined;
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        if (error) return false;
        const field = typeInfo.getFieldDef();
        const parent = typeInfo.getParentType();
        if (!field || !parent) return undefined;
        const isExplore = getNamedType(field.type).name.startsWith(EXPLORE_PREFIX) || parent.name.startsWith(EXPLORE_PREFIX);
        if (!isExplore || field.args.length === 0) return undefined;
        let args: Record<string, unknown>;
        try {
          args = getArgumentValues(field, node, variables);
        } catch {
          return undefined; // coercion errors are reported by execution with their own message
        }
        const name = node.alias?.value ?? node.name.value;
        if (typeof args.after === 'string' && exploreCursorOffset(args.after) === undefined) {
          error = badInput(`${name}: "after" is not a cursor this API issued: pass an edge's cursor or pageInfo.endCursor from an earlier page, unchanged`);
        }
        for (const key of ['first', 'limit', 'offset'] as const) {
          const v = args[key];
          if (!error && typeof v === 'number' && v < 0) error = badInput(`${name}: "${key}" must be 0 or more (got ${v})`);
        }
        return undefined;
      },
    }),
  );
  return error;
}
