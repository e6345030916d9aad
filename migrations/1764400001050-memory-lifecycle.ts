import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The memory lifecycle (docs/lifecycle.md): decay, use recording, reversible pruning and Bronze
 * retention by approval.
 *
 * - `silver.facts.retired_reason`: why a fact left the current view ('pruned', 'rebuild', …);
 *   `restorePruned` clears a 'pruned' retirement and nothing else.
 * - `silver.facts.effective_importance` / `decayed_at`: what the `decay` job last computed, a pure
 *   function of the fact's base importance, its sources' ingest times (Bronze), its recorded uses
 *   and the clock. A rebuilt fact starts at NULL (read as its base importance) until the next run.
 * - `silver.fact_usage`: when a fact was last returned by search or read by an agent, keyed by the
 *   fact's identity (namespace + md5 of its Silver statement), not its row id, so a Silver rebuild
 *   (new rows, same statements) keeps every recorded use.
 * - `RETAIN_BRONZE`, a new approval action on namespace '*' (a partition holds every namespace,
 *   so requester and approver need their capability on all of them), and
 *   `bronze.retain_events(before, approval, executor)`: the owner's SECURITY DEFINER function that
 *   consumes the approval and drops the monthly partitions ending on or before `before`, logging
 *   each one (range, event counts per namespace) in the append-only `bronze.retention_log`.
 */
export class MemoryLifecycle1764400001050 implements MigrationInterface {
  name = 'MemoryLifecycle1764400001050';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE silver.facts ADD COLUMN retired_reason text`);
    await q.query(`ALTER TABLE silver.facts ADD CONSTRAINT facts_retired_reason_ck CHECK (retired_reason IS NULL OR retired_at IS NOT NULL)`);
    await q.query(`ALTER TABLE silver.facts ADD COLUMN effective_importance real CHECK (effective_importance >= 0 AND effective_importance <= 1)`);
    await q.query(`ALTER TABLE silver.facts ADD COLUMN decayed_at timestamptz`);
    // restorePruned and the prune schedule look a namespace's pruned facts up.
    await q.query(`CREATE INDEX facts_pruned_idx ON silver.facts (namespace) WHERE retired_reason = 'pruned'`);
    // Already retired rows: a fact with an erasure is 'erasure'; the rest cannot be told apart cheaply (NULL).
    await q.query(`UPDATE silver.facts SET retired_reason = 'erasure' WHERE erased_at IS NOT NULL AND retired_reason IS NULL`);

    await q.query(`
      CREATE TABLE silver.fact_usage (
        namespace     text NOT NULL,
        fact_key      text NOT NULL,
        last_used_at  timestamptz NOT NULL,
        use_count     bigint NOT NULL DEFAULT 0 CHECK (use_count >= 0),
        PRIMARY KEY (namespace, fact_key)
      )`);

    await q.query(`ALTER TABLE gold.entities ADD COLUMN IF NOT EXISTS retired_reason text`);
    await q.query(`CREATE INDEX gold_entities_pruned_idx ON gold.entities (namespace) WHERE retired_reason = 'pruned'`);

    // RETAIN_BRONZE: a new action; request_approval learns its capability (admin, as DESTROY_EVENT).
    await q.query(`ALTER TABLE access.approval_requests DROP CONSTRAINT IF EXISTS approval_requests_action_check`);
    await q.query(
      `ALTER TABLE access.approval_requests ADD CONSTRAINT approval_requests_action_check CHECK (action IN ('DESTROY_EVENT', 'OVERWRITE_OVERLAY', 'RETAIN_BRONZE'))`,
    );
    await q.query(REQUEST_APPROVAL(`CASE WHEN p_action IN ('DESTROY_EVENT', 'RETAIN_BRONZE') THEN 'admin' ELSE 'overlay' END`));

    await q.query(`
      CREATE TABLE bronze.retention_log (
        partition_name   text PRIMARY KEY,
        range_from       timestamptz NOT NULL,
        range_to         timestamptz NOT NULL,
        events           bigint NOT NULL,
        per_namespace    jsonb NOT NULL,
        approval_id      uuid NOT NULL,
        executed_by      uuid NOT NULL,
        dropped_at       timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE TRIGGER retention_log_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON bronze.retention_log
                     FOR EACH STATEMENT EXECUTE FUNCTION bronze.reject_mutation()`);
    await q.query(`REVOKE ALL ON TABLE bronze.retention_log FROM PUBLIC`);
    await q.query(RETAIN_EVENTS_FUNCTION);
    await q.query(`REVOKE ALL ON FUNCTION bronze.retain_events(date, uuid, uuid) FROM PUBLIC`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION bronze.retain_events(date, uuid, uuid)`);
    await q.query(`DROP TABLE bronze.retention_log`);
    await q.query(REQUEST_APPROVAL(`CASE p_action WHEN 'DESTROY_EVENT' THEN 'admin' ELSE 'overlay' END`));
    await q.query(`ALTER TABLE access.approval_requests DROP CONSTRAINT approval_requests_action_check`);
    await q.query(
      `ALTER TABLE access.approval_requests ADD CONSTRAINT approval_requests_action_check CHECK (action IN ('DESTROY_EVENT', 'OVERWRITE_OVERLAY'))`,
    );
    await q.query(`DROP INDEX gold.gold_entities_pruned_idx`);
    await q.query(`DROP TABLE silver.fact_usage`);
    await q.query(`DROP INDEX silver.facts_pruned_idx`);
    await q.query(
      `ALTER TABLE silver.facts DROP COLUMN decayed_at, DROP COLUMN effective_importance, DROP CONSTRAINT facts_retired_reason_ck, DROP COLUMN retired_reason`,
    );
  }
}

