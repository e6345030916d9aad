import { DataSource } from 'typeorm';
import { Position } from '../common/cursor';
import { Entity, Fact, FactFilter, FactSourceRow, JudgeDecisionRow, Relationship, RelationshipSourceRow } from './silver.types';

type Row = Record<string, unknown>;

const FACT_COLUMNS = `f.id, f.namespace, f.statement, f.fact_type, f.subject_entity_id, f.predicate, f.object_value, f.object_entity_id,
  f.is_negation, f.confidence, f.importance, f.valid_from, f.valid_to, f.recorded_at, f.retired_at, f.superseded_by,
  f.extraction_model, f.derivation_run_id`;

export const toFact = (r: Row): Fact => ({
  id: r.id as string,
  namespace: r.namespace as string,
  statement: r.statement as string,
  factType: r.fact_type as string,
  subjectEntityId: r.subject_entity_id as string | null,
  predicate: r.predicate as string | null,
  objectValue: r.object_value as string | null,
  objectEntityId: r.object_entity_id as string | null,
  isNegation: r.is_negation as boolean,
  confidence: Number(r.confidence),
  importance: Number(r.importance),
  validFrom: r.valid_from as Date,
  validTo: r.valid_to as Date | null,
  recordedAt: r.recorded_at as Date,
  retiredAt: r.retired_at as Date | null,
  supersededById: r.superseded_by as string | null,
  extractionModel: r.extraction_model as string,
  derivationRunId: r.derivation_run_id as string,
});

const toEntity = (r: Row): Entity => ({
  id: r.id as string,
  namespace: r.namespace as string,
  type: r.type as string,
  name: r.name as string,
  aliases: r.aliases as string[],
  recordedAt: r.recorded_at as Date,
  retiredAt: r.retired_at as Date | null,
});

const toRelationship = (r: Row): Relationship => ({
  id: r.id as string,
  namespace: r.namespace as string,
  type: r.type as string,
  sourceEntityId: r.source_entity_id as string,
  targetEntityId: r.target_entity_id as string,
  confidence: Number(r.confidence),
  validFrom: r.valid_from as Date,
  validTo: r.valid_to as Date | null,
  recordedAt: r.recorded_at as Date,
  retiredAt: r.retired_at as Date | null,
});

/**
 * The time-travel rule of `facts(asOf)`: true in the world at T (valid_from <= T < valid_to)
 * by what we believe now (not retired), or, with includeRetired, by anything we ever recorded.
 * Without asOf: the current facts (valid_to and retired_at unset).
 */
function temporalWhere(asOf: Date | null, includeRetired: boolean, params: unknown[]): string {
  const parts: string[] = [];
  if (!includeRetired) parts.push('f.retired_at IS NULL');
  if (asOf) {
    params.push(asOf);
    parts.push(`f.valid_from <= $${params.length} AND (f.valid_to IS NULL OR f.valid_to > $${params.length})`);
  } else if (!includeRetired) {
    parts.push('f.valid_to IS NULL');
  }
  return parts.length > 0 ? parts.join(' AND ') : 'true';
}

/** Read-side SQL for Silver; every batch method is one round trip, in key order where it matters. */
export class FactRepository {
  constructor(private readonly ds: DataSource) {}

  async factsByIds(ids: readonly string[]): Promise<Fact[]> {
    if (ids.length === 0) return [];
    return (await this.ds.query(`SELECT ${FACT_COLUMNS} FROM silver.facts f WHERE f.id = ANY($1::uuid[])`, [ids])).map(toFact);
  }

