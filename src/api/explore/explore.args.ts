import {
  DocumentNode,
  getArgumentValues,
  getNamedType,
  getNullableType,
  GraphQLError,
  GraphQLInputType,
  GraphQLSchema,
  isInputObjectType,
  isListType,
  isScalarType,
  TypeInfo,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import { isDate, isDateTime, isLocalDateTime } from 'neo4j-driver';
import { EXPLORE_PREFIX } from './explore.typedefs';

/** @neo4j/graphql cursors are graphql-relay offsets: base64("arrayconnection:<offset>"). */
const CURSOR = /^arrayconnection:(\d{1,9})$/;

/** The offset an exploration cursor stands for, or undefined when it is not one this API issued. */
export function exploreCursorOffset(cursor: string): number | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(cursor)) return undefined;
  const m = CURSOR.exec(Buffer.from(cursor, 'base64').toString('utf8'));
  return m ? Number(m[1]) : undefined;
}

/** The y-m-d of an ISO date or date-time text, or of a neo4j-driver temporal value. */
function ymd(v: unknown): [number, number, number, string] | undefined {
  if (typeof v === 'string') {
    const m = /^([+-]?\d{4,6})-(\d{2})-(\d{2})/.exec(v);
    return m ? [Number(m[1]), Number(m[2]), Number(m[3]), v] : undefined;
  }
  if (isDateTime(v) || isLocalDateTime(v) || isDate(v)) return [Number(v.year), Number(v.month), Number(v.day), v.toString()];
  return undefined;
}

/** Neo4j (like java.time) accepts UTC offsets of at most ±18:00; beyond that it fails the whole query. */
const MAX_OFFSET_MINUTES = 18 * 60;

/** The UTC offset of a date-time text or driver value, in minutes (undefined: none, or Z). */
function offsetMinutes(v: unknown): number | undefined {
  if (typeof v === 'string') {
    const m = /T[^+-]*([+-])(\d{2}):?(\d{2})(?::?(\d{2}))?$/.exec(v);
    if (!m) return undefined;
    const minutes = Number(m[2]) * 60 + Number(m[3]) + (m[4] ? Number(m[4]) / 60 : 0);
    return m[1] === '-' ? -minutes : minutes;
  }
  if (isDateTime(v) && v.timeZoneOffsetSeconds !== undefined && v.timeZoneOffsetSeconds !== null) return Number(v.timeZoneOffsetSeconds) / 60;
  return undefined;
}

function realDay(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const t = new Date(Date.UTC(2000, m - 1, d));
  t.setUTCFullYear(y);
  return t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

/**
 * A date in an argument that no calendar has (2024-02-30, 2023-02-29), or undefined: only the
 * values typed as the generated DateTime scalar, which checks the shape of the text but not the
 * day (Neo4j would then compare against nothing). Walks value and type together without
 * recursion; the request bounds have already limited the argument's size.
 */
export function impossibleDate(type: GraphQLInputType, value: unknown): { value: string; problem: string } | undefined {
  const stack: Array<{ t: GraphQLInputType; v: unknown }> = [{ t: type, v: value }];
  while (stack.length > 0) {
    const { t, v } = stack.pop() as { t: GraphQLInputType; v: unknown };
    if (v === null || v === undefined) continue;
    const nullable = getNullableType(t);
    if (isListType(nullable)) {
      for (const x of Array.isArray(v) ? v : [v]) stack.push({ t: nullable.ofType, v: x });
    } else if (isInputObjectType(nullable)) {
      const fields = nullable.getFields();
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        const f = fields[k];
        if (f) stack.push({ t: f.type, v: x });
      }
    } else if (isScalarType(nullable) && nullable.name === `${EXPLORE_PREFIX}DateTime`) {
      const parts = ymd(v);
      if (parts && !realDay(parts[0], parts[1], parts[2])) return { value: parts[3], problem: 'a day that month does not have: check the date' };
      const offset = offsetMinutes(v);
      if (offset !== undefined && Math.abs(offset) > MAX_OFFSET_MINUTES) {
        return { value: String(v), problem: 'a UTC offset beyond ±18:00, which no time zone has: use an offset between -18:00 and +18:00, or Z' };
      }
    }
  }
  return undefined;
}

const badInput = (message: string) => new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });

/**
 * BAD_USER_INPUT for paging arguments of the generated exploration fields that @neo4j/graphql
 * would otherwise ignore or fail on: a cursor it did not issue (silently read from the start),
 * a negative `first`, `limit` or `offset`, a date no calendar has. Runs on the validated
 * document, before execution.
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
        const whereArg = field.args.find((a) => a.name === 'where');
        const impossible = error || !whereArg ? undefined : impossibleDate(whereArg.type, args.where);
        if (impossible) error = badInput(`${name}: "where" holds the date-time ${impossible.value.slice(0, 60)}, ${impossible.problem}`);
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