/** access.request_approval of migration 0900 with the capability per action as `capability` (an SQL expression over p_action). */
function REQUEST_APPROVAL(capability: string): string {
  const name = `CASE WHEN length(t.name) > 200 THEN left(t.name, 199) || '…' ELSE t.name END`;
  return `
      CREATE OR REPLACE FUNCTION access.request_approval(p_secret text, p_namespace text, p_action text, p_params jsonb, p_params_hash text,
                                              p_reason text, p_ttl_seconds double precision)
      RETURNS uuid LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
      DECLARE
        t access.tokens;
        rid uuid;
      BEGIN
        t := access.live_token(p_secret);
        IF t.id IS NULL OR NOT access.token_can(t.id, ${capability}, p_namespace) THEN
          RAISE EXCEPTION 'request_approval: the requesting token lacks the capability for % on %', p_action, p_namespace
            USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF p_params_hash IS DISTINCT FROM access.params_hash(p_params) THEN
          RAISE EXCEPTION 'request_approval: params_hash is not the canonical hash of params' USING ERRCODE = 'invalid_parameter_value';
        END IF;
        INSERT INTO access.approval_requests (namespace, action, params, params_hash, reason, requested_by, requested_by_name, expires_at)
        VALUES (p_namespace, p_action, p_params, p_params_hash, p_reason, t.principal_id, ${name}, now() + make_interval(secs => p_ttl_seconds))
        RETURNING id INTO rid;
        RETURN rid;
      END $$`;
}

/**
 * Drops the Bronze partitions whose range ends on or before `p_before` (the first of a month, at
 * least two months back: this month's and last month's partitions are never dropped), after
 * consuming an approved RETAIN_BRONZE approval on namespace '*' for exactly {"before": "YYYY-MM-DD"}.
 * Errors: 22023 bad month or parameters, 42501 not (or no longer) approved, P0002 approval not found.
 */
