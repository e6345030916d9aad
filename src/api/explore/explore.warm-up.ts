import { graphql, GraphQLSchema } from 'graphql';
import type { RequestScope } from '../../scope/request-scope';

/**
 * The exploration shapes the README and docs/explore.md show, with their filters as variables
 * (@neo4j/graphql passes a filter's value as a Cypher parameter whether the query spells it inline
 * or as a variable, so both meet the same cached plan).
 */
const DOCUMENTED_SHAPES = [
  `query($ns: String!, $name: String!) { graphEntities(where: { namespace: { eq: $ns }, name: { eq: $name } }) { name facts(limit: 10) { statement derivedFrom { occurredAt } } } }`,
  `query($name: String!) { graphEntities(where: { name: { eq: $name } }) { name facts { statement } } }`,
];

/**
 * Runs each documented exploration shape once before the API serves, over the start's warm-up
 * rows (`scope` may list only their namespace): every new shape of generated Cypher costs Neo4j's
 * planner about a second, and the first `graphEntities` after a start took 2-3 s
 * (docs/explore.md "Cost"). Best effort: errors (the warm-up facts have no Postgres rows to read
 * their text from) are ignored; the Cypher has run by then.
 */
export async function warmUpExploration(schema: GraphQLSchema, scope: RequestScope, vars: { ns: string; name: string }): Promise<void> {
  for (const source of DOCUMENTED_SHAPES) await graphql({ schema, source, contextValue: scope, variableValues: vars });
}
