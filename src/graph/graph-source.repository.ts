import { DataSource, EntityManager } from 'typeorm';
import { col, Sql, SqlRow } from '../platform/postgres/sql';
import { EventNodeRow } from './cypher/event-nodes';
import { EntityNodeRow } from './cypher/entity-nodes';
import { EventRedaction, HiddenNames, hiddenNamesIn } from '../silver/hidden-names';
import { FactNodeRow, FactSourceRow } from './cypher/fact-nodes';
import { RelationshipEdgeRow } from './cypher/relationship-edges';
import { addDigestRow, BUCKET_HEX, DIGEST_HEX, KindDigests } from './key-buckets';

/** Where a repository runs its SQL: the pool, an open TypeORM transaction, or an executor. */
export type SqlSource = DataSource | EntityManager | Sql;

function toSql(source: SqlSource): Sql {
  if (source instanceof Sql) return source;
  if (source instanceof DataSource) return Sql.of(source);
  return source.queryRunner ? Sql.within(source) : Sql.of(source.connection);
}

/** float8[] or null. */
function vectorOrNull(r: SqlRow, name: string): number[] | null {
  const v = r[name];
  if (v === null || v === undefined) return null;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number')) throw new Error(`column ${name}: expected float8[] or null`);
  return v as number[];
}

function toFactSources(r: SqlRow): FactSourceRow[] {
  const v = r.sources;
  if (!Array.isArray(v)) throw new Error('column sources: expected a json array');
  return v.map((s: SqlRow) => ({
    eventId: col.string(s, 'eventId'),
    spanStart: col.number(s, 'spanStart'),
    spanEnd: col.number(s, 'spanEnd'),
    quote: col.stringOrNull(s, 'quote'),
  }));
}

const toFactNode = (r: SqlRow): FactNodeRow => ({
  id: col.string(r, 'id'),
  namespace: col.string(r, 'namespace'),
  statement: col.string(r, 'statement'),
  factType: col.string(r, 'factType'),
  predicate: col.stringOrNull(r, 'predicate'),
  object: col.stringOrNull(r, 'object'),
  isNegation: col.boolean(r, 'isNegation'),
  confidence: col.number(r, 'confidence'),
  importance: col.number(r, 'importance'),
  validFrom: col.string(r, 'validFrom'),
  validTo: col.stringOrNull(r, 'validTo'),
  recordedAt: col.string(r, 'recordedAt'),
  retiredAt: col.stringOrNull(r, 'retiredAt'),
  extractionModel: col.string(r, 'extractionModel'),
  supersededBy: col.stringOrNull(r, 'supersededBy'),
  subjectEntityId: col.stringOrNull(r, 'subjectEntityId'),
  objectEntityId: col.stringOrNull(r, 'objectEntityId'),
  embedding: vectorOrNull(r, 'embedding'),
  embeddingModel: col.stringOrNull(r, 'embeddingModel'),
  sources: toFactSources(r),
});

const toEntityNode = (r: SqlRow): EntityNodeRow => ({
  id: col.string(r, 'id'),
  namespace: col.string(r, 'namespace'),
  type: col.string(r, 'type'),
  name: col.string(r, 'name'),
  aliases: col.strings(r, 'aliases'),
  retiredAt: col.stringOrNull(r, 'retiredAt'),
});

const toRelationshipEdge = (r: SqlRow): RelationshipEdgeRow => ({
  id: col.string(r, 'id'),
  namespace: col.string(r, 'namespace'),
  type: col.string(r, 'type'),
  sourceEntityId: col.string(r, 'sourceEntityId'),
  targetEntityId: col.string(r, 'targetEntityId'),
  confidence: col.number(r, 'confidence'),
  validFrom: col.string(r, 'validFrom'),
  validTo: col.stringOrNull(r, 'validTo'),
  retiredAt: col.stringOrNull(r, 'retiredAt'),
  sources: col.strings(r, 'sources'),
});

const toEventNode = (r: SqlRow): EventNodeRow => ({
  id: col.string(r, 'id'),
  namespace: col.string(r, 'namespace'),
  source: col.string(r, 'source'),
  kind: col.string(r, 'kind'),
  conversationId: col.stringOrNull(r, 'conversationId'),
  sessionId: col.stringOrNull(r, 'sessionId'),
  sequenceNum: col.numberOrNull(r, 'sequenceNum'),
  role: col.stringOrNull(r, 'role'),
  actor: col.stringOrNull(r, 'actor'),
  content: col.string(r, 'content'),
  occurredAt: col.string(r, 'occurredAt'),
  ingestedAt: col.string(r, 'ingestedAt'),
  embedding: vectorOrNull(r, 'embedding'),
  embeddingModel: col.stringOrNull(r, 'embeddingModel'),
  previousEventId: col.stringOrNull(r, 'previousEventId'),
  nextEventId: col.stringOrNull(r, 'nextEventId'),
});

