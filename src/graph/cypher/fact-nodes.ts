import { CypherRunner } from './cypher-runner';
import { namespaceKey } from '../../platform/neo4j/namespace-key';
import { wordKeys } from '../../common/word-forms';

export interface FactSourceRow {
  eventId: string;
  /** -1 when Silver has no span for this source. */
  spanStart: number;
  spanEnd: number;
  quote: string | null;
}

/** One Silver fact as the projection reads it (timestamps as ISO 8601 strings). */
export interface FactNodeRow {
  id: string;
  namespace: string;
  statement: string;
  factType: string;
  predicate: string | null;
  object: string | null;
  isNegation: boolean;
  confidence: number;
  importance: number;
  validFrom: string;
  validTo: string | null;
  recordedAt: string;
  retiredAt: string | null;
  extractionModel: string;
  supersededBy: string | null;
  subjectEntityId: string | null;
  objectEntityId: string | null;
  /** The statement's embedding (null when Silver has none) and the model that made it: search compares only same-model vectors. */
  embedding: number[] | null;
  embeddingModel: string | null;
  sources: FactSourceRow[];
}

/**
 * Idempotent upsert of `(:Fact)` nodes; the edges are `syncFactEdges`'s job. The embedding is
 * stored as 32-bit floats (`db.create.setNodeVectorProperty`, what the model produced and Silver
 * keeps) with its length in `embeddingDims`, which the exact vector channel filters on without
 * reading the vector (`backfillVectorStorage` in platform/neo4j/neo4j-client.ts upgrades older nodes).
 * The keyword channel matches the statement's word keys (`stems`, common/word-forms.ts: "allergic"
 * meets "allergies"), computed here from the statement as projected, overlays applied.
 */
export async function mergeFactNodes(tx: CypherRunner, rows: readonly FactNodeRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.run(
    `UNWIND $rows AS r
     MERGE (f:Fact {id: r.id})
     SET f.namespace = r.namespace, f.nsKey = r.nsKey, f.statement = r.statement, f.stems = r.stems, f.factType = r.factType, f.predicate = r.predicate,
         f.object = r.object, f.isNegation = r.isNegation, f.confidence = r.confidence, f.importance = r.importance,
         f.validFrom = datetime(r.validFrom), f.validTo = datetime(r.validTo), f.recordedAt = datetime(r.recordedAt),
         f.retiredAt = datetime(r.retiredAt), f.extractionModel = r.extractionModel,
         f.embeddingModel = r.embeddingModel, f.embeddingDims = size(r.embedding)
     FOREACH (_ IN CASE WHEN r.embedding IS NULL THEN [1] ELSE [] END | REMOVE f.embedding)
     WITH f, r WHERE r.embedding IS NOT NULL
     CALL db.create.setNodeVectorProperty(f, 'embedding', r.embedding)`,
    {
      rows: rows.map(({ sources: _s, subjectEntityId: _a, objectEntityId: _b, supersededBy: _c, ...node }) => ({
        ...node,
        nsKey: namespaceKey(node.namespace),
        stems: wordKeys(node.statement).join(' '),
      })),
    },
  );
}
