import { enqueueOutbox, outboxRows } from '../../platform/outbox';
import { col, Sql } from '../../platform/postgres/sql';
import { PlannedRelationship } from '../derivation-plan';
import { CURRENT, visibleSql } from '../visibility';

/**
 * The batch's relationships: an identical current relationship gains sources instead of a twin;
 * then their sources and outbox rows (three statements when there are any).
 */
export async function writeRelationships(
  tx: Sql,
  namespace: string,
  runId: string,
  extractionModel: string,
  relationships: readonly PlannedRelationship[],
): Promise<void> {
  if (relationships.length === 0) return;
  const rows = await tx.rows(
    `WITH x AS (
       SELECT * FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, type text, source_entity_id uuid, target_entity_id uuid, confidence real, valid_from timestamptz, ord int)
     ), existing AS (
       SELECT DISTINCT ON (x.id) x.id AS planned, r.id FROM x JOIN silver.relationships r
         ON r.namespace = $1 AND r.type = x.type AND r.source_entity_id = x.source_entity_id AND r.target_entity_id = x.target_entity_id
        AND ${visibleSql('r', CURRENT, [])}
     ), fresh AS (
       SELECT DISTINCT ON (x.type, x.source_entity_id, x.target_entity_id) x.* FROM x WHERE x.id NOT IN (SELECT planned FROM existing) ORDER BY x.type, x.source_entity_id, x.target_entity_id, x.ord
     ), ins AS (
       INSERT INTO silver.relationships (id, namespace, type, source_entity_id, target_entity_id, confidence, valid_from, extraction_model, derivation_run_id)
       SELECT id, $1, type, source_entity_id, target_entity_id, confidence, valid_from, $3, $4 FROM fresh RETURNING id, type, source_entity_id, target_entity_id
     )
     SELECT planned, id FROM existing
     UNION ALL
     SELECT x.id AS planned, ins.id FROM x JOIN ins ON ins.type = x.type AND ins.source_entity_id = x.source_entity_id AND ins.target_entity_id = x.target_entity_id`,
    [
      namespace,
      JSON.stringify(
        relationships.map((r, ord) => ({
          id: r.id,
          type: r.type,
          source_entity_id: r.sourceEntityId,
          target_entity_id: r.targetEntityId,
          confidence: r.confidence,
          valid_from: r.validFrom.toISOString(),
          ord,
        })),
      ),
      extractionModel,
      runId,
    ],
    (r) => ({ planned: col.string(r, 'planned'), id: col.string(r, 'id') }),
  );
  const target = new Map(rows.map((r) => [r.planned, r.id]));
  const sources = relationships.flatMap((r) =>
    r.sources.map((s) => ({ relationship_id: target.get(r.id), event_id: s.eventId, span_start: s.start, span_end: s.end, quote: s.quote })),
  );
  await tx.execute(
    `INSERT INTO silver.relationship_sources (relationship_id, event_id, span_start, span_end, quote)
     SELECT x.relationship_id, x.event_id, x.span_start, x.span_end, x.quote FROM jsonb_to_recordset($1::jsonb) AS x(relationship_id uuid, event_id uuid, span_start int, span_end int, quote text)
     WHERE x.relationship_id IS NOT NULL
     ON CONFLICT DO NOTHING`,
    [JSON.stringify(sources)],
  );
  await enqueueOutbox(tx, outboxRows(namespace, 'relationship', [...new Set(target.values())]));
}