  async list(
    namespace: string,
    filter: FactFilter,
    asOf: Date | null,
    includeRetired: boolean,
    limit: number,
    after?: Position,
  ): Promise<Array<{ fact: Fact; position: Position }>> {
    const params: unknown[] = [namespace];
    const where = ['f.namespace = $1', temporalWhere(asOf, includeRetired, params)];
    const add = (sql: (p: string) => string, v: unknown) => {
      params.push(v);
      where.push(sql(`$${params.length}`));
    };
    if (filter.factTypes?.length) add((p) => `f.fact_type = ANY(${p}::text[])`, filter.factTypes);
    if (filter.subjectEntityId) add((p) => `f.subject_entity_id = ${p}::uuid`, filter.subjectEntityId);
    if (filter.predicate) add((p) => `f.predicate = ${p}`, filter.predicate);
    if (filter.contains)
      add(
        (p) => `f.statement ILIKE '%' || ${p} || '%'`,
        filter.contains.replace(/[\\%_]/g, (c) => `\\${c}`),
      );
    if (filter.minImportance !== null && filter.minImportance !== undefined) add((p) => `f.importance >= ${p}`, filter.minImportance);
    if (after) {
      params.push(after.micros, after.id);
      where.push(`(f.recorded_at, f.id) > (timestamptz 'epoch' + $${params.length - 1}::bigint * interval '1 microsecond', $${params.length}::uuid)`);
    }
    params.push(limit);
    const rows: Row[] = await this.ds.query(
      `SELECT ${FACT_COLUMNS}, ((extract(epoch FROM f.recorded_at) * 1000000)::bigint)::text AS pos_us
         FROM silver.facts f WHERE ${where.join(' AND ')} ORDER BY f.recorded_at, f.id LIMIT $${params.length}`,
      params,
    );
    return rows.map((r) => ({ fact: toFact(r), position: { micros: r.pos_us as string, id: r.id as string } }));
  }

  async sourcesByFactIds(ids: readonly string[]): Promise<FactSourceRow[]> {
    if (ids.length === 0) return [];
    const rows: Row[] = await this.ds.query(
      `SELECT fact_id, event_id, span_start, span_end, quote FROM silver.fact_sources WHERE fact_id = ANY($1::uuid[]) ORDER BY added_at, event_id, span_start`,
      [ids],
    );
    return rows.map((r) => ({
      factId: r.fact_id as string,
      eventId: r.event_id as string,
      spanStart: r.span_start as number | null,
      spanEnd: r.span_end as number | null,
      quote: r.quote as string | null,
    }));
  }

  /** Facts (any state) with a source in each event. */
  async factsByEventIds(eventIds: readonly string[]): Promise<Array<{ eventId: string; fact: Fact }>> {
    if (eventIds.length === 0) return [];
    const rows: Row[] = await this.ds.query(
      `SELECT DISTINCT ON (s.event_id, f.id) s.event_id AS source_event_id, ${FACT_COLUMNS}
         FROM silver.fact_sources s JOIN silver.facts f ON f.id = s.fact_id
        WHERE s.event_id = ANY($1::uuid[]) ORDER BY s.event_id, f.id`,
      [eventIds],
    );
    return rows.map((r) => ({ eventId: r.source_event_id as string, fact: toFact(r) }));
  }

  /** Facts whose superseded_by is one of these ids. */
  async supersededBy(ids: readonly string[]): Promise<Fact[]> {
    if (ids.length === 0) return [];
    return (await this.ds.query(`SELECT ${FACT_COLUMNS} FROM silver.facts f WHERE f.superseded_by = ANY($1::uuid[]) ORDER BY f.valid_from, f.id`, [ids])).map(
      toFact,
    );
  }

  async decisionsByFactIds(ids: readonly string[]): Promise<JudgeDecisionRow[]> {
    if (ids.length === 0) return [];
    const rows: Row[] = await this.ds.query(
      `SELECT id, fact_id, statement, action, target_fact_id, reason, candidates, judge_model, decided_at FROM silver.judge_decisions
        WHERE fact_id = ANY($1::uuid[]) OR target_fact_id = ANY($1::uuid[]) ORDER BY decided_at, id`,
      [ids],
    );
    return rows.map((r) => ({
      id: r.id as string,
      factId: r.fact_id as string | null,
      statement: r.statement as string,
      action: r.action as string,
      targetFactId: r.target_fact_id as string | null,
      reason: r.reason as string,
      candidates: r.candidates as JudgeDecisionRow['candidates'],
      judgeModel: r.judge_model as string,
      decidedAt: r.decided_at as Date,
    }));
  }

