import neo4j from 'neo4j-driver';
import { CypherReader, RELATED_EDGE, RELATED_IS_VISIBLE, RelatedEdge } from './graph-read';

export interface RelatedFilter {
  /** ISO 8601 instant, or null for the current graph. */
  asOf: string | null;
  /** Relationship types to follow, or null for all. */
  types: string[] | null;
}

export interface FrontierHop {
  edge: RelatedEdge;
  /** The entity on the other side of the edge from the frontier entity. */
  neighbourId: string;
}

/**
 * One breadth-first step: the visible RELATED edges (either direction) from the frontier entities
 * to live entities of $ns, at most `limit` rows (the caller asks for one more than it accepts,
 * to detect an overflow without reading the whole graph).
 */
export async function expandFrontier(
  tx: CypherReader,
  namespace: string,
  frontier: readonly string[],
  filter: RelatedFilter,
  limit: number,
): Promise<FrontierHop[]> {
  if (frontier.length === 0) return [];
  const res = await tx.run(
    `UNWIND $frontier AS id
     MATCH (a:Entity {id: id})-[x:RELATED]-(b:Entity)
     WHERE a.namespace = $ns AND b.namespace = $ns AND b.retiredAt IS NULL AND ${RELATED_IS_VISIBLE('x')}
     RETURN DISTINCT ${RELATED_EDGE('x')} AS edge, b.id AS neighbourId
     LIMIT $limit`,
    { frontier, ns: namespace, asOf: filter.asOf, types: filter.types, limit: neo4j.int(limit) },
  );
  return res.records.map((r) => ({ edge: r.get('edge') as RelatedEdge, neighbourId: String(r.get('neighbourId')) }));
}
