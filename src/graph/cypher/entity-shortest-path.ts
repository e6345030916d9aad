import { CypherReader, RELATED_EDGE, RELATED_IS_VISIBLE, RelatedEdge } from './graph-read';
import { RelatedFilter } from './entity-neighbourhood';

export interface EntityPath {
  /** Entity ids from the start to the end, in path order. */
  entityIds: string[];
  /** The edges in path order (each may point either way). */
  edges: RelatedEdge[];
}

/**
 * The shortest undirected path of visible RELATED edges between two entities of $ns, at most
 * `maxDepth` hops, or null. `maxDepth` must be a validated small integer: a variable-length
 * bound cannot be a parameter, so it is written into the query text.
 */
export async function readShortestPath(
  tx: CypherReader,
  namespace: string,
  fromId: string,
  toId: string,
  maxDepth: number,
  filter: RelatedFilter,
): Promise<EntityPath | null> {
  if (!Number.isInteger(maxDepth) || maxDepth < 1 || maxDepth > 10) throw new Error(`maxDepth out of range: ${maxDepth}`);
  const res = await tx.run(
    `MATCH (a:Entity {id: $from}), (b:Entity {id: $to})
     WHERE a.namespace = $ns AND b.namespace = $ns
     MATCH p = shortestPath((a)-[xs:RELATED*1..${maxDepth}]-(b))
     WHERE all(x IN xs WHERE ${RELATED_IS_VISIBLE('x')})
       AND all(n IN nodes(p) WHERE n.namespace = $ns AND (n.retiredAt IS NULL OR n = a OR n = b))
     RETURN [n IN nodes(p) | n.id] AS entityIds, [x IN xs | ${RELATED_EDGE('x')}] AS edges`,
    { from: fromId, to: toId, ns: namespace, asOf: filter.asOf, types: filter.types },
  );
  const r = res.records[0];
  return r ? { entityIds: r.get('entityIds') as string[], edges: r.get('edges') as RelatedEdge[] } : null;
}
