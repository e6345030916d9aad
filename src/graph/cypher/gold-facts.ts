import neo4j from 'neo4j-driver';
import { visibleCypher } from '../../silver/visibility';
import { CypherReader } from './graph-read';

/** The fact ids about one Gold entity, best first (confidence, then the most recent validFrom). */
export interface GoldFactIds {
  goldId: string;
  factIds: string[];
}

/**
 * The facts about the live Silver members of each Gold entity:
 * `(:GoldEntity)-[:MERGED_FROM]->(:Entity)<-[:ABOUT]-(:Fact)`, in the Gold entity's namespace,
 * visible by the shared rule (src/silver/visibility.ts: current ones without `asOf`, those valid
 * at `asOf` otherwise; retired ones never), at most `limit` per entity. One statement for any
 * number of Gold entities; the caller re-reads the rows from Postgres (the truth).
 */
export async function goldFactIds(tx: CypherReader, goldIds: readonly string[], asOf: Date | null, limit: number): Promise<GoldFactIds[]> {
  if (goldIds.length === 0) return [];
  const res = await tx.run(
    `UNWIND $ids AS gid
     MATCH (g:GoldEntity {id: gid})-[:MERGED_FROM]->(:Entity)<-[:ABOUT]-(f:Fact)
     WHERE f.namespace = g.namespace AND ${visibleCypher('f', { asOf: 'asOf' })}
     WITH DISTINCT gid, f
     ORDER BY f.confidence DESC, f.validFrom DESC, f.id
     WITH gid, collect(f.id) AS ids
     RETURN gid, ids[0..$limit] AS ids`,
    { ids: [...goldIds], asOf: asOf?.toISOString() ?? null, limit: neo4j.int(limit) },
  );
  return res.records.map((r) => ({ goldId: r.get('gid') as string, factIds: r.get('ids') as string[] }));
}
