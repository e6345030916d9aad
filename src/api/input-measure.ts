import {
  DocumentNode,
  getNullableType,
  GraphQLInputFieldMap,
  GraphQLInputType,
  GraphQLSchema,
  isInputObjectType,
  isListType,
  Kind,
  OperationDefinitionNode,
  TypeInfo,
  typeFromAST,
  ValueNode,
  visit,
  visitWithTypeInfo,
} from 'graphql';

/** What the arguments of one operation weigh: measured before graphql-js coerces any of them. */
export interface InputMeasure {
  /** Input objects plus list elements, in literals and variables (each variable counted once). */
  nodes: number;
  /** Input objects inside generated `where` filters (each a predicate the graph query evaluates). */
  filterObjects: number;
  /** Deepest input-object nesting of any argument (lists add none; JSON scalars are leaves). */
  depth: number;
}

/** Thrown inside a walk once a budget is spent, so measuring stays as cheap as the bound. */
class OverBudget extends Error {}

interface Budget {
  readonly maxNodes: number;
  readonly maxFilterObjects: number;
}

/**
 * Measures every argument value by its declared input type: input objects and list elements
 * count, scalars (including the JSON `rawPayload`) are leaves whose content is not walked. Stops
 * as soon as a budget is exceeded and returns a measure just over it.
 */
export function measureInputs(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode | undefined,
  variables: Record<string, unknown>,
  budget: Budget,
): InputMeasure {
  const m: InputMeasure = { nodes: 0, filterObjects: 0, depth: 0 };
  const varTypes = new Map<string, GraphQLInputType>();
  for (const def of operation?.variableDefinitions ?? []) {
    const t = typeFromAST(schema, def.type as never) as GraphQLInputType | undefined;
    if (t) varTypes.set(def.variable.name.value, t);
  }
  const add = (filter: boolean) => {
    m.nodes++;
    if (filter) m.filterObjects++;
    if (m.nodes > budget.maxNodes || m.filterObjects > budget.maxFilterObjects) throw new OverBudget();
  };
  const filterVars = new Set<string>();
  try {
    const typeInfo = new TypeInfo(schema);
    visit(
      document,
      visitWithTypeInfo(typeInfo, {
        Argument(node) {
          const type = typeInfo.getArgument()?.type;
          const filter = node.name.value === 'where';
          const walk = (v: ValueNode, t: GraphQLInputType | undefined, level: number): void => {
            const s = shapeOf(t);
            if (s.leaf && v.kind !== Kind.VARIABLE) return;
            switch (v.kind) {
              case Kind.OBJECT: {
                add(filter);
                m.depth = Math.max(m.depth, level + 1);
                for (const f of v.fields) walk(f.value, s.fields?.[f.name.value]?.type, level + 1);
                return;
              }
              case Kind.LIST: {
                const item = s.item;
                for (const el of v.values) {
                  add(false);
                  walk(el, item, level);
                }
                return;
              }
              case Kind.VARIABLE: {
                if (filter) filterVars.add(v.name.value);
                m.depth = Math.max(m.depth, level + valueDepth(variables[v.name.value], t));
                return;
              }
              default:
                return;
            }
          };
          walk(node.value, type, 0);
          return false;
        },
      }),
    );
    for (const [name, type] of varTypes) {
      if (!(name in variables)) continue;
      const filter = filterVars.has(name);
      const walk = (v: unknown, t: GraphQLInputType | undefined): void => {
        const s = shapeOf(t);
        if (s.leaf) return;
        if (Array.isArray(v)) {
          for (const el of v) {
            add(false);
            walk(el, s.item);
          }
        } else if (v !== null && typeof v === 'object') {
          if (s.objectLeaf) return;
          add(filter);
          for (const [k, child] of Object.entries(v)) walk(child, s.objectFields?.[k]?.type);
        }
      };
      walk(variables[name], type);
      m.depth = Math.max(m.depth, valueDepth(variables[name], type));
    }
  } catch (err) {
    if (!(err instanceof OverBudget)) throw err;
  }
  return m;
}

/** What a walk needs to know of one declared input type, worked out once per type. */
interface TypeShape {
  /** A scalar or enum: its value (the JSON `rawPayload` included) is not walked; its own limits apply. */
  leaf: boolean;
  /** The element type when the type is a list. */
  item: GraphQLInputType | undefined;
  /** The fields when the type is an input object. */
  fields: GraphQLInputFieldMap | undefined;
  /** An object value met where this type is declared (a list coerces one value to its element): is it a leaf? */
  objectLeaf: boolean;
  /** …and if not, the fields it is read against. */
  objectFields: GraphQLInputFieldMap | undefined;
}

const UNTYPED: TypeShape = { leaf: false, item: undefined, fields: undefined, objectLeaf: false, objectFields: undefined };

/**
 * Types are classified once and kept per type object (a schema's types live as long as it does):
 * graphql-js's type predicates are costly when they answer no (its development-mode check), and
 * a 500-event batch asks them thousands of times.
 */
const shapes = new WeakMap<GraphQLInputType, TypeShape>();

function shapeOf(t: GraphQLInputType | undefined): TypeShape {
  if (t === undefined) return UNTYPED;
  let s = shapes.get(t);
  if (s) return s;
  const nt = getNullableType(t);
  const isLeaf = (x: GraphQLInputType | undefined): boolean => x !== undefined && !isListType(x) && !isInputObjectType(getNullableType(x));
  const item = isListType(nt) ? (nt.ofType as GraphQLInputType) : undefined;
  const target = item !== undefined ? getNullableType(item) : nt;
  s = {
    leaf: isLeaf(nt),
    item,
    fields: isInputObjectType(nt) ? nt.getFields() : undefined,
    objectLeaf: isLeaf(target),
    objectFields: isInputObjectType(target) ? target.getFields() : undefined,
  };
  shapes.set(t, s);
  return s;
}

/** Input-object nesting of a variable value of type `t` (iterative: no recursion on hostile depth). */
export function valueDepth(value: unknown, t: GraphQLInputType | undefined): number {
  let max = 0;
  const stack: Array<{ v: unknown; t: GraphQLInputType | undefined; level: number }> = [{ v: value, t, level: 0 }];
  while (stack.length > 0) {
    const { v, t: type, level } = stack.pop() as { v: unknown; t: GraphQLInputType | undefined; level: number };
    const s = shapeOf(type);
    if (s.leaf) continue;
    if (Array.isArray(v)) {
      for (const el of v) stack.push({ v: el, t: s.item, level });
    } else if (v !== null && typeof v === 'object') {
      if (s.objectLeaf) continue;
      max = Math.max(max, level + 1);
      for (const [k, child] of Object.entries(v)) stack.push({ v: child, t: s.objectFields?.[k]?.type, level: level + 1 });
    }
  }
  return max;
}