const RETAIN_EVENTS_FUNCTION = `
CREATE FUNCTION bronze.retain_events(p_before date, p_approval_id uuid, p_executor uuid)
RETURNS TABLE (partition_name text, range_from timestamptz, range_to timestamptz, events bigint, per_namespace jsonb)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  a record;
  p record;
  expected_hash text;
  consumed uuid;
  counts jsonb;
  total bigint;
BEGIN
  IF p_before IS NULL OR p_before <> date_trunc('month', p_before)::date THEN
    RAISE EXCEPTION 'retention: before must be the first day of a month, got %', p_before USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF p_before > (date_trunc('month', now() AT TIME ZONE 'UTC') - interval '1 month')::date THEN
    RAISE EXCEPTION 'retention: % would drop this or last month''s events; the latest allowed is %', p_before,
      (date_trunc('month', now() AT TIME ZONE 'UTC') - interval '1 month')::date USING ERRCODE = 'invalid_parameter_value';
  END IF;
  expected_hash := access.params_hash(jsonb_build_object('before', to_char(p_before, 'YYYY-MM-DD')));
  consumed := access.consume_approval(p_approval_id, '*', 'RETAIN_BRONZE', expected_hash, p_executor::text);
  IF consumed IS NULL THEN
    SELECT r.namespace, r.action, r.params_hash, r.status, r.expires_at INTO a FROM access.approval_requests r WHERE r.id = p_approval_id;
    IF NOT FOUND OR a.namespace <> '*' THEN
      RAISE EXCEPTION 'approval % not found for namespace *', p_approval_id USING ERRCODE = 'no_data_found';
    ELSIF a.action <> 'RETAIN_BRONZE' THEN
      RAISE EXCEPTION 'approval % is for %, not RETAIN_BRONZE', p_approval_id, a.action USING ERRCODE = 'invalid_parameter_value';
    ELSIF a.params_hash <> expected_hash THEN
      RAISE EXCEPTION 'approval % was granted for other parameters, not {"before":"%"}: request an approval for this month', p_approval_id,
        to_char(p_before, 'YYYY-MM-DD') USING ERRCODE = 'invalid_parameter_value';
    ELSIF a.status = 'EXECUTED' THEN
      RAISE EXCEPTION 'approval % was already executed: an approval is single-use', p_approval_id USING ERRCODE = 'insufficient_privilege';
    ELSIF a.status IN ('PENDING', 'APPROVED') AND a.expires_at <= now() THEN
      RAISE EXCEPTION 'approval % expired at %: request a new one', p_approval_id, a.expires_at USING ERRCODE = 'insufficient_privilege';
    ELSE
      RAISE EXCEPTION 'approval % is %, not APPROVED', p_approval_id, a.status USING ERRCODE = 'insufficient_privilege';
    END IF;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtext('bronze.events partitions'));
  FOR p IN
    SELECT c.relname::text AS name,
           (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\) TO \\(''([^'']+)''\\)'))[1]::timestamptz AS lo,
           (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\) TO \\(''([^'']+)''\\)'))[2]::timestamptz AS hi
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'bronze.events'::regclass
     ORDER BY 2
  LOOP
    CONTINUE WHEN p.hi IS NULL OR p.hi > (p_before::timestamp AT TIME ZONE 'UTC');
    EXECUTE format('SELECT COALESCE(jsonb_object_agg(namespace, n), ''{}''::jsonb), COALESCE(sum(n), 0)::bigint
                      FROM (SELECT namespace, count(*) AS n FROM bronze.%I GROUP BY namespace) x', p.name) INTO counts, total;
    INSERT INTO bronze.retention_log (partition_name, range_from, range_to, events, per_namespace, approval_id, executed_by)
    VALUES (p.name, p.lo, p.hi, total, counts, p_approval_id, p_executor);
    EXECUTE format('DROP TABLE bronze.%I', p.name);
    partition_name := p.name; range_from := p.lo; range_to := p.hi; events := total; per_namespace := counts;
    RETURN NEXT;
  END LOOP;
END $$`;
