import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Erasure holds whatever the judge did (docs/approvals.md "What happens to derived data"):
 * `bronze.destroy_event` used to keep a fact that had another surviving source, verbatim, with the
 * erased source dropped. A judge's SKIP or UPDATE can merge two distinct statements into one fact,
 * so that text could hold words only the erased event supported. Now every fact with the erased
 * event among its sources is retired and scrubbed like a fact resting on it alone, and its
 * surviving source events are queued to be derived again, so what they support comes back from
 * their own words. Same signature, same result columns (`kept_facts` counts the facts that also
 * rested on other events), so grants, the Bronze row guard and the Gold trigger's call-stack test
 * are unchanged.
 */
export class ErasureRederivesSharedFacts1764400000960 implements MigrationInterface {
  name = 'ErasureRederivesSharedFacts1764400000960';

  async up(q: QueryRunner): Promise<void> {
    await q.query(DESTROY_EVENT_REDERIVING);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(DESTROY_EVENT_KEEPING);
  }
}

/** Errors and SQLSTATEs as before (bronze/erasure.repository.ts maps them). */
const DESTROY_EVENT_REDERIVING = `
CREATE OR REPLACE FUNCTION bronze.destroy_event(p_event_id uuid, p_approval_id uuid, p_executor uuid, p_executor_name text, p_namespace text)
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
  rederive uuid[];
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

  -- Silver: every fact with this event among its sources is retired and scrubbed, whatever its
  -- other sources: its text may hold words only this event supported (a judge's SKIP or UPDATE
  -- merges two statements into one). Its surviving source events are derived again (below), so
  -- what they alone support comes back as new facts, from their own words.
  erased := ARRAY(SELECT DISTINCT s.fact_id FROM silver.fact_sources s JOIN silver.facts f ON f.id = s.fact_id
                   WHERE s.event_id = p_event_id AND f.erased_at IS NULL);
  -- "kept" is now the facts that had another surviving source: erased too, and re-derived from those sources.
  kept := ARRAY(
    SELECT DISTINCT s.fact_id FROM silver.fact_sources s
     WHERE s.fact_id = ANY (erased)
       AND EXISTS (SELECT 1 FROM silver.fact_sources o
                    WHERE o.fact_id = s.fact_id AND o.event_id <> p_event_id
                      AND NOT EXISTS (SELECT 1 FROM bronze.event_tombstones t WHERE t.event_id = o.event_id)));
  rederive := ARRAY(
    SELECT DISTINCT o.event_id FROM silver.fact_sources o
     WHERE o.fact_id = ANY (kept) AND o.event_id <> p_event_id
       AND NOT EXISTS (SELECT 1 FROM bronze.event_tombstones t WHERE t.event_id = o.event_id));
  UPDATE silver.facts f SET retired_at = COALESCE(f.retired_at, at), erased_at = at, statement = '[erased]', object_value = NULL,
                            embedding = NULL, embedding_model = NULL
   WHERE f.id = ANY (erased);
  WITH u AS (UPDATE silver.facts f SET valid_to = NULL, superseded_by = NULL
              WHERE f.superseded_by = ANY (erased) AND f.retired_at IS NULL RETURNING f.id)
  SELECT COALESCE(array_agg(u.id), '{}') INTO reopened FROM u;
  UPDATE silver.fact_sources s SET quote = NULL WHERE s.event_id = p_event_id;
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
  -- The surviving sources of the facts erased with it are derived again (as a rebuild would).
  UPDATE ops.derivation_queue q SET status = 'pending', attempts = 0, available_at = now(), processed_at = NULL, last_error = NULL,
                                    job_id = NULL, locked_by = NULL, locked_until = NULL
   WHERE q.event_id = ANY (rederive);

  -- Graph: the projector re-reads each id; a tombstoned event or erased fact is removed from Neo4j.
  INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload)
  SELECT k.namespace, x.t, x.id::text, 'upsert', jsonb_build_object('id', x.id::text, 'erasure', p_event_id::text)
    FROM (SELECT 'event' AS t, p_event_id AS id, 0 AS ord
          UNION ALL SELECT 'fact', f, 1 FROM unnest(erased || reopened) AS f
          UNION ALL SELECT 'entity', n, 2 FROM unnest(gone_entities) AS n
          UNION ALL SELECT 'relationship', r, 3 FROM unnest(gone_rels || kept_rels) AS r) x
   ORDER BY x.ord, x.id;

  INSERT INTO bronze.event_tombstones (event_id, namespace, source, source_event_id, occurred_at, checksum, approval_id,
                                       requested_by, approved_by, executed_by, executed_by_name, reason, retired_facts, kept_facts, destroyed_at)
  VALUES (p_event_id, k.namespace, k.source, k.source_event_id, k.occurred_at, k.checksum, p_approval_id,
          a.requested_by, a.decided_by, p_executor, p_executor_name, a.reason, cardinality(erased), cardinality(kept), at);
  INSERT INTO access.approval_log (request_id, namespace, step, principal_id, principal_name, detail)
  VALUES (p_approval_id, k.namespace, 'EXECUTED', p_executor::text, p_executor_name,
          format('destroyed event %s: content and payload erased, %s fact(s) retired and scrubbed (%s of them also rested on other events: %s event(s) queued to derive again)',
                 p_event_id, cardinality(erased), cardinality(kept), cardinality(rederive)));
  RETURN QUERY SELECT cardinality(erased), cardinality(kept), at;
END $$`;

/** The function of migration 1764400000200, for `down`. */
const DESTROY_EVENT_KEEPING = `
CREATE OR REPLACE FUNCTION bronze.destroy_event(p_event_id uuid, p_approval_id uuid, p_executor uuid, p_executor_name text, p_namespace text)
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
