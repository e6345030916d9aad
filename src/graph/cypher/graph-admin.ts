import neo4j, { Session } from 'neo4j-driver';
import { assertIdentifier, CypherRunner } from './cypher-runner';

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

/** Node ids / edge keys of a namespace, per label and relationship type, in the same key shape as the Postgres side. */
export async function readGraphKeys(tx: CypherRunner, namespace: string): Promise<Record<string, string[]>> {
  const q = async (cypher: string): Promise<string[]> => (await tx.run(cypher, { ns: namespace })).records.map((r) => String(r.get('k')));
  const keys: Record<string, string[]> = {};
  for (const label of PROJECTED_LABELS) keys[label] = await q(`MATCH (n:${assertIdentifier(label)}) WHERE n.namespace = $ns RETURN n.id AS k`);
  keys.DERIVED_FROM = await q(
    `MATCH (f:Fact)-[d:DERIVED_FROM]->(e:Event) WHERE f.namespace = $ns
     RETURN f.id + '->' + e.id + '@' + toString(toInteger(d.spanStart)) + ':' + toString(toInteger(d.spanEnd)) AS k`,
  );
  keys.ABOUT = await q(`MATCH (f:Fact)-[a:ABOUT]->(n:Entity) WHERE f.namespace = $ns RETURN f.id + '->' + n.id + '@' + coalesce(a.role, '') AS k`);
  keys.SUPERSEDES = await q(`MATCH (newer:Fact)-[:SUPERSEDES]->(f:Fact) WHERE f.namespace = $ns RETURN newer.id + '->' + f.id AS k`);
  keys.RELATED = await q(`MATCH (a:Entity)-[x:RELATED]->(:Entity) WHERE a.namespace = $ns RETURN x.id AS k`);
  return keys;
}
