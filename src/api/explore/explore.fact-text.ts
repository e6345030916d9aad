import {
  DocumentNode,
  FieldNode,
  FragmentDefinitionNode,
  getNamedType,
  GraphQLFieldConfig,
  GraphQLNamedType,
  GraphQLResolveInfo,
  GraphQLSchema,
  isObjectType,
  Kind,
  OperationDefinitionNode,
  SelectionNode,
  SelectionSetNode,
  TypeInfo,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import type { RequestScope } from '../../scope/request-scope';
import { EXPLORE_PREFIX } from './explore.typedefs';

/**
 * Graph exploration serves fact text from Postgres, through the FactReader (the request's
 * loaders), like every other path: Neo4j answers which facts and edges, its copies of
 * `statement` and `quote` only serve `where` and `sort`.
 *
 * The generated resolvers return only what was selected, so before a root field runs, its
 * selection gets hidden aliased fields the text resolvers need (a fact's id, the node at the other
 * end of a DERIVED_FROM edge, the edge's span). They travel in the result objects but are not in
 * the caller's document, so they never reach the response.
 */

const FACT = `${EXPLORE_PREFIX}Fact`;
const EVENT = `${EXPLORE_PREFIX}Event`;
const DERIVED_FROM = `${EXPLORE_PREFIX}DerivedFrom`;
const ID = '_mmId';
const NODE = '_mmNode';
const SPAN_START = '_mmSpanStart';
const SPAN_END = '_mmSpanEnd';

const field = (alias: string, name: string, selectionSet?: SelectionSetNode): FieldNode => ({
  kind: Kind.FIELD,
  alias: { kind: Kind.NAME, value: alias },
  name: { kind: Kind.NAME, value: name },
  selectionSet,
});
const selectionSet = (selections: readonly SelectionNode[]): SelectionSetNode => ({ kind: Kind.SELECTION_SET, selections });

/** Edge types whose `properties` are DERIVED_FROM's (Fact.derivedFromConnection, Event.factsConnection). */
function isDerivedFromEdge(type: GraphQLNamedType | null | undefined): boolean {
  const props = type && isObjectType(type) ? type.getFields().properties : undefined;
  return props !== undefined && getNamedType(props.type).name === DERIVED_FROM;
}

/** The hidden fields a selection set on `type` needs. */
function hiddenFields(type: GraphQLNamedType | null | undefined): FieldNode[] {
  const name = type?.name;
  if (name === FACT || name === EVENT) return [field(ID, 'id')];
  if (name === DERIVED_FROM) return [field(SPAN_START, 'spanStart'), field(SPAN_END, 'spanEnd')];
  if (isDerivedFromEdge(type)) return [field(NODE, 'node', selectionSet([field(ID, 'id')]))];
  return [];
}

/** `info` with the hidden fields added to every selection set of the root field and of the fragments it uses. */
export function withHiddenFields(info: GraphQLResolveInfo): GraphQLResolveInfo {
  const operation: OperationDefinitionNode = {
    kind: Kind.OPERATION_DEFINITION,
    operation: info.operation.operation,
    selectionSet: selectionSet(info.fieldNodes),
  };
  const document: DocumentNode = { kind: Kind.DOCUMENT, definitions: [operation, ...Object.values(info.fragments)] };
  const typeInfo = new TypeInfo(info.schema);
  const augmented = visit(
    document,
    visitWithTypeInfo(typeInfo, {
      SelectionSet(node) {
        const missing = hiddenFields(typeInfo.getParentType()).filter(
          (f) => !node.selections.some((s) => s.kind === Kind.FIELD && s.alias?.value === f.alias?.value),
        );
        return missing.length === 0 ? undefined : { ...node, selections: [...node.selections, ...missing] };
      },
    }),
  );
  const [op, ...fragments] = augmented.definitions as [OperationDefinitionNode, ...FragmentDefinitionNode[]];
  return {
    ...info,
    fieldNodes: op.selectionSet.selections as FieldNode[],
    fragments: Object.fromEntries(fragments.map((f) => [f.name.value, f])),
  };
}

type Row = Record<string, unknown>;
/** Which fact and event a DERIVED_FROM connection, edge or properties object belongs to. */
type EdgeEnds = { factId?: string; eventId?: string };

/** Per request: connection/edge/properties object → the ends of its DERIVED_FROM edge. */
const endsOf = new WeakMap<object, EdgeEnds>();

const idOf = (row: unknown): string | undefined => {
  const id = row && typeof row === 'object' ? (row as Row)[ID] : undefined;
  return typeof id === 'string' ? id : undefined;
};
const span = (v: unknown): number | null => (typeof v === 'number' && v >= 0 ? v : null);

type Resolve = NonNullable<GraphQLFieldConfig<unknown, RequestScope>['resolve']>;

/**
 * The resolver wrappers that serve fact text through the reader, for `schema`'s field `typeName.fieldName`;
 * undefined for fields that carry no fact text and lead to none.
 */
export function factTextResolver(schema: GraphQLSchema, typeName: string, fieldName: string, resolve: Resolve): Resolve | undefined {
  const type = schema.getType(typeName);
  if (!isObjectType(type)) return undefined;
  const returns = getNamedType(type.getFields()[fieldName]?.type);

  if (typeName === FACT && fieldName === 'statement') {
    return async (source, _args, ctx) => {
      const id = idOf(source);
      const fact = id ? await ctx.loaders.factById.load(id) : null;
      // Neo4j is a projection of Postgres: a fact node with no Silver row is a broken invariant.
      if (!fact) throw new Error(`graph exploration: fact ${id ?? '(no id)'} is in Neo4j but not in Silver; run rebuildGraph`);
      return fact.statement;
    };
  }
  if (typeName === FACT && fieldName === 'object') {
    // Composed like the statement (silver/text-visibility.ts), from Postgres through the reader.
    return async (source, _args, ctx) => {
      const id = idOf(source);
      const fact = id ? await ctx.loaders.factById.load(id) : null;
      if (!fact) throw new Error(`graph exploration: fact ${id ?? '(no id)'} is in Neo4j but not in Silver; run rebuildGraph`);
      return fact.objectValue;
    };
  }
  if (typeName === DERIVED_FROM && fieldName === 'quote') {
    return async (source, _args, ctx) => {
      const ends = source && typeof source === 'object' ? endsOf.get(source) : undefined;
      if (!ends?.factId || !ends.eventId) return null;
      const row = source as Row;
      const [start, end] = [span(row[SPAN_START]), span(row[SPAN_END])];
      const sources = await ctx.loaders.sourcesByFactId.load(ends.factId);
      return sources.find((s) => s.eventId === ends.eventId && s.spanStart === start && s.spanEnd === end)?.quote ?? null;
    };
  }
  // Carry the ends of DERIVED_FROM edges down to their properties: node → connection → edges → edge → properties.
  const returnsConnection = isObjectType(returns) && isDerivedFromEdge(getNamedType(returns.getFields().edges?.type));
  if ((typeName === FACT || typeName === EVENT) && returnsConnection) {
    return async (source, args, ctx, info) => {
      const result: unknown = await resolve(source, args, ctx, info);
      const id = idOf(source);
      if (result && typeof result === 'object' && id) endsOf.set(result, typeName === FACT ? { factId: id } : { eventId: id });
      return result;
    };
  }
  if (fieldName === 'edges' && isDerivedFromEdge(returns)) {
    return async (source, args, ctx, info) => {
      const result: unknown = await resolve(source, args, ctx, info);
      const owner = source && typeof source === 'object' ? endsOf.get(source) : undefined;
      if (owner && Array.isArray(result)) {
        for (const edge of result) {
          const other = idOf((edge as Row | null)?.[NODE]);
          if (edge && typeof edge === 'object' && other)
            endsOf.set(edge, owner.factId ? { factId: owner.factId, eventId: other } : { factId: other, eventId: owner.eventId });
        }
      }
      return result;
    };
  }
  if (fieldName === 'properties' && isDerivedFromEdge(type)) {
    return async (source, args, ctx, info) => {
      const result: unknown = await resolve(source, args, ctx, info);
      const ends = source && typeof source === 'object' ? endsOf.get(source) : undefined;
      if (ends && result && typeof result === 'object') endsOf.set(result, ends);
      return result;
    };
  }
  return undefined;
}
