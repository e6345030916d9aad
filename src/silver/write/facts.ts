import { col, Sql } from '../../platform/postgres/sql';
import { DerivationModels } from '../derivation-plan';
import { corroborate } from '../scoring';
import { FactChange } from '../temporal';
import { FactInsert, SourceRow } from './plan-writes';

const pgArray = (v: number[] | null): string | null => (v ? `{${v.join(',')}}` : null);

/** The batch's new facts, in plan order (one statement). */
export async function insertFacts(tx: Sql, namespace: string, runId: string, models: DerivationModels, facts: readonly FactInsert[]): Promise<void> {
  if (facts.length === 0) return;
  await tx.execute(
    `INSERT INTO silver.facts (id, namespace, statement, fact_type, subject_entity_id, predicate, object_value, object_entity_id, is_negation,
                               confidence, importance, valid_from, valid_to, superseded_by, extraction_model, derivation_run_id, embedding, embedding_model)
     SELECT x.id, $1, x.statement, x.fact_type, x.subject_entity_id, x.predicate, x.object_value, x.object_entity_id, x.is_negation,
            x.confidence, x.importance, x.valid_from, x.valid_to, x.superseded_by, $2, $3, x.embedding::real[], $4
       FROM jsonb_to_recordset($5::jsonb) AS x(id uuid, statement text, fact_type text, subject_entity_id uuid, predicate text, object_value text,
            object_entity_id uuid, is_negation boolean, confidence real, importance real, valid_from timestamptz, valid_to timestamptz, superseded_by uuid, embedding text, ord int)
      ORDER BY x.ord`,
    [
      namespace,
      models.extraction,
      runId,
      models.embedding,
      JSON.stringify(
        facts.map((f) => ({
          id: f.id,
          statement: f.statement,
          fact_type: f.factType,
          subject_entity_id: f.subjectEntityId,
          predicate: f.predicate,
          object_value: f.objectValue,
          object_entity_id: f.objectEntityId,
          is_negation: f.isNegation,
          confidence: f.confidence,
          importance: f.importance,
          valid_from: f.validFrom.toISOString(),
          valid_to: f.validTo?.toISOString() ?? null,
          superseded_by: f.supersededBy,
          embedding: pgArray(f.embedding),
          ord: f.ord,
        })),
      ),
    ],
  );
}

/**
 * Applies the planned supersessions and retirements in one statement. A fact no longer current
 * (SUPERSEDE) or believed (UPDATE) when the transaction runs is left alone; returns the ids changed.
 */
export async function applyFactChanges(tx: Sql, changes: readonly FactChange[]): Promise<Set<string>> {
  if (changes.length === 0) return new Set();
  const ids = await tx.returning(
    // A retirement carries the transaction's clock (the plan's `now`), here at its full precision: now().
    `UPDATE silver.facts f SET valid_to = COALESCE(x.valid_to, f.valid_to), retired_at = CASE WHEN x.retire THEN now() ELSE f.retired_at END,
            retired_reason = CASE WHEN x.retire THEN 'update' ELSE f.retired_reason END,
            superseded_by = x.superseded_by
       FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, valid_to timestamptz, retire boolean, superseded_by uuid)
      WHERE f.id = x.id AND f.retired_at IS NULL AND (x.valid_to IS NULL OR f.valid_to IS NULL)
      RETURNING f.id`,
    [
      JSON.stringify(
        changes.map((c) => ({ id: c.id, valid_to: c.validTo?.toISOString() ?? null, retire: c.retiredAt !== null, superseded_by: c.supersededBy })),
      ),
    ],
    (r) => col.string(r, 'id'),
  );
  return new Set(ids);
}

/**
 * Stored facts a SKIP corroborated gain confidence and importance by `scoring.corroborate`, from
 * their scores and source count as this transaction sees them (locked, so nothing moves between
 * the read and the write). Two statements, only when there is such a fact.
 */
export async function corroborateStoredFacts(tx: Sql, targets: ReadonlyArray<{ id: string; added: number }>): Promise<void> {
  if (targets.length === 0) return;
  const current = await tx.rows(
    `SELECT f.id, f.confidence, f.importance, (SELECT count(*) FROM silver.fact_sources s WHERE s.fact_id = f.id) AS sources
       FROM silver.facts f WHERE f.id = ANY($1::uuid[]) FOR UPDATE`,
    [targets.map((t) => t.id)],
    (r) => ({ id: col.string(r, 'id'), confidence: col.number(r, 'confidence'), importance: col.number(r, 'importance'), sources: col.number(r, 'sources') }),
  );
  const added = new Map(targets.map((t) => [t.id, t.added]));
  const rescored = current.map((f) => ({ id: f.id, ...corroborate(f, Math.max(0, f.sources - 1), added.get(f.id) ?? 0) }));
  await tx.execute(
    `UPDATE silver.facts f SET confidence = x.confidence, importance = x.importance
       FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, confidence real, importance real) WHERE f.id = x.id`,
    [JSON.stringify(rescored)],
  );
}

/** Sources of new facts, and of the facts SKIP decisions corroborate (one statement; repeats are ignored). */
export async function insertFactSources(tx: Sql, sources: readonly SourceRow[]): Promise<void> {
  if (sources.length === 0) return;
  await tx.execute(
    `INSERT INTO silver.fact_sources (fact_id, event_id, span_start, span_end, quote)
     SELECT x.fact_id, x.event_id, x.span_start, x.span_end, x.quote FROM jsonb_to_recordset($1::jsonb) AS x(fact_id uuid, event_id uuid, span_start int, span_end int, quote text)
     ON CONFLICT DO NOTHING`,
    [
      JSON.stringify(
        sources.map((s) => ({ fact_id: s.factId, event_id: s.source.eventId, span_start: s.source.start, span_end: s.source.end, quote: s.source.quote })),
      ),
    ],
  );
}
