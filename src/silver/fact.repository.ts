import { DataSource } from 'typeorm';
import { Position } from '../common/cursor';
import { col, Sql, SqlRow } from '../platform/postgres/sql';
import { Entity, Fact, FactFilter, FactSourceRow, JudgeDecisionRow, Relationship, RelationshipSourceRow } from './silver.types';
import { visibleSql } from './visibility';
import { EventRedaction, HiddenNames, hiddenNamesIn } from './hidden-names';

const FACT_COLUMNS = `f.id, f.namespace, f.statement, f.fact_type, f.subject_entity_id, f.predicate, f.object_value, f.object_entity_id,
  f.is_negation, f.confidence, f.importance, f.valid_from, f.valid_to, f.recorded_at, f.retired_at, f.superseded_by,
  f.extraction_model, f.derivation_run_id, f.retired_reason, f.effective_importance`;

export const toFact = (r: SqlRow): Fact => ({
  id: col.string(r, 'id'),
  namespace: col.string(r, 'namespace'),
  statement: col.string(r, 'statement'),
  factType: col.string(r, 'fact_type'),
  subjectEntityId: col.stringOrNull(r, 'subject_entity_id'),
  predicate: col.stringOrNull(r, 'predicate'),
  objectValue: col.stringOrNull(r, 'object_value'),
  objectEntityId: col.stringOrNull(r, 'object_entity_id'),
  isNegation: col.boolean(r, 'is_negation'),
  confidence: col.number(r, 'confidence'),
  importance: col.number(r, 'importance'),
  validFrom: col.date(r, 'valid_from'),
  validTo: col.dateOrNull(r, 'valid_to'),
  recordedAt: col.date(r, 'recorded_at'),
  retiredAt: col.dateOrNull(r, 'retired_at'),
  supersededById: col.stringOrNull(r, 'superseded_by'),
  extractionModel: col.string(r, 'extraction_model'),
  derivationRunId: col.string(r, 'derivation_run_id'),
  retiredReason: 'retired_reason' in r ? col.stringOrNull(r, 'retired_reason') : null,
  effectiveImportance: 'effective_importance' in r ? col.numberOrNull(r, 'effective_importance') : null,
});

const toEntity = (r: SqlRow): Entity => ({
  id: col.string(r, 'id'),
  namespace: col.string(r, 'namespace'),
  type: col.string(r, 'type'),
  name: col.string(r, 'name'),
  aliases: col.strings(r, 'aliases'),
  recordedAt: col.date(r, 'recorded_at'),
  retiredAt: col.dateOrNull(r, 'retired_at'),
});

const toRelationship = (r: SqlRow): Relationship => ({
  id: col.string(r, 'id'),
  namespace: col.string(r, 'namespace'),
  type: col.string(r, 'type'),
  sourceEntityId: col.string(r, 'source_entity_id'),
  targetEntityId: col.string(r, 'target_entity_id'),
  confidence: col.number(r, 'confidence'),
  validFrom: col.date(r, 'valid_from'),
  validTo: col.dateOrNull(r, 'valid_to'),
  recordedAt: col.date(r, 'recorded_at'),
  retiredAt: col.dateOrNull(r, 'retired_at'),
});

const toSpan = (r: SqlRow) => ({
  eventId: col.string(r, 'event_id'),
  spanStart: col.numberOrNull(r, 'span_start'),
  spanEnd: col.numberOrNull(r, 'span_end'),
  quote: col.stringOrNull(r, 'quote'),
});

const toPosition = (r: SqlRow): Position => ({ micros: col.string(r, 'pos_us'), id: col.string(r, 'id') });
const escapeLike = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Read-side SQL for Silver; every batch method is one round trip, in key order where it matters. */
export class FactRepository {
  private readonly sql: Sql;

  constructor(ds: DataSource) {
    this.sql = Sql.of(ds);
  }

  async factsByIds(ids: readonly string[]): Promise<Fact[]> {
    if (ids.length === 0) return [];
    return this.sql.rows(`SELECT ${FACT_COLUMNS} FROM silver.facts f WHERE f.id = ANY($1::uuid[])`, [ids], toFact);
  }

