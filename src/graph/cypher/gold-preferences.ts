import neo4j from 'neo4j-driver';
import { visibleCypher } from '../../silver/visibility';
import { PREFERENCE_FACT_TYPE, PREFERENCE_PREDICATES } from '../../silver/preference-rules';
import { CypherReader } from './graph-read';

/** How far back a preference's SUPERSEDES chain is followed (a literal: Cypher cannot take a bound as a parameter). */
export const MAX_REPLACED_HOPS = 20;

/** One preference of a Gold entity and the facts on its SUPERSEDES chain (what it replaced, transitively). */
export interface GoldPreferenceIds {
  goldId: string;
  factId: string;
  replacedIds: string[];
}

/**
 * The preferences of each Gold entity: facts whose subject is one of its live Silver members
 * (`(:GoldEntity)-[:MERGED_FROM]->(:Entity)<-[:ABOUT {role: 'subject'}]-(:Fact)`), of fact type
 * `preference` or with a preference predicate (silver/preference-rules.ts, passed as
 * parameters), visible by the shared rule (current without `asOf`, valid at `asOf` otherwise), at
 * most `limit` per entity; and for each the facts it superseded (at most `replacedLimit`), following SUPERSEDES up to
 * MAX_REPLACED_HOPS inside the namespace. One statement for any number of Gold entities; the
 * caller re-reads every row from Postgres.
 */
export async function goldPreferenceIds(
  tx: CypherReader,
  goldIds: readonly string[],
  asOf: Date | null,
  limit: number,
  replacedLimit: number,
): Promise<GoldPreferenceIds[]> {
  if (goldIds.length === 0) return [];
  const res = await tx.run(
    `UNWIND $ids AS gid
     MATCH (g:GoldEntity {id: gid})-[:MERGED_FROM]->(:Entity)<-[:ABOUT {role: 'subject'}]-(f:Fact)
     WHERE f.namespace = g.namespace AND (f.factType = $factType OR toLower(f.predicate) IN $predicates)
       AND ${visibleCypher('f', { asOf: 'asOf' })}
     WITH DISTINCT gid, g, f
     ORDER BY f.confidence DESC, f.validFrom DESC, f.id
     WITH gid, g, collect(f)[0..$limit] AS prefs
     UNWIND prefs AS f
     OPTIONAL MATCH p = (f)-[:SUPERSEDES*1..${MAX_REPLACED_HOPS}]->(old:Fact)
     WHERE all(n IN nodes(p) WHERE n.namespace = g.namespace)
     WITH gid, f, old, length(p) AS hops ORDER BY hops
     WITH gid, f, collect(DISTINCT old.id) AS replaced
     RETURN gid, f.id AS factId, replaced[0..$replacedLimit] AS replaced`,
    {
      ids: [...goldIds],
      asOf: asOf?.toISOString() ?? null,
      limit: neo4j.int(limit),
      replacedLimit: neo4j.int(replacedLimit),
      factType: PREFERENCE_FACT_TYPE,
      predicates: [...PREFERENCE_PREDICATES],
    },
  );
  return res.records.map((r) => ({ goldId: r.get('gid') as string, factId: r.get('factId') as string, replacedIds: r.get('replaced') as string[] }));
}
