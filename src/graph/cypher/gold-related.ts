import neo4j from 'neo4j-driver';
import { visibleCypher } from '../../silver/visibility';
import { CypherReader } from './graph-read';

/** One GOLD_RELATED edge found from the frontier, and the Gold entity on its other side. */
export interface GoldHop {
  relationshipId: string;
  neighbourId: string;
}

/**
 * One breadth-first step over Gold: the GOLD_RELATED edges (either direction) of the frontier's
 * Gold entities to live Gold entities, edge and both ends in $ns, visible by the shared rule
 * (current without `asOf`, valid at `asOf` otherwise; retired never), at most `limit` rows (the
 * caller asks for one more than it accepts, to see an overflow without reading the whole graph).
 */
export async function expandGoldFrontier(
  tx: CypherReader,
  namespace: string,
  frontier: readonly string[],
  asOf: Date | null,
  limit: number,
): Promise<GoldHop[]> {
  if (frontier.length === 0) return [];
  const res = await tx.run(
    `UNWIND $frontier AS id
     MATCH (a:GoldEntity {id: id})-[x:GOLD_RELATED]-(b:GoldEntity)
     WHERE a.namespace = $ns AND x.namespace = $ns AND b.namespace = $ns AND b.retiredAt IS NULL
       AND ${visibleCypher('x', { asOf: 'asOf' })}
     RETURN DISTINCT x.id AS relationshipId, b.id AS neighbourId
     LIMIT $limit`,
    { frontier: [...frontier], ns: namespace, asOf: asOf?.toISOString() ?? null, limit: neo4j.int(limit) },
  );
  return res.records.map((r) => ({ relationshipId: String(r.get('relationshipId')), neighbourId: String(r.get('neighbourId')) }));
}
