import neo4j from 'neo4j-driver';
import { CypherRunner } from './cypher-runner';

/** A count and the first keys behind it (at most `limit`). */
export interface GraphDefects {
  count: number;
  sample: string[];
}

const defects = async (tx: CypherRunner, cypher: string, namespace: string, limit: number): Promise<GraphDefects> => {
  const res = await tx.run(cypher, { ns: namespace, limit: neo4j.int(Math.max(0, Math.floor(limit))) });
  const r = res.records[0];
  if (!r) return { count: 0, sample: [] };
  const n: unknown = r.get('n');
  return { count: neo4j.isInt(n) ? n.toNumber() : Number(n ?? 0), sample: (r.get('sample') as unknown[]).map(String) };
};

/**
 * Gold quality (docs/quality.md, "orphan_gold_nodes"): `(:GoldEntity)` nodes of the namespace with
 * no edge at all (a promoted entity always has MERGED_FROM edges to its Silver members).
 */
export function orphanGoldNodes(tx: CypherRunner, namespace: string, limit: number): Promise<GraphDefects> {
  return defects(
    tx,
    `MATCH (g:GoldEntity) WHERE g.namespace = $ns AND NOT (g)--()
     WITH collect(g.id) AS ids
     RETURN size(ids) AS n, ids[0..$limit] AS sample`,
    namespace,
    limit,
  );
}

/**
 * Two live edges of the same kind (RELATED, GOLD_RELATED) and the same `type` between the same two
 * nodes of the namespace ("duplicate_edges"): Silver writes one relationship per (type, source,
 * target) and Gold's live index allows one, so a twin in the graph is a projection defect.
 */
export function duplicateGraphEdges(tx: CypherRunner, namespace: string, limit: number): Promise<GraphDefects> {
  return defects(
    tx,
    `CALL () {
       MATCH (a:Entity)-[x:RELATED]->(b:Entity) WHERE a.namespace = $ns AND x.retiredAt IS NULL AND x.validTo IS NULL
       RETURN a.id AS a, b.id AS b, 'RELATED:' + x.type AS t
       UNION ALL
       MATCH (a:GoldEntity)-[x:GOLD_RELATED]->(b:GoldEntity) WHERE a.namespace = $ns AND x.retiredAt IS NULL
       RETURN a.id AS a, b.id AS b, 'GOLD_RELATED:' + x.type AS t
     }
     WITH a, b, t, count(*) AS c WHERE c > 1
     WITH collect(t + ' ' + a + '->' + b) AS keys, sum(c - 1) AS n
     RETURN n, keys[0..$limit] AS sample`,
    namespace,
    limit,
  );
}

/** Edges of the namespace whose validTo is before their validFrom ("temporal_consistency", the graph's side). */
export function backwardGraphEdges(tx: CypherRunner, namespace: string, limit: number): Promise<GraphDefects> {
  return defects(
    tx,
    `CALL () {
       MATCH (a:Entity)-[x:RELATED]->(:Entity) WHERE a.namespace = $ns AND x.validTo IS NOT NULL AND x.validTo < x.validFrom RETURN x.id AS id
       UNION ALL
       MATCH (a:GoldEntity)-[x:GOLD_RELATED]->(:GoldEntity) WHERE a.namespace = $ns AND x.validTo IS NOT NULL AND x.validTo < x.validFrom RETURN x.id AS id
     }
     WITH collect(id) AS ids
     RETURN size(ids) AS n, ids[0..$limit] AS sample`,
    namespace,
    limit,
  );
}
