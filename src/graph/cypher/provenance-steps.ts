import { CypherReader } from './graph-read';

export type ProvenanceVia = 'DIRECT' | 'SUPERSEDED' | 'SUPERSEDING';

/** One (fact, event, span) the start fact rests on, directly or through its supersession chain. */
export interface ProvenanceStepRow {
  factId: string;
  eventId: string;
  /** null when Silver has no span (projected as -1). */
  spanStart: number | null;
  spanEnd: number | null;
  quote: string | null;
  via: ProvenanceVia;
  /** SUPERSEDES hops from the start fact (0 for DIRECT). */
  distance: number;
}

// Bounds the chain walk; real chains are a handful of hops.
const MAX_CHAIN = 64;

/**
 * fact -> DERIVED_FROM -> events, for the fact itself, every fact it SUPERSEDES transitively and
 * every fact that supersedes it transitively. Every node and edge on the way must be in $ns.
 */
export async function readProvenanceSteps(tx: CypherReader, namespace: string, factId: string): Promise<ProvenanceStepRow[]> {
  const res = await tx.run(
    `MATCH (start:Fact {id: $id}) WHERE start.namespace = $ns
     CALL (start) {
       MATCH (start)-[d:DERIVED_FROM]->(e:Event)
       WHERE d.namespace = $ns AND e.namespace = $ns
       RETURN start AS f, d, e, 'DIRECT' AS via, 0 AS distance
       UNION
       MATCH p = (start)-[:SUPERSEDES*1..${MAX_CHAIN}]->(f:Fact)
       WHERE all(n IN nodes(p) WHERE n.namespace = $ns) AND all(r IN relationships(p) WHERE r.namespace = $ns)
       MATCH (f)-[d:DERIVED_FROM]->(e:Event)
       WHERE d.namespace = $ns AND e.namespace = $ns
       RETURN f, d, e, 'SUPERSEDED' AS via, length(p) AS distance
       UNION
       MATCH p = (start)<-[:SUPERSEDES*1..${MAX_CHAIN}]-(f:Fact)
       WHERE all(n IN nodes(p) WHERE n.namespace = $ns) AND all(r IN relationships(p) WHERE r.namespace = $ns)
       MATCH (f)-[d:DERIVED_FROM]->(e:Event)
       WHERE d.namespace = $ns AND e.namespace = $ns
       RETURN f, d, e, 'SUPERSEDING' AS via, length(p) AS distance
     }
     RETURN f.id AS factId, e.id AS eventId, d.spanStart AS spanStart, d.spanEnd AS spanEnd, d.quote AS quote, via, distance
     ORDER BY CASE via WHEN 'DIRECT' THEN 0 WHEN 'SUPERSEDED' THEN 1 ELSE 2 END, distance, factId, eventId, spanStart`,
    { id: factId, ns: namespace },
  );
  return res.records.map((r) => {
    const o = r.toObject() as ProvenanceStepRow;
    const noSpan = o.spanStart === null || o.spanStart < 0;
    return { ...o, spanStart: noSpan ? null : o.spanStart, spanEnd: noSpan ? null : o.spanEnd, distance: Number(o.distance) };
  });
}
