import { CypherReader, RELATED_EDGE, RelatedEdge } from './graph-read';

export interface DerivedFactRow {
  factId: string;
  spanStart: number | null;
  spanEnd: number | null;
  quote: string | null;
}

export interface DerivedFromEventRows {
  facts: DerivedFactRow[];
  /** Entities the derived facts are ABOUT (subject or object). */
  entityIds: string[];
  /** RELATED edges whose `sources` hold the event id. */
  relationships: RelatedEdge[];
}

/** event -> every fact (with span), entity and relationship derived from it, all within $ns. */
export async function readDerivedFromEvent(tx: CypherReader, namespace: string, eventId: string): Promise<DerivedFromEventRows> {
  const facts = await tx.run(
    `MATCH (e:Event {id: $id})<-[d:DERIVED_FROM]-(f:Fact)
     WHERE e.namespace = $ns AND d.namespace = $ns AND f.namespace = $ns
     RETURN f.id AS factId, d.spanStart AS spanStart, d.spanEnd AS spanEnd, d.quote AS quote
     ORDER BY factId, spanStart`,
    { id: eventId, ns: namespace },
  );
  const entities = await tx.run(
    `MATCH (e:Event {id: $id})<-[d:DERIVED_FROM]-(f:Fact)-[a:ABOUT]->(n:Entity)
     WHERE e.namespace = $ns AND d.namespace = $ns AND f.namespace = $ns AND a.namespace = $ns AND n.namespace = $ns
     RETURN DISTINCT n.id AS id ORDER BY id`,
    { id: eventId, ns: namespace },
  );
  const rels = await tx.run(
    `MATCH (a:Entity)-[x:RELATED]->(b:Entity)
     WHERE x.namespace = $ns AND $id IN x.sources AND a.namespace = $ns AND b.namespace = $ns
     RETURN ${RELATED_EDGE('x')} AS edge ORDER BY edge.id`,
    { id: eventId, ns: namespace },
  );
  return {
    facts: facts.records.map((r) => {
      const o = r.toObject() as DerivedFactRow;
      const noSpan = o.spanStart === null || o.spanStart < 0;
      return { ...o, spanStart: noSpan ? null : o.spanStart, spanEnd: noSpan ? null : o.spanEnd };
    }),
    entityIds: entities.records.map((r) => String(r.get('id'))),
    relationships: rels.records.map((r) => r.get('edge') as RelatedEdge),
  };
}
