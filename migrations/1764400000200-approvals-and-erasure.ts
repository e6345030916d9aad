import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Approvals for irreversible operations and the one approved path that changes Bronze (docs/approvals.md).
 *
 * - `access.approval_requests`: one row per request (action, parameters and their canonical
 *   SHA-256, requester, expiry, decision, execution). A CHECK keeps the decider apart from the
 *   requester, so self-approval is refused by the database too.
 * - `access.approval_log`: every step (REQUESTED, APPROVED, REJECTED, EXECUTED, REFUSED), append-only
 *   (triggers refuse UPDATE, DELETE and TRUNCATE). No foreign key to the request: a refusal is
 *   written from outside the refused caller's transaction, which may hold the request's row lock.
 * - `access.consume_approval`: the single-use gate, one UPDATE … WHERE … RETURNING.
 * - `bronze.event_tombstones`: what remains of a destroyed event (key, checksum, who, when, why),
 *   append-only like the rest of Bronze.
 * - `silver.facts.erased_at`: a fact retired and scrubbed because its only sources were erased.
 * - `bronze.destroy_event`: SECURITY DEFINER (the owner), fixed search_path. It consumes a
 *   DESTROY_EVENT approval for this event and performs the erasure in one call. The events' row
 *   trigger now lets exactly that UPDATE through (content to '', raw_payload to NULL, nothing else
 *   changed), and only while the function runs: a transaction-local flag naming the event and
 *   the call stack's outermost frame being this function. DELETE stays refused everywhere.
 */