  /** `facts(namespace, filter, asOf, includeRetired)`: the visibility rule (src/silver/visibility.ts), then the filters. */
  async list(
    namespace: string,
    filter: FactFilter,
    asOf: Date | null,
    includeRetired: boolean,
    limit: number,
    after?: Position,
  ): Promise<Array<{ fact: Fact; position: Position }>> {
    const params: unknown[] = [namespace];
    const where = ['f.namespace = $1', visibleSql('f', { asOf, includeRetired }, params)];
    const add = (sql: (p: string) => string, v: unknown) => {
      params.push(v);
      where.push(sql(`$${params.length}`));
    };
    if (filter.factTypes?.length) add((p) => `f.fact_type = ANY(${p}::text[])`, filter.factTypes);
    if (filter.subjectEntityId) add((p) => `f.subject_entity_id = ${p}::uuid`, filter.subjectEntityId);
    if (filter.predicate) add((p) => `f.predicate = ${p}`, filter.predicate);
    // Candidates only: FactReader.list keeps those whose composed statement matches (text-visibility.ts).
    if (filter.contains)
      add(
        (p) => `(f.statement ILIKE '%' || ${p} || '%' OR EXISTS (SELECT 1 FROM gold.overlays o WHERE o.fact_id = f.id AND o.kind <> 'ANNOTATION'))`,
        escapeLike(filter.contains),
      );
    if (filter.minImportance !== null && filter.minImportance !== undefined) add((p) => `f.importance >= ${p}`, filter.minImportance);
    if (after) {
      params.push(after.micros, after.id);
      where.push(`(f.recorded_at, f.id) > (timestamptz 'epoch' + $${params.length - 1}::bigint * interval '1 microsecond', $${params.length}::uuid)`);
    }
    params.push(limit);
    return this.sql.rows(
      `SELECT ${FACT_COLUMNS}, ((extract(epoch FROM f.recorded_at) * 1000000)::bigint)::text AS pos_us
         FROM silver.facts f WHERE ${where.join(' AND ')} ORDER BY f.recorded_at, f.id LIMIT $${params.length}`,
      params,
      (r) => ({ fact: toFact(r), position: toPosition(r) }),
    );
  }

  async sourcesByFactIds(ids: readonly string[]): Promise<FactSourceRow[]> {
    if (ids.length === 0) return [];
    return this.sql.rows(
      // A source whose event Bronze retention dropped is not listed (droppedSourceCounts counts it).
      `SELECT fact_id, event_id, span_start, span_end, quote FROM silver.fact_sources
        WHERE fact_id = ANY($1::uuid[]) AND event_dropped_at IS NULL ORDER BY added_at, event_id, span_start`,
      [ids],
      (r) => ({ factId: col.string(r, 'fact_id'), ...toSpan(r) }),
    );
  }

  /** Per fact, how many of its sources' events Bronze retention dropped (facts without any are absent). */
  async droppedSourceCounts(ids: readonly string[]): Promise<Map<string, number>> {
    if (ids.length === 0) return new Map();
    const rows = await this.sql.rows(
      `SELECT fact_id, count(*)::int AS n FROM silver.fact_sources WHERE fact_id = ANY($1::uuid[]) AND event_dropped_at IS NOT NULL GROUP BY fact_id`,
      [ids],
      (r) => [col.string(r, 'fact_id'), col.number(r, 'n')] as const,
    );
    return new Map(rows);
  }

  /** Facts (any state) with a source in each event. */
  async factsByEventIds(eventIds: readonly string[]): Promise<Array<{ eventId: string; fact: Fact }>> {
    if (eventIds.length === 0) return [];
    return this.sql.rows(
      `SELECT DISTINCT ON (s.event_id, f.id) s.event_id AS source_event_id, ${FACT_COLUMNS}
         FROM silver.fact_sources s JOIN silver.facts f ON f.id = s.fact_id
        WHERE s.event_id = ANY($1::uuid[]) ORDER BY s.event_id, f.id`,
      [eventIds],
      (r) => ({ eventId: col.string(r, 'source_event_id'), fact: toFact(r) }),
    );
  }

  /** Facts whose superseded_by is one of these ids. */
  async supersededBy(ids: readonly string[]): Promise<Fact[]> {
    if (ids.length === 0) return [];
    return this.sql.rows(`SELECT ${FACT_COLUMNS} FROM silver.facts f WHERE f.superseded_by = ANY($1::uuid[]) ORDER BY f.valid_from, f.id`, [ids], toFact);
  }

  async decisionsByFactIds(ids: readonly string[]): Promise<JudgeDecisionRow[]> {
    if (ids.length === 0) return [];
    return this.sql.rows(
      `SELECT id, fact_id, statement, action, target_fact_id, reason, candidates, judge_model, decided_at FROM silver.judge_decisions
        WHERE fact_id = ANY($1::uuid[]) OR target_fact_id = ANY($1::uuid[]) ORDER BY decided_at, id`,
      [ids],
      (r) => ({
        id: col.string(r, 'id'),
        factId: col.stringOrNull(r, 'fact_id'),
        statement: col.string(r, 'statement'),
        action: col.string(r, 'action'),
        targetFactId: col.stringOrNull(r, 'target_fact_id'),
        reason: col.string(r, 'reason'),
        // jsonb written by the writer (src/silver/write/decisions.ts) in this shape.
        candidates: r.candidates as JudgeDecisionRow['candidates'],
        judgeModel: col.string(r, 'judge_model'),
        decidedAt: col.date(r, 'decided_at'),
      }),
    );
  }