  async entitiesByIds(ids: readonly string[]): Promise<Entity[]> {
    if (ids.length === 0) return [];
    return (
      await this.ds.query(`SELECT id, namespace, type, name, aliases, recorded_at, retired_at FROM silver.entities WHERE id = ANY($1::uuid[])`, [ids])
    ).map(toEntity);
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
      params.push(nameContains.replace(/[\\%_]/g, (c) => `\\${c}`));
      where.push(`(name ILIKE '%' || $${params.length} || '%' OR EXISTS (SELECT 1 FROM unnest(aliases) a WHERE a ILIKE '%' || $${params.length} || '%'))`);
    }
    if (after) {
      params.push(after.micros, after.id);
      where.push(`(recorded_at, id) > (timestamptz 'epoch' + $${params.length - 1}::bigint * interval '1 microsecond', $${params.length}::uuid)`);
    }
    params.push(limit);
    const rows: Row[] = await this.ds.query(
      `SELECT id, namespace, type, name, aliases, recorded_at, retired_at, ((extract(epoch FROM recorded_at) * 1000000)::bigint)::text AS pos_us
         FROM silver.entities WHERE ${where.join(' AND ')} ORDER BY recorded_at, id LIMIT $${params.length}`,
      params,
    );
    return rows.map((r) => ({ entity: toEntity(r), position: { micros: r.pos_us as string, id: r.id as string } }));
  }

  /** Facts about each entity (as subject or object), valid at asOf (or current). */
  async factsByEntityIds(ids: readonly string[], asOf: Date | null): Promise<Array<{ entityId: string; fact: Fact }>> {
    if (ids.length === 0) return [];
    const params: unknown[] = [ids];
    const temporal = temporalWhere(asOf, false, params);
    const rows: Row[] = await this.ds.query(
      `SELECT e.id AS about_entity_id, ${FACT_COLUMNS} FROM unnest($1::uuid[]) AS e(id)
         JOIN silver.facts f ON (f.subject_entity_id = e.id OR f.object_entity_id = e.id) AND ${temporal}
        ORDER BY f.valid_from, f.id`,
      params,
    );
    return rows.map((r) => ({ entityId: r.about_entity_id as string, fact: toFact(r) }));
  }

  async relationshipsByEntityIds(ids: readonly string[], asOf: Date | null): Promise<Array<{ entityId: string; relationship: Relationship }>> {
    if (ids.length === 0) return [];
    const params: unknown[] = [ids];
    let temporal = 'r.retired_at IS NULL';
    if (asOf) {
      params.push(asOf);
      temporal += ` AND r.valid_from <= $2 AND (r.valid_to IS NULL OR r.valid_to > $2)`;
    } else temporal += ' AND r.valid_to IS NULL';
    const rows: Row[] = await this.ds.query(
      `SELECT e.id AS about_entity_id, r.* FROM unnest($1::uuid[]) AS e(id)
         JOIN silver.relationships r ON (r.source_entity_id = e.id OR r.target_entity_id = e.id) AND ${temporal}
        ORDER BY r.valid_from, r.id`,
      params,
    );
    return rows.map((r) => ({ entityId: r.about_entity_id as string, relationship: toRelationship(r) }));
  }

  async relationshipSources(ids: readonly string[]): Promise<RelationshipSourceRow[]> {
    if (ids.length === 0) return [];
    const rows: Row[] = await this.ds.query(
      `SELECT relationship_id, event_id, span_start, span_end, quote FROM silver.relationship_sources WHERE relationship_id = ANY($1::uuid[])`,
      [ids],
    );
    return rows.map((r) => ({
      relationshipId: r.relationship_id as string,
      eventId: r.event_id as string,
      spanStart: r.span_start as number | null,
      spanEnd: r.span_end as number | null,
      quote: r.quote as string | null,
    }));
  }
}