const keyOf = (r: SqlRow): string => col.string(r, 'k');

/** Where a page of a namespace (or of everything, `namespace` null) starts: after this key. */
export interface PageCursor {
  namespace: string | null;
  after: string | null;
  limit: number;
}

const ISO = (col: string) => `(to_json(${col}) #>> '{}')`;

/** An event id that an approved destroyEvent has not erased: erased events leave the projection. */
const NOT_TOMBSTONED = (eventId: string) => `NOT EXISTS (SELECT 1 FROM bronze.event_tombstones t WHERE t.event_id = ${eventId})`;

const FACT_SELECT = `
  SELECT f.id::text AS id, f.namespace, f.statement, f.fact_type AS "factType", f.predicate, f.object_value AS "object",
         f.is_negation AS "isNegation", f.confidence::float8 AS confidence, f.importance::float8 AS importance,
         ${ISO('f.valid_from')} AS "validFrom", ${ISO('f.valid_to')} AS "validTo", ${ISO('f.recorded_at')} AS "recordedAt",
         ${ISO('f.retired_at')} AS "retiredAt", f.extraction_model AS "extractionModel", f.superseded_by::text AS "supersededBy",
         f.subject_entity_id::text AS "subjectEntityId", f.object_entity_id::text AS "objectEntityId",
         f.embedding::float8[] AS embedding, f.embedding_model AS "embeddingModel",
         COALESCE((SELECT json_agg(json_build_object('eventId', s.event_id::text, 'spanStart', COALESCE(s.span_start, -1),
                                                     'spanEnd', COALESCE(s.span_end, -1), 'quote', s.quote)
                                   ORDER BY s.event_id, s.span_start, s.span_end)
                     FROM silver.fact_sources s WHERE s.fact_id = f.id AND ${NOT_TOMBSTONED('s.event_id')}), '[]'::json) AS sources
    FROM silver.facts f`;

/**
 * Facts the projection holds: all but those erased with their only source (docs/approvals.md) and
 * those pruned (docs/lifecycle.md: their nodes leave the graph, and come back when restored).
 */
const PROJECTED_FACT = `f.erased_at IS NULL AND f.retired_reason IS DISTINCT FROM 'pruned'`;

const ENTITY_SELECT = `
  SELECT n.id::text AS id, n.namespace, n.type, n.name, n.aliases, ${ISO('n.retired_at')} AS "retiredAt"
    FROM silver.entities n`;

const RELATIONSHIP_SELECT = `
  SELECT r.id::text AS id, r.namespace, r.type, r.source_entity_id::text AS "sourceEntityId", r.target_entity_id::text AS "targetEntityId",
         r.confidence::float8 AS confidence, ${ISO('r.valid_from')} AS "validFrom", ${ISO('r.valid_to')} AS "validTo",
         ${ISO('r.retired_at')} AS "retiredAt",
         ARRAY(SELECT DISTINCT s.event_id::text FROM silver.relationship_sources s WHERE s.relationship_id = r.id AND ${NOT_TOMBSTONED('s.event_id')} ORDER BY 1) AS sources
    FROM silver.relationships r`;

/**
 * The turn before or after an event (`dir` '<' or '>'): the nearest event of the same namespace,
 * conversation and session (sessions match when both are null) by sequence number that is not
 * erased. Events without a conversation or sequence number have no neighbours. Served by
 * bronze.events_ns_conversation_idx.
 */
const NEIGHBOUR = (dir: '<' | '>') => `
  (SELECT n.id::text FROM bronze.events n
    WHERE e.conversation_id IS NOT NULL AND e.sequence_num IS NOT NULL
      AND n.namespace = e.namespace AND n.conversation_id = e.conversation_id AND n.session_id IS NOT DISTINCT FROM e.session_id
      AND n.sequence_num ${dir} e.sequence_num AND ${NOT_TOMBSTONED('n.id')}
    ORDER BY n.sequence_num ${dir === '<' ? 'DESC' : 'ASC'}, n.occurred_at ${dir === '<' ? 'DESC' : 'ASC'}, n.id LIMIT 1)`;

/**
 * A Bronze event as the projection writes it, with its stored embedding of `$model` (null when
 * there is none yet; with `$model` null, its newest stored embedding of any model) and the ids of
 * its neighbouring turns (the keyword channel indexes each event with the turn before it).
 */
