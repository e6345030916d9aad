import { randomBytes } from 'node:crypto';
import { Neo4jGraphQL } from '@neo4j/graphql';
import { mergeSchemas } from '@graphql-tools/schema';
import { MapperKind, mapSchema } from '@graphql-tools/utils';
import { FilterInputObjectFields, RenameRootFields, RenameTypes, wrapSchema } from '@graphql-tools/wrap';
import { defaultFieldResolver, getNamedType, GraphQLSchema, isObjectType, isScalarType, isSpecifiedScalarType } from 'graphql';
import { Driver } from 'neo4j-driver';
import type { RequestScope } from '../../scope/request-scope';
import { factTextResolver, withHiddenFields } from './explore.fact-text';
import { EXPLORE_NODE_TYPES, EXPLORE_PREFIX, EXPLORE_TYPE_DEFS } from './explore.typedefs';

const ROOT_TYPES = new Set(['Query', 'Mutation', 'Subscription']);

/** What @neo4j/graphql reads from the context of each request (set by `prepareExploreContext`). */
interface Neo4jGraphQLRequestFields {
  jwt?: { namespaces: string[] };
  executionContext?: Driver;
  transaction?: { timeout: number };
}

function newNeo4jGraphQL(driver?: Driver): Neo4jGraphQL {
  return new Neo4jGraphQL({
    typeDefs: EXPLORE_TYPE_DEFS,
    driver,
    features: {
      excludeDeprecatedFields: {
        mutationOperations: true,
        aggregationFilters: true,
        aggregationFiltersOutsideConnection: true,
        relationshipFilters: true,
        attributeFilters: true,
      },
      // Callers never send JWTs: every request carries a `jwt` the server built from the token's
      // grants (trusted by @neo4j/graphql as already verified). A random key keeps the library
      // from warning about missing settings and makes any JWT a client might smuggle in unverifiable.
      authorization: { key: randomBytes(32).toString('hex') },
    },
  });
}

/** Fails unless the running Neo4j has what the generated Cypher needs (version >= 5.23, APOC functions). */
export async function checkExploreCompat(driver: Driver): Promise<void> {
  await newNeo4jGraphQL(driver).checkNeo4jCompat({ driver });
}

const prepared = new WeakMap<object, Promise<void>>();

/**
 * Runs once per request before any generated resolver: the caller must be authenticated and
 * hold `list` somewhere; the namespaces it may list become the `jwt` the authorization filters
 * read, and the query gets the driver and a transaction timeout.
 */
function prepareExploreContext(ctx: RequestScope): Promise<void> {
  let p = prepared.get(ctx);
  if (!p) {
    p = (async () => {
      const explore = ctx.services.explore;
      const namespaces = await explore.explorableNamespaces(ctx.auth);
      const fields: Neo4jGraphQLRequestFields = {
        jwt: { namespaces },
        executionContext: explore.driver,
        transaction: { timeout: explore.settings.queryTimeoutMs },
      };
      Object.assign(ctx, fields);
    })();
    prepared.set(ctx, p);
  }
  return p;
}

/**
 * The generated, read-only exploration schema: @neo4j/graphql over `EXPLORE_TYPE_DEFS`, every
 * type renamed `Graph…` and every root field `graph…`, each root field guarded by
 * `prepareExploreContext`. It needs no database to build (the driver comes per request).
 */
export async function buildExploreSchema(): Promise<GraphQLSchema> {
  const generated = await newNeo4jGraphQL().getSchema();
  const relationshipFilters = relationshipFilterFields(generated);
  const renamed = wrapSchema({
    schema: generated,
    transforms: [
      // See explore.typedefs.ts: relationship filters bypass the authorization filter of their target.
      new FilterInputObjectFields((typeName, fieldName) => !relationshipFilters.has(`${typeName}.${fieldName}`)),
      new RenameTypes((name) => (ROOT_TYPES.has(name) ? name : `${EXPLORE_PREFIX}${name}`), { renameBuiltins: false, renameScalars: true }),
      new RenameRootFields((_op, name) => `${EXPLORE_PREFIX.toLowerCase()}${name.charAt(0).toUpperCase()}${name.slice(1)}`),
    ],
  });
  return mapSchema(renamed, {
    [MapperKind.ROOT_FIELD]: (field) => {
      const resolve = field.resolve ?? defaultFieldResolver;
      return {
        ...field,
        resolve: async (source, args, ctx: RequestScope, info) => {
          await prepareExploreContext(ctx);
          ctx.services.explore.onQuery(info.fieldName);
          // Fact text is served from Postgres through the reader (explore.fact-text.ts): select what it needs.
          return resolve(source, args, ctx, withHiddenFields(info));
        },
      };
    },
    [MapperKind.OBJECT_FIELD]: (field, fieldName, typeName) => {
      const resolve = factTextResolver(renamed, typeName, fieldName, field.resolve ?? defaultFieldResolver);
      return resolve ? { ...field, resolve } : field;
    },
  });
}

/** `<Type>Where.<field>` for every relationship (and relationship-connection) field of the generated node types. */
function relationshipFilterFields(generated: GraphQLSchema): Set<string> {
  const nodeTypes = new Set<string>(EXPLORE_NODE_TYPES);
  const leadsToNode = (typeName: string): boolean => {
    if (nodeTypes.has(typeName)) return true;
    const t = generated.getType(typeName);
    const edges = isObjectType(t) ? t.getFields().edges : undefined;
    const edgeType = edges ? getNamedType(edges.type) : undefined;
    const node = edgeType && isObjectType(edgeType) ? edgeType.getFields().node : undefined;
    return node !== undefined && nodeTypes.has(getNamedType(node.type).name);
  };
  const out = new Set<string>();
  for (const name of EXPLORE_NODE_TYPES) {
    const type = generated.getType(name);
    if (!isObjectType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      if (leadsToNode(getNamedType(field.type).name)) out.add(`${name}Where.${field.name}`);
    }
  }
  return out;
}

/**
 * The code-first schema plus the exploration schema. Only `Query` may be shared; any other name
 * in both would be silently replaced by the merge (STACK.md trap 1), so it fails loudly instead.
 */
export function mergeExploreSchema(app: GraphQLSchema, explore: GraphQLSchema): GraphQLSchema {
  const appTypes = app.getTypeMap();
  const clashes = Object.entries(explore.getTypeMap())
    .filter(([name, type]) => !name.startsWith('__') && !ROOT_TYPES.has(name) && !(isScalarType(type) && isSpecifiedScalarType(type)))
    .map(([name]) => name)
    .filter((name) => appTypes[name] !== undefined);
  const appRootFields = Object.keys(app.getQueryType()?.getFields() ?? {});
  const exploreRootFields = Object.keys(explore.getQueryType()?.getFields() ?? {});
  const fieldClashes = exploreRootFields.filter((f) => appRootFields.includes(f));
  if (clashes.length > 0 || fieldClashes.length > 0 || explore.getMutationType() || explore.getSubscriptionType()) {
    throw new Error(
      `the exploration schema clashes with the code-first one (types: ${clashes.join(', ') || 'none'}; Query fields: ${fieldClashes.join(', ') || 'none'}; ` +
        `mutations/subscriptions must be disabled: ${explore.getMutationType() || explore.getSubscriptionType() ? 'they are not' : 'they are'})`,
    );
  }
  return mergeSchemas({ schemas: [app, explore] });
}
