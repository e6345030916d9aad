import { ManagedTransaction } from 'neo4j-driver';

/** What the graph operations need: a managed (executeWrite/executeRead) or explicit transaction. */
export type CypherRunner = Pick<ManagedTransaction, 'run'>;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Guards any label or relationship type that has to be interpolated into Cypher text. */
export function assertIdentifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`not a valid Cypher identifier: ${JSON.stringify(name)}`);
  return name;
}