const EVENT_SELECT = (model: string) => `
  SELECT e.id::text AS id, e.namespace, e.source, e.kind, e.conversation_id AS "conversationId", e.session_id AS "sessionId",
         e.sequence_num AS "sequenceNum", e.role, e.actor, e.content,
         ${ISO('e.occurred_at')} AS "occurredAt", ${ISO('e.ingested_at')} AS "ingestedAt",
         x.embedding::float8[] AS embedding, x.model AS "embeddingModel",
         ${NEIGHBOUR('<')} AS "previousEventId", ${NEIGHBOUR('>')} AS "nextEventId"
    FROM bronze.events e
    LEFT JOIN LATERAL (SELECT x.embedding, x.model FROM silver.event_embeddings x
                        WHERE x.event_id = e.id AND (${model} IS NULL OR x.model = ${model})
                        ORDER BY x.created_at DESC LIMIT 1) x ON true
   WHERE ${NOT_TOMBSTONED('e.id')}`;

const FIRST_UUID = '00000000-0000-0000-0000-000000000000';

/**
 * Each Silver kind's keys in a namespace (`k`, text; `$1` the namespace), as the graph spells them
 * (graph/cypher/graph-admin.ts `GRAPH_KEY_CYPHER`).
 */
const SILVER_KEY_SQL: Record<string, string> = {
  Event: `SELECT e.id::text AS k FROM bronze.events e WHERE e.namespace = $1 AND ${NOT_TOMBSTONED('e.id')}`,
  Fact: `SELECT f.id::text AS k FROM silver.facts f WHERE f.namespace = $1 AND ${PROJECTED_FACT}`,
  Entity: `SELECT id::text AS k FROM silver.entities WHERE namespace = $1`,
  DERIVED_FROM: `SELECT s.fact_id || '->' || s.event_id || '@' || COALESCE(s.span_start, -1) || ':' || COALESCE(s.span_end, -1) AS k
                   FROM silver.fact_sources s JOIN silver.facts f ON f.id = s.fact_id
                  WHERE f.namespace = $1 AND ${PROJECTED_FACT} AND ${NOT_TOMBSTONED('s.event_id')}`,
  ABOUT: `SELECT id || '->' || subject_entity_id || '@subject' AS k FROM silver.facts f WHERE namespace = $1 AND subject_entity_id IS NOT NULL AND ${PROJECTED_FACT}
          UNION ALL
          SELECT id || '->' || object_entity_id || '@object' FROM silver.facts f WHERE namespace = $1 AND object_entity_id IS NOT NULL AND ${PROJECTED_FACT}`,
  SUPERSEDES: `SELECT f.superseded_by || '->' || f.id AS k FROM silver.facts f JOIN silver.facts n ON n.id = f.superseded_by
                WHERE f.namespace = $1 AND ${PROJECTED_FACT} AND n.erased_at IS NULL AND n.retired_reason IS DISTINCT FROM 'pruned'`,
  RELATED: `SELECT id::text AS k FROM silver.relationships WHERE namespace = $1`,
};

/**
 * Reads the current Silver (and Bronze event) state the graph projection writes: by ids for the
 * outbox projector (one query per aggregate type and batch), or page by page for a rebuild.
 */
export class GraphSourceRepository {
  private readonly sql: Sql;

  constructor(source: SqlSource) {
    this.sql = toSql(source);
  }

  factsByIds(ids: readonly string[]): Promise<FactNodeRow[]> {
    return ids.length === 0
      ? Promise.resolve([])
      : this.sql.rows(`${FACT_SELECT} WHERE f.id = ANY($1::uuid[]) AND ${PROJECTED_FACT} ORDER BY f.id`, [ids], toFactNode);
  }

  /** Per namespace, the entities whose names these event redactions hide (silver/hidden-names.ts). */
  hiddenNames(namespaces: readonly string[], redactions: readonly EventRedaction[]): Promise<Map<string, HiddenNames>> {
    return hiddenNamesIn(this.sql, namespaces, redactions);
  }

  entitiesByIds(ids: readonly string[]): Promise<EntityNodeRow[]> {
    return ids.length === 0 ? Promise.resolve([]) : this.sql.rows(`${ENTITY_SELECT} WHERE n.id = ANY($1::uuid[]) ORDER BY n.id`, [ids], toEntityNode);
  }

  relationshipsByIds(ids: readonly string[]): Promise<RelationshipEdgeRow[]> {
    return ids.length === 0
      ? Promise.resolve([])
      : this.sql.rows(`${RELATIONSHIP_SELECT} WHERE r.id = ANY($1::uuid[]) ORDER BY r.id`, [ids], toRelationshipEdge);
  }

