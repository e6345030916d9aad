import neo4j, { Session } from 'neo4j-driver';
import { assertIdentifier, CypherRunner } from './cypher-runner';
import { GraphKeyCypher, readKeys } from './key-digest';

/** The node labels the Silver/Bronze projection owns (gold nodes are not touched here). */
export const PROJECTED_LABELS = ['Event', 'Fact', 'Entity'] as const;

/**
 * Detach-deletes one label's nodes of a namespace (or of every namespace) in batches. `CALL {}
 * IN TRANSACTIONS` only runs in an auto-commit transaction, hence a session, not a managed one.
 * Returns how many nodes were deleted.
 */
export async function deleteProjectedNodes(session: Session, label: string, namespace: string | null, batchSize: number): Promise<number> {
  const l = assertIdentifier(label);
  const res = await session.run(
    `MATCH (n:${l}) ${namespace === null ? '' : 'WHERE n.namespace = $namespace'}
     CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF $batch ROWS
     RETURN count(*) AS deleted`,
    { namespace, batch: neo4j.int(Math.max(1, Math.floor(batchSize))) },
  );
  return Number(res.records[0]?.get('deleted') ?? 0);
}

/**
 * How the graph spells each Silver kind's key (label or relationship type): a MATCH of the
 * namespace's nodes/edges and the key expression, the same text `GraphSourceRepository` builds in SQL.
 */
export const GRAPH_KEY_CYPHER: Record<string, GraphKeyCypher> = {
  Event: { match: 'MATCH (n:Event) WHERE n.namespace = $ns', key: 'n.id' },
  Fact: { match: 'MATCH (n:Fact) WHERE n.namespace = $ns', key: 'n.id' },
  Entity: { match: 'MATCH (n:Entity) WHERE n.namespace = $ns', key: 'n.id' },
  DERIVED_FROM: {
    match: 'MATCH (f:Fact)-[d:DERIVED_FROM]->(e:Event) WHERE f.namespace = $ns',
    key: "f.id + '->' + e.id + '@' + toString(toInteger(d.spanStart)) + ':' + toString(toInteger(d.spanEnd))",
  },
  ABOUT: { match: 'MATCH (f:Fact)-[a:ABOUT]->(n:Entity) WHERE f.namespace = $ns', key: "f.id + '->' + n.id + '@' + coalesce(a.role, '')" },
  SUPERSEDES: { match: 'MATCH (newer:Fact)-[:SUPERSEDES]->(f:Fact) WHERE f.namespace = $ns', key: "newer.id + '->' + f.id" },
  RELATED: { match: 'MATCH (a:Entity)-[x:RELATED]->(:Entity) WHERE a.namespace = $ns', key: 'x.id' },
};

/** Node ids / edge keys of a namespace, per label and relationship type, in the same key shape as the Postgres side. */
export async function readGraphKeys(tx: CypherRunner, namespace: string): Promise<Record<string, string[]>> {
  return readKeys(tx, namespace, GRAPH_KEY_CYPHER);
}
