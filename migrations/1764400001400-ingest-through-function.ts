import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bronze rows are written only by Bronze's own functions (issue 43 item 3, docs/bronze.md "What the
 * runtime role holds"). The runtime role held INSERT on `bronze.events` and `bronze.event_keys`, so
 * anything holding its connection could write an event row with any `ingested_at` (back-dated), an
 * id of its choosing, a key row that disagrees with its event, or no derivation queue or outbox
 * row; the sealer then sealed it as genuine. Now it holds SELECT only, and a batch is stored by
 * `bronze.ingest_events(…)`, a SECURITY DEFINER function owned by the migration owner that runs
 * the statement `EventRepository.insertNew` ran before, unchanged except that the function, not the
 * caller, draws each event's id (`gen_random_uuid()`) and its `ingested_at` (the column default,
 * `clock_timestamp()`). So every event row has its key row with the same checksum and time, its
 * derivation queue row, its outbox row and its watermark, and the time the database gave it.
 *
 * What the caller still supplies is the submission itself (namespace, key, content, payload,
 * `occurredAt`, checksum): the service validated it and computed the checksum (RFC 8785 of the
 * submission; PostgreSQL has no JCS, so the function does not recompute it). A row whose content
 * does not give its checksum is what `verify` reports ("the content does not match the event
 * checksum"), and the scheduled verify notices it (docs/operations.md).
 */
export class IngestThroughFunction1764400001400 implements MigrationInterface {
  name = 'IngestThroughFunction1764400001400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(INGEST_EVENTS_FUNCTION);
    await q.query(`REVOKE ALL ON FUNCTION bronze.ingest_events(${SIGNATURE}) FROM PUBLIC`);
    await q.query(
      `COMMENT ON FUNCTION bronze.ingest_events(${SIGNATURE}) IS 'The one writer of Bronze events for the runtime role: keys, events, derivation queue, outbox, watermarks and NOTIFY in one statement (src/bronze/event.repository.ts)'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION bronze.ingest_events(${SIGNATURE})`);
  }
}

const SIGNATURE = 'text[], text[], text[], text[], text[], text[], text[], integer[], text[], text[], text[], text[], text[], timestamptz[], text[], text';

/**
 * Arrays of one batch (keys unique within it, sorted by key so concurrent batches lock in the same
 * order), then the trace context. Returns one row per event created: its position in the arrays
 * (1-based), its new id and ingest time. Keys already taken are absent (the caller reads them back).
 */
const INGEST_EVENTS_FUNCTION = `
CREATE FUNCTION bronze.ingest_events(
  p_namespace text[], p_source text[], p_source_event_id text[], p_provenance_root text[], p_kind text[],
  p_conversation_id text[], p_session_id text[], p_sequence_num integer[], p_role text[], p_actor text[],
  p_content text[], p_raw_payload text[], p_checksum text[], p_occurred_at timestamptz[], p_tool_call_id text[],
  p_traceparent text)
RETURNS TABLE (ord bigint, id uuid, ingested_at timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH input AS (
    SELECT gen_random_uuid() AS id, t.* FROM unnest(p_namespace, p_source, p_source_event_id, p_provenance_root, p_kind, p_conversation_id,
                                                   p_session_id, p_sequence_num, p_role, p_actor, p_content, p_raw_payload, p_checksum,
                                                   p_occurred_at, p_tool_call_id)
             WITH ORDINALITY AS t(namespace, source, source_event_id, provenance_root, kind, conversation_id, session_id,
                                  sequence_num, role, actor, content, raw_payload, checksum, occurred_at, tool_call_id, ord)
  ), new_keys AS (
    INSERT INTO bronze.event_keys (namespace, source, source_event_id, event_id, occurred_at, checksum)
    SELECT i.namespace, i.source, i.source_event_id, i.id, i.occurred_at, i.checksum FROM input i ORDER BY i.ord
    ON CONFLICT DO NOTHING
    RETURNING event_id
  ), ins AS (
    INSERT INTO bronze.events AS e (id, namespace, source, source_event_id, provenance_root, kind, conversation_id, session_id,
                                    sequence_num, role, actor, content, raw_payload, tool_call_id, checksum, occurred_at)
    SELECT i.id, i.namespace, i.source, i.source_event_id, i.provenance_root, i.kind, i.conversation_id, i.session_id,
           i.sequence_num, i.role, i.actor, i.content, i.raw_payload::json, i.tool_call_id, i.checksum, i.occurred_at
      FROM input i JOIN new_keys k ON k.event_id = i.id
    RETURNING e.id, e.namespace, e.source, e.source_event_id, e.kind, e.conversation_id, e.sequence_num, e.occurred_at, e.ingested_at
  ), queued AS (
    INSERT INTO ops.derivation_queue (event_id, namespace, occurred_at, conversation_id, sequence_num, traceparent)
    SELECT x.id, x.namespace, x.occurred_at, x.conversation_id, x.sequence_num, p_traceparent FROM ins x
  ), outboxed AS (
    SELECT ops.enqueue_outbox(jsonb_agg(jsonb_build_object('namespace', x.namespace, 'type', 'event', 'id', x.id::text, 'payload',
             jsonb_build_object('id', x.id, 'namespace', x.namespace, 'source', x.source, 'kind', x.kind,
                                'conversationId', x.conversation_id, 'occurredAt', x.occurred_at, 'ingestedAt', x.ingested_at)
             || CASE WHEN p_traceparent IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('traceparent', p_traceparent) END)
           ORDER BY x.occurred_at, x.id)) AS queued
      FROM ins x
  ), marks AS (
    INSERT INTO ops.watermarks AS w (namespace, source, last_source_event_id, last_occurred_at, last_ingested_at, event_count)
    SELECT DISTINCT ON (x.namespace, x.source) x.namespace, x.source, x.source_event_id, x.occurred_at, x.ingested_at,
           count(*) OVER (PARTITION BY x.namespace, x.source)
      FROM ins x ORDER BY x.namespace, x.source, x.occurred_at DESC, x.source_event_id DESC
    ON CONFLICT (namespace, source) DO UPDATE SET
      last_source_event_id = CASE WHEN (EXCLUDED.last_occurred_at, EXCLUDED.last_source_event_id) >= (w.last_occurred_at, w.last_source_event_id)
                                  THEN EXCLUDED.last_source_event_id ELSE w.last_source_event_id END,
      last_occurred_at = GREATEST(w.last_occurred_at, EXCLUDED.last_occurred_at),
      last_ingested_at = GREATEST(w.last_ingested_at, EXCLUDED.last_ingested_at),
      event_count = w.event_count + EXCLUDED.event_count
  ), notified AS (
    -- One notification per namespace and 150 ids (a payload must stay under 8000 bytes).
    SELECT pg_notify('medallion_events', json_build_object('namespace', c.namespace, 'ids', json_agg(c.id ORDER BY c.occurred_at, c.id))::text)
      FROM (SELECT x.namespace, x.id, x.occurred_at, (row_number() OVER (PARTITION BY x.namespace ORDER BY x.occurred_at, x.id) - 1) / 150 AS chunk
              FROM ins x) c
     GROUP BY c.namespace, c.chunk
  )
  -- notified and outboxed are read, so they run (PostgreSQL skips a SELECT CTE nobody reads).
  SELECT i.ord, x.id, x.ingested_at
    FROM ins x JOIN input i ON i.id = x.id, (SELECT count(*) AS n FROM notified) nn, (SELECT o.queued FROM outboxed o) oo
   ORDER BY i.ord;
END $$`;