  factsPage(c: PageCursor): Promise<FactNodeRow[]> {
    return this.sql.rows(
      `${FACT_SELECT} WHERE ($1::text IS NULL OR f.namespace = $1) AND f.id > $2::uuid AND ${PROJECTED_FACT} ORDER BY f.id LIMIT $3`,
      [c.namespace, c.after ?? FIRST_UUID, c.limit],
      toFactNode,
    );
  }

  entitiesPage(c: PageCursor): Promise<EntityNodeRow[]> {
    return this.sql.rows(
      `${ENTITY_SELECT} WHERE ($1::text IS NULL OR n.namespace = $1) AND n.id > $2::uuid ORDER BY n.id LIMIT $3`,
      [c.namespace, c.after ?? FIRST_UUID, c.limit],
      toEntityNode,
    );
  }

  relationshipsPage(c: PageCursor): Promise<RelationshipEdgeRow[]> {
    return this.sql.rows(
      `${RELATIONSHIP_SELECT} WHERE ($1::text IS NULL OR r.namespace = $1) AND r.id > $2::uuid ORDER BY r.id LIMIT $3`,
      [c.namespace, c.after ?? FIRST_UUID, c.limit],
      toRelationshipEdge,
    );
  }

  /**
   * Bronze events by id with their stored embedding of `model` (none when `model` is null). The
   * projector re-reads them, so an outbox row carries only the id and a replay writes current state.
   */
  eventsByIds(ids: readonly string[], model: string | null): Promise<EventNodeRow[]> {
    return ids.length === 0
      ? Promise.resolve([])
      : this.sql.rows(`${EVENT_SELECT('$2::text')} AND e.id = ANY($1::uuid[]) ORDER BY e.occurred_at, e.id`, [ids, model], toEventNode);
  }

  /** Bronze events in (namespace, occurred_at, id) order, with their stored embeddings of `model`. `after` is the last row's id. */
  eventsPage(c: PageCursor, model: string | null = null): Promise<EventNodeRow[]> {
    return this.sql.rows(
      `${EVENT_SELECT('$4::text')}
          AND ($1::text IS NULL OR e.namespace = $1)
          AND ($2::uuid IS NULL OR (e.namespace, e.occurred_at, e.id) > (SELECT namespace, occurred_at, id FROM bronze.events WHERE id = $2::uuid LIMIT 1))
        ORDER BY e.namespace, e.occurred_at, e.id LIMIT $3`,
      [c.namespace, c.after, c.limit, model],
      toEventNode,
    );
  }

  async counts(namespace: string): Promise<Record<string, number>> {
    return (await this.keys(namespace)).counts;
  }

  /** Every node id / edge key the graph of a namespace must hold, per label or relationship type. */
  async keys(namespace: string): Promise<{ counts: Record<string, number>; keys: Record<string, string[]> }> {
    const keys: Record<string, string[]> = {};
    for (const [kind, sql] of Object.entries(SILVER_KEY_SQL)) keys[kind] = await this.sql.rows(sql, [namespace], keyOf);
    const counts = Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, v.length]));
    return { counts, keys };
  }

  /**
   * Per kind and bucket, the count and 40-bit sum of the keys' MD5 (graph/key-buckets.ts), in one
   * statement: what `checkConsistency` compares with the graph's own digests.
   */
  async keyDigests(namespace: string): Promise<KindDigests> {
    const parts = Object.entries(SILVER_KEY_SQL).map(([kind, sql]) => `SELECT '${kind}'::text AS kind, md5(q.k) AS h FROM (${sql}) q`);
    const rows = await this.sql.rows(
      `SELECT kind, substr(h, 1, ${BUCKET_HEX}) AS b, count(*)::int AS n,
              sum(('x' || substr(h, ${BUCKET_HEX + 1}, ${DIGEST_HEX}))::bit(${DIGEST_HEX * 4})::bigint)::text AS s
         FROM (${parts.join(' UNION ALL ')}) x
        GROUP BY 1, 2`,
      [namespace],
      (r) => ({ kind: col.string(r, 'kind'), b: col.string(r, 'b'), n: col.number(r, 'n'), s: col.string(r, 's') }),
    );
    const out: KindDigests = {};
    for (const r of rows) addDigestRow(out, r.kind, r.b, r.n, r.s);
    return out;
  }

  /** The keys of one kind that fall in `buckets`. */
  async keysInBuckets(namespace: string, kind: string, buckets: readonly string[]): Promise<string[]> {
    const sql = SILVER_KEY_SQL[kind];
    if (sql === undefined) throw new Error(`no Silver graph kind ${kind}`);
    return this.sql.rows(`SELECT q.k FROM (${sql}) q WHERE substr(md5(q.k), 1, ${BUCKET_HEX}) = ANY($2::text[])`, [namespace, [...buckets]], keyOf);
  }
}
