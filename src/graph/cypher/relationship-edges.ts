import { CypherRunner } from './cypher-runner';

/** One Silver relationship; `sources` = the distinct ids of the events it rests on (provenance). */
export interface RelationshipEdgeRow {
  id: string;
  namespace: string;
  type: string;
  sourceEntityId: string;
  targetEntityId: string;
  confidence: number;
  validFrom: string;
  validTo: string | null;
  retiredAt: string | null;
  sources: string[];
}

/**
 * Idempotent upsert of `(Entity)-[:RELATED {id, type, ...}]->(Entity)`, MERGEd by the
 * relationship's id (its endpoints never change). Missing endpoints become placeholders.
 */
export async function mergeRelationshipEdges(tx: CypherRunner, rows: readonly RelationshipEdgeRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.run(
    `UNWIND $rows AS r
     MERGE (a:Entity {id: r.sourceEntityId})
       ON CREATE SET a.namespace = r.namespace
     MERGE (b:Entity {id: r.targetEntityId})
       ON CREATE SET b.namespace = r.namespace
     MERGE (a)-[x:RELATED {id: r.id}]->(b)
     SET x.namespace = r.namespace, x.type = r.type, x.confidence = r.confidence, x.validFrom = datetime(r.validFrom),
         x.validTo = datetime(r.validTo), x.retiredAt = datetime(r.retiredAt), x.sources = r.sources`,
    { rows },
  );
}