  /** Per namespace, the entities whose names these event redactions hide (silver/hidden-names.ts). */
  hiddenNames(namespaces: readonly string[], redactions: readonly EventRedaction[]): Promise<Map<string, HiddenNames>> {
    return hiddenNamesIn(this.sql, namespaces, redactions);
  }

  async entitiesByIds(ids: readonly string[]): Promise<Entity[]> {
    if (ids.length === 0) return [];
    return this.sql.rows(`SELECT id, namespace, type, name, aliases, recorded_at, retired_at FROM silver.entities WHERE id = ANY($1::uuid[])`, [ids], toEntity);
  }

  async listEntities(
    namespace: string,
    type: string | null,
    nameContains: string | null,
    limit: number,
    after?: Position,
  ): Promise<Array<{ entity: Entity; position: Position }>> {
    const params: unknown[] = [namespace];
    const where = ['namespace = $1', 'retired_at IS NULL'];
    if (type) {
      params.push(type);
      where.push(`type = $${params.length}`);
    }
    if (nameContains) {
      params.push(escapeLike(nameContains));
      where.push(`(name ILIKE '%' || $${params.length} || '%' OR EXISTS (SELECT 1 FROM unnest(aliases) a WHERE a ILIKE '%' || $${params.length} || '%'))`);
    }
    if (after) {
      params.push(after.micros, after.id);
      where.push(`(recorded_at, id) > (timestamptz 'epoch' + $${params.length - 1}::bigint * interval '1 microsecond', $${params.length}::uuid)`);
    }
    params.push(limit);
    return this.sql.rows(
      `SELECT id, namespace, type, name, aliases, recorded_at, retired_at, ((extract(epoch FROM recorded_at) * 1000000)::bigint)::text AS pos_us
         FROM silver.entities WHERE ${where.join(' AND ')} ORDER BY recorded_at, id LIMIT $${params.length}`,
      params,
      (r) => ({ entity: toEntity(r), position: toPosition(r) }),
    );
  }

  /** Facts about each entity (as subject or object), visible at asOf (or current). */
  async factsByEntityIds(ids: readonly string[], asOf: Date | null): Promise<Array<{ entityId: string; fact: Fact }>> {
    if (ids.length === 0) return [];
    const params: unknown[] = [ids];
    const visible = visibleSql('f', { asOf, includeRetired: false }, params);
    return this.sql.rows(
      `SELECT e.id AS about_entity_id, ${FACT_COLUMNS} FROM unnest($1::uuid[]) AS e(id)
         JOIN silver.facts f ON (f.subject_entity_id = e.id OR f.object_entity_id = e.id) AND ${visible}
        ORDER BY f.valid_from, f.id`,
      params,
      (r) => ({ entityId: col.string(r, 'about_entity_id'), fact: toFact(r) }),
    );
  }

  /** Relationships of each entity (either end), by the same visibility rule as facts (retired ones never). */
  async relationshipsByEntityIds(ids: readonly string[], asOf: Date | null): Promise<Array<{ entityId: string; relationship: Relationship }>> {
    if (ids.length === 0) return [];
    const params: unknown[] = [ids];
    const visible = visibleSql('r', { asOf, includeRetired: false }, params);
    return this.sql.rows(
      `SELECT e.id AS about_entity_id, r.* FROM unnest($1::uuid[]) AS e(id)
         JOIN silver.relationships r ON (r.source_entity_id = e.id OR r.target_entity_id = e.id) AND ${visible}
        ORDER BY r.valid_from, r.id`,
      params,
      (r) => ({ entityId: col.string(r, 'about_entity_id'), relationship: toRelationship(r) }),
    );
  }

  async relationshipSources(ids: readonly string[]): Promise<RelationshipSourceRow[]> {
    if (ids.length === 0) return [];
    return this.sql.rows(
      `SELECT relationship_id, event_id, span_start, span_end, quote FROM silver.relationship_sources
        WHERE relationship_id = ANY($1::uuid[]) AND event_dropped_at IS NULL`,
      [ids],
      (r) => ({ relationshipId: col.string(r, 'relationship_id'), ...toSpan(r) }),
    );
  }
}