export class ApprovalsAndErasure1764400000200 implements MigrationInterface {
  name = 'ApprovalsAndErasure1764400000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE access.approval_requests (
        id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        namespace          text NOT NULL,
        action             text NOT NULL CHECK (action IN ('DESTROY_EVENT', 'OVERWRITE_OVERLAY')),
        params             jsonb NOT NULL,
        params_hash        text NOT NULL CHECK (params_hash ~ '^[0-9a-f]{64}$'),
        reason             text NOT NULL CHECK (length(reason) > 0),
        requested_by       uuid NOT NULL REFERENCES access.principals(id),
        requested_by_name  text NOT NULL,
        status             text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'APPROVED', 'REJECTED', 'EXPIRED', 'EXECUTED')),
        created_at         timestamptz NOT NULL DEFAULT now(),
        expires_at         timestamptz NOT NULL,
        decided_by         uuid REFERENCES access.principals(id),
        decided_by_name    text,
        decided_at         timestamptz,
        decision_reason    text,
        executed_by        text,
        executed_by_name   text,
        executed_at        timestamptz,
        CHECK (expires_at > created_at),
        CHECK (decided_by IS NULL OR decided_by <> requested_by),
        CHECK (status NOT IN ('APPROVED', 'REJECTED', 'EXECUTED') OR decided_by IS NOT NULL),
        CHECK ((status = 'EXECUTED') = (executed_at IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX approval_requests_ns_idx ON access.approval_requests (namespace, created_at, id)`);

    await q.query(`
      CREATE TABLE access.approval_log (
        id              bigserial PRIMARY KEY,
        request_id      uuid NOT NULL,
        namespace       text NOT NULL,
        step            text NOT NULL CHECK (step IN ('REQUESTED', 'APPROVED', 'REJECTED', 'EXECUTED', 'REFUSED')),
        principal_id    text NOT NULL,
        principal_name  text NOT NULL,
        detail          text,
        at              timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE INDEX approval_log_request_idx ON access.approval_log (request_id, id)`);
    await q.query(`
      CREATE FUNCTION access.reject_log_mutation() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'the approval log is append-only: % on %.% is not allowed', TG_OP, TG_TABLE_SCHEMA, TG_TABLE_NAME
          USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await q.query(`CREATE TRIGGER approval_log_no_update_delete BEFORE UPDATE OR DELETE ON access.approval_log
                   FOR EACH ROW EXECUTE FUNCTION access.reject_log_mutation()`);
    await q.query(`CREATE TRIGGER approval_log_no_truncate BEFORE TRUNCATE ON access.approval_log
                   FOR EACH STATEMENT EXECUTE FUNCTION access.reject_log_mutation()`);

    // The gate: every condition in one statement, so two executors cannot both pass.
    await q.query(`
      CREATE FUNCTION access.consume_approval(p_id uuid, p_namespace text, p_action text, p_hash text, p_executor text)
      RETURNS uuid LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
        UPDATE access.approval_requests
           SET status = 'EXECUTED', executed_by = p_executor, executed_at = clock_timestamp(),
               executed_by_name = COALESCE((SELECT p.name FROM access.principals p WHERE p.id::text = p_executor), p_executor)
         WHERE id = p_id AND namespace = p_namespace AND action = p_action AND params_hash = p_hash
           AND status = 'APPROVED' AND expires_at > now() AND decided_by IS NOT NULL AND decided_by <> requested_by
        RETURNING id
      $$`);
    await q.query(`REVOKE ALL ON FUNCTION access.consume_approval(uuid, text, text, text, text) FROM PUBLIC`);

    await q.query(`
      CREATE TABLE bronze.event_tombstones (
        event_id         uuid PRIMARY KEY,
        namespace        text NOT NULL,
        source           text NOT NULL,
        source_event_id  text NOT NULL,
        occurred_at      timestamptz NOT NULL,
        checksum         text NOT NULL,
        approval_id      uuid NOT NULL UNIQUE,
        requested_by     uuid NOT NULL,
        approved_by      uuid NOT NULL,
        executed_by      uuid NOT NULL,
        executed_by_name text NOT NULL,
        reason           text NOT NULL,
        retired_facts    integer NOT NULL,
        kept_facts       integer NOT NULL,
        destroyed_at     timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE INDEX event_tombstones_ns_idx ON bronze.event_tombstones (namespace, destroyed_at)`);
    await q.query(`CREATE TRIGGER event_tombstones_no_update_delete BEFORE UPDATE OR DELETE ON bronze.event_tombstones
                   FOR EACH ROW EXECUTE FUNCTION bronze.reject_mutation()`);
    await q.query(`CREATE TRIGGER event_tombstones_no_truncate BEFORE TRUNCATE ON bronze.event_tombstones
                   FOR EACH STATEMENT EXECUTE FUNCTION bronze.reject_mutation()`);

    await q.query(`ALTER TABLE silver.facts ADD COLUMN erased_at timestamptz`);
    await q.query(`CREATE INDEX facts_erased_idx ON silver.facts (namespace) WHERE erased_at IS NOT NULL`);

    // The events' row guard. Same trigger name as before (bronze-role.test.ts lists it); the
    // partitions' clones are replaced with it.
    await q.query(`
      CREATE FUNCTION bronze.guard_event_mutation() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
      DECLARE
        stack text;
        outermost text;
      BEGIN
        IF TG_OP = 'UPDATE' AND current_setting('medallion.erasing_event', true) = OLD.id::text THEN
          GET DIAGNOSTICS stack = PG_CONTEXT;
          outermost := (regexp_split_to_array(stack, E'\\n'))[array_length(regexp_split_to_array(stack, E'\\n'), 1)];
          IF outermost ~ '^PL/pgSQL function bronze\\.destroy_event\\(uuid,uuid,uuid,text,text\\) line [0-9]+ at SQL statement$'
             AND NEW.content = '' AND NEW.raw_payload IS NULL
             AND (NEW.id, NEW.namespace, NEW.source, NEW.source_event_id, NEW.provenance_root, NEW.kind, NEW.conversation_id,
                  NEW.session_id, NEW.sequence_num, NEW.role, NEW.actor, NEW.tool_call_id, NEW.checksum, NEW.occurred_at, NEW.ingested_at)
                 IS NOT DISTINCT FROM
                 (OLD.id, OLD.namespace, OLD.source, OLD.source_event_id, OLD.provenance_root, OLD.kind, OLD.conversation_id,
                  OLD.session_id, OLD.sequence_num, OLD.role, OLD.actor, OLD.tool_call_id, OLD.checksum, OLD.occurred_at, OLD.ingested_at) THEN
            RETURN NEW;
          END IF;
        END IF;
        RAISE EXCEPTION 'bronze is append-only: % on %.% is not allowed (an approved destroyEvent is the only erasure)', TG_OP, TG_TABLE_SCHEMA, TG_TABLE_NAME
          USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await q.query(`DROP TRIGGER events_no_update_delete ON bronze.events`);
    await q.query(`CREATE TRIGGER events_no_update_delete BEFORE UPDATE OR DELETE ON bronze.events
                   FOR EACH ROW EXECUTE FUNCTION bronze.guard_event_mutation()`);

    await q.query(DESTROY_EVENT_FUNCTION);
    await q.query(`REVOKE ALL ON FUNCTION bronze.destroy_event(uuid, uuid, uuid, text, text) FROM PUBLIC`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION bronze.destroy_event(uuid, uuid, uuid, text, text)`);
    await q.query(`DROP TRIGGER events_no_update_delete ON bronze.events`);
    await q.query(`CREATE TRIGGER events_no_update_delete BEFORE UPDATE OR DELETE ON bronze.events
                   FOR EACH ROW EXECUTE FUNCTION bronze.reject_mutation()`);
    await q.query(`DROP FUNCTION bronze.guard_event_mutation()`);
    await q.query(`ALTER TABLE silver.facts DROP COLUMN erased_at`);
    // Dropping the tombstones would lose the record of legal erasures: down refuses when there are any.
    await q.query(`DO $$ BEGIN IF EXISTS (SELECT 1 FROM bronze.event_tombstones) THEN
                     RAISE EXCEPTION 'bronze.event_tombstones holds erasures: refusing to drop it'; END IF; END $$`);
    await q.query(`DROP TABLE bronze.event_tombstones`);
    await q.query(`DROP FUNCTION access.consume_approval(uuid, text, text, text, text)`);
    await q.query(`DROP TABLE access.approval_log`);
    await q.query(`DROP FUNCTION access.reject_log_mutation()`);
    await q.query(`DROP TABLE access.approval_requests`);
  }
}

/**
 * The erasure. Errors carry SQLSTATEs the service maps (bronze/erasure.repository.ts):
 * P0002 not found, 22023 wrong action or parameters, 42501 not (or no longer) approved, 55000 already destroyed.
 */
const DESTROY_EVENT_FUNCTION = `
CREATE FUNCTION bronze.destroy_event(p_event_id uuid, p_approval_id uuid, p_executor uuid, p_executor_name text, p_namespace text)
RETURNS TABLE (retired_facts integer, kept_facts integer, destroyed_at timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  k record;
  a record;
  expected_hash text;
  consumed uuid;
  erased uuid[];
  kept uuid[];
  reopened uuid[];
  gone_rels uuid[];
  kept_rels uuid[];
  gone_entities uuid[];
  at timestamptz := clock_timestamp();
BEGIN
  SELECT ek.namespace, ek.source, ek.source_event_id, ek.occurred_at, ek.checksum INTO k
    FROM bronze.event_keys ek WHERE ek.event_id = p_event_id;
  IF NOT FOUND OR k.namespace <> p_namespace THEN
    RAISE EXCEPTION 'event % not found in namespace %', p_event_id, p_namespace USING ERRCODE = 'no_data_found';
  END IF;
  IF EXISTS (SELECT 1 FROM bronze.event_tombstones t WHERE t.event_id = p_event_id) THEN
    RAISE EXCEPTION 'event % was already destroyed', p_event_id USING ERRCODE = 'object_not_in_prerequisite_state';
  END IF;
  -- The canonical JSON (RFC 8785) of {"eventId": "<id>"}: what requestApproval hashed.
  expected_hash := encode(sha256(convert_to('{"eventId":' || to_json(p_event_id::text)::text || '}', 'UTF8')), 'hex');
  consumed := access.consume_approval(p_approval_id, k.namespace, 'DESTROY_EVENT', expected_hash, p_executor::text);
  IF consumed IS NULL THEN
    SELECT r.namespace, r.action, r.params_hash, r.status, r.expires_at INTO a FROM access.approval_requests r WHERE r.id = p_approval_id;
    IF NOT FOUND OR a.namespace <> k.namespace THEN
      RAISE EXCEPTION 'approval % not found in namespace %', p_approval_id, k.namespace USING ERRCODE = 'no_data_found';
    ELSIF a.action <> 'DESTROY_EVENT' THEN
      RAISE EXCEPTION 'approval % is for %, not DESTROY_EVENT', p_approval_id, a.action USING ERRCODE = 'invalid_parameter_value';
    ELSIF a.params_hash <> expected_hash THEN
      RAISE EXCEPTION 'approval % was granted for other parameters, not {"eventId":"%"}: request an approval for this event', p_approval_id, p_event_id
        USING ERRCODE = 'invalid_parameter_value';
    ELSIF a.status = 'EXECUTED' THEN
      RAISE EXCEPTION 'approval % was already executed: an approval is single-use', p_approval_id USING ERRCODE = 'insufficient_privilege';
    ELSIF a.status IN ('PENDING', 'APPROVED') AND a.expires_at <= now() THEN
      RAISE EXCEPTION 'approval % expired at %: request a new one', p_approval_id, a.expires_at USING ERRCODE = 'insufficient_privilege';
    ELSE
      RAISE EXCEPTION 'approval % is %, not APPROVED', p_approval_id, a.status USING ERRCODE = 'insufficient_privilege';
    END IF;
  END IF;
  SELECT r.requested_by, r.decided_by, r.reason INTO a FROM access.approval_requests r WHERE r.id = p_approval_id;

  -- Bronze: the one UPDATE the row guard lets through, while the flag names this event.
  PERFORM set_config('medallion.erasing_event', p_event_id::text, true);
  UPDATE bronze.events e SET content = '', raw_payload = NULL WHERE e.id = p_event_id AND e.occurred_at = k.occurred_at;
  PERFORM set_config('medallion.erasing_event', '', true);

  -- Silver: facts resting only on erased events are retired and scrubbed; facts with another
  -- surviving source keep living, with this source dropped.
  erased := ARRAY(
    SELECT DISTINCT s.fact_id FROM silver.fact_sources s
     WHERE s.event_id = p_event_id
       AND NOT EXISTS (SELECT 1 FROM silver.fact_sources o
                        WHERE o.fact_id = s.fact_id AND o.event_id <> p_event_id
                          AND NOT EXISTS (SELECT 1 FROM bronze.event_tombstones t WHERE t.event_id = o.event_id)));
  kept := ARRAY(SELECT DISTINCT s.fact_id FROM silver.fact_sources s WHERE s.event_id = p_event_id AND s.fact_id <> ALL (erased));
  UPDATE silver.facts f SET retired_at = COALESCE(f.retired_at, at), erased_at = at, statement = '[erased]', object_value = NULL,
                            embedding = NULL, embedding_model = NULL
   WHERE f.id = ANY (erased);
  WITH u AS (UPDATE silver.facts f SET valid_to = NULL, superseded_by = NULL
              WHERE f.superseded_by = ANY (erased) AND f.retired_at IS NULL RETURNING f.id)
  SELECT COALESCE(array_agg(u.id), '{}') INTO reopened FROM u;
  UPDATE silver.fact_sources s SET quote = NULL WHERE s.event_id = p_event_id;
  DELETE FROM silver.fact_sources s WHERE s.event_id = p_event_id AND s.fact_id = ANY (kept);
  -- The judge's record: decisions about erased facts lose their text; other decisions lose erased candidates.
  UPDATE silver.judge_decisions d SET statement = '[erased]', candidates = '[]'::jsonb
   WHERE d.fact_id = ANY (erased) OR d.target_fact_id = ANY (erased);
  UPDATE silver.judge_decisions d
     SET candidates = COALESCE((SELECT jsonb_agg(x.c ORDER BY x.o) FROM jsonb_array_elements(d.candidates) WITH ORDINALITY AS x(c, o)
                                 WHERE NOT ((x.c ->> 'id') = ANY (erased::text[]))), '[]'::jsonb)
   WHERE d.namespace = k.namespace
     AND EXISTS (SELECT 1 FROM jsonb_array_elements(d.candidates) c WHERE (c ->> 'id') = ANY (erased::text[]));

  gone_rels := ARRAY(
    SELECT DISTINCT s.relationship_id FROM silver.relationship_sources s
     WHERE s.event_id = p_event_id
       AND NOT EXISTS (SELECT 1 FROM silver.relationship_sources o
                        WHERE o.relationship_id = s.relationship_id AND o.event_id <> p_event_id
                          AND NOT EXISTS (SELECT 1 FROM bronze.event_tombstones t WHERE t.event_id = o.event_id)));
  kept_rels := ARRAY(SELECT DISTINCT s.relationship_id FROM silver.relationship_sources s
                      WHERE s.event_id = p_event_id AND s.relationship_id <> ALL (gone_rels));
  UPDATE silver.relationships r SET retired_at = at WHERE r.id = ANY (gone_rels) AND r.retired_at IS NULL;
  UPDATE silver.relationship_sources s SET quote = NULL WHERE s.event_id = p_event_id;
  DELETE FROM silver.relationship_sources s WHERE s.event_id = p_event_id AND s.relationship_id = ANY (kept_rels);

  -- Entities only the erased facts and relationships named: retired, their names scrubbed.
  WITH cand AS (
    SELECT unnest(ARRAY[f.subject_entity_id, f.object_entity_id]) AS id FROM silver.facts f WHERE f.id = ANY (erased)
    UNION SELECT unnest(ARRAY[r.source_entity_id, r.target_entity_id]) FROM silver.relationships r WHERE r.id = ANY (gone_rels))
  SELECT COALESCE(array_agg(DISTINCT c.id), '{}') INTO gone_entities FROM cand c
   WHERE c.id IS NOT NULL
     AND NOT EXISTS (SELECT 1 FROM silver.facts f WHERE (f.subject_entity_id = c.id OR f.object_entity_id = c.id) AND f.erased_at IS NULL)
     AND NOT EXISTS (SELECT 1 FROM silver.relationships r WHERE (r.source_entity_id = c.id OR r.target_entity_id = c.id) AND r.id <> ALL (gone_rels));
  UPDATE silver.entities n SET retired_at = COALESCE(n.retired_at, at), name = '[erased]', name_key = '[erased]:' || n.id::text,
                               aliases = '{}', alias_keys = '{}'
   WHERE n.id = ANY (gone_entities);

  DELETE FROM silver.event_embeddings x WHERE x.event_id = p_event_id;
  UPDATE silver.dead_letters d SET raw_output = NULL, error = '[erased]', resolved_at = COALESCE(d.resolved_at, at) WHERE d.event_id = p_event_id;

  -- Derivation: never again (rebuilds skip tombstones), and fence out a batch in flight that read the content.
  UPDATE ops.derivation_queue q SET status = 'done', processed_at = at, last_error = NULL, job_id = NULL, locked_by = NULL, locked_until = NULL
   WHERE q.event_id = p_event_id;
  UPDATE ops.derivation_leases l SET generation = l.generation + 1 WHERE l.namespace = k.namespace;

  -- Graph: the projector re-reads each id; a tombstoned event or erased fact is removed from Neo4j.
  INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload)
  SELECT k.namespace, x.t, x.id::text, 'upsert', jsonb_build_object('id', x.id::text, 'erasure', p_event_id::text)
    FROM (SELECT 'event' AS t, p_event_id AS id, 0 AS ord
          UNION ALL SELECT 'fact', f, 1 FROM unnest(erased || kept || reopened) AS f
          UNION ALL SELECT 'entity', n, 2 FROM unnest(gone_entities) AS n
          UNION ALL SELECT 'relationship', r, 3 FROM unnest(gone_rels || kept_rels) AS r) x
   ORDER BY x.ord, x.id;

  INSERT INTO bronze.event_tombstones (event_id, namespace, source, source_event_id, occurred_at, checksum, approval_id,
                                       requested_by, approved_by, executed_by, executed_by_name, reason, retired_facts, kept_facts, destroyed_at)
  VALUES (p_event_id, k.namespace, k.source, k.source_event_id, k.occurred_at, k.checksum, p_approval_id,
          a.requested_by, a.decided_by, p_executor, p_executor_name, a.reason, cardinality(erased), cardinality(kept), at);
  INSERT INTO access.approval_log (request_id, namespace, step, principal_id, principal_name, detail)
  VALUES (p_approval_id, k.namespace, 'EXECUTED', p_executor::text, p_executor_name,
          format('destroyed event %s: content and payload erased, %s fact(s) retired and scrubbed, %s kept with this source dropped',
                 p_event_id, cardinality(erased), cardinality(kept)));
  RETURN QUERY SELECT cardinality(erased), cardinality(kept), at;
END $$`;
