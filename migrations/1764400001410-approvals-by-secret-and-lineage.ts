import { MigrationInterface, QueryRunner } from 'typeorm';
import { FunctionEdit, rewriteFunction } from './function-edit';

/**
 * Every line of the approval log, every token revocation and the executor of an erasure are now
 * proven by a token secret, and an approval counts only from a second person (issue 43 items 3
 * and 5; docs/approvals.md "Who can write a decision", "Two people").
 *
 * Before, the runtime role could INSERT any line into `access.approval_log` (a REQUESTED, APPROVED
 * or EXECUTED line in anyone's name, in any namespace), revoke any token with `revoke_token(id)`,
 * the bootstrap one included, and name any executor when calling `bronze.destroy_event`. Now:
 *
 * - `access.request_approval` writes the REQUESTED line itself (the requester is the secret's);
 * - `access.log_refusal(request, secret, detail)` writes a REFUSED line for the secret's principal;
 * - `access.execute_approval(id, secret, namespace, action, hash)`: the gate for operations the
 *   service carries out itself (an overlay overwrite): the executor is the secret's principal, who
 *   must hold the action's capability on the namespace; it consumes the approval and writes the
 *   EXECUTED line;
 * - `bronze.destroy_event_as(secret, event, approval, namespace)`: the erasure, with the executor
 *   proven by its secret and holding `admin` on the namespace. It calls `bronze.destroy_event`,
 *   which the runtime role may no longer call; the two row guards that let the erasure's UPDATEs
 *   through accept the call stack of either (`bronze.erasure_stack_ok`);
 * - `access.revoke_token(id, secret)`: the token's own holder, or a token with `admin` on a
 *   pattern covering every grant of the revoked token (the rule `revokeToken` states), may revoke
 *   it; `revoke_token(id)` is dropped.
 *
 * The runtime role loses INSERT on `access.approval_log` and EXECUTE on `consume_approval` and
 * `destroy_event` (platform/postgres/runtime-role.ts).
 *
 * Two people: `access.lineage_conflict(requester, token)` says why a token may not decide a
 * request (NULL when it may): it is the requester's; its principal holds a bootstrap token (the
 * bootstrap admin may request, never approve); the token or its principal descends from the
 * requester (created by a token of the requester, or by a token or principal so created,
 * transitively), so the requester holds or held its secret; or its principal created a token of
 * the requester, or the requester's principal, so it holds or held the requester's secret and
 * could have made the request itself. `access.decide_approval` refuses such a decision.
 *
 * Lineage needs to know who created each principal: `access.principals.created_by_token`, set by
 * `access.create_token` from now on. For principals created before this migration it is the
 * creator of the principal's first token (the token `create_token` made in the same call); a
 * principal whose first token was a bootstrap token has none (a root).
 */
export class ApprovalsBySecretAndLineage1764400001410 implements MigrationInterface {
  name = 'ApprovalsBySecretAndLineage1764400001410';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE access.principals ADD COLUMN created_by_token uuid REFERENCES access.tokens(id)`);
    await q.query(`
      UPDATE access.principals p SET created_by_token = f.created_by
        FROM (SELECT DISTINCT ON (t.principal_id) t.principal_id, t.created_by FROM access.tokens t ORDER BY t.principal_id, t.created_at, t.id) f
       WHERE f.principal_id = p.id AND f.created_by IS NOT NULL`);
    await q.query(LINEAGE_CONFLICT);
    for (const edit of EDITS) await rewriteFunction(q, edit);
    await q.query(LOG_REFUSAL);
    await q.query(EXECUTE_APPROVAL);
    await q.query(`DROP FUNCTION access.revoke_token(uuid)`);
    await q.query(REVOKE_TOKEN_BY_SECRET);
    await q.query(ERASURE_STACK_OK);
    for (const edit of GUARD_EDITS) await rewriteFunction(q, edit);
    await q.query(DESTROY_EVENT_AS);
    for (const sig of NEW_FUNCTIONS) await q.query(`REVOKE ALL ON FUNCTION ${sig} FROM PUBLIC`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION bronze.destroy_event_as(text, uuid, uuid, text)`);
    for (const edit of GUARD_EDITS) await rewriteFunction(q, { ...edit, from: edit.to, to: edit.from });
    await q.query(`DROP FUNCTION bronze.erasure_stack_ok(text)`);
    await q.query(`DROP FUNCTION access.revoke_token(uuid, text)`);
    await q.query(`
      CREATE FUNCTION access.revoke_token(p_id uuid) RETURNS boolean
      LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
      BEGIN
        UPDATE access.tokens SET revoked_at = now() WHERE id = p_id AND revoked_at IS NULL;
        IF NOT FOUND THEN RETURN false; END IF;
        PERFORM pg_notify('medallion_token_revoked', p_id::text);
        RETURN true;
      END $$`);
    await q.query(`REVOKE ALL ON FUNCTION access.revoke_token(uuid) FROM PUBLIC`);
    await q.query(`DROP FUNCTION access.execute_approval(uuid, text, text, text, text)`);
    await q.query(`DROP FUNCTION access.log_refusal(uuid, text, text)`);
    for (const edit of EDITS) await rewriteFunction(q, { ...edit, from: edit.to, to: edit.from });
    await q.query(`DROP FUNCTION access.lineage_conflict(uuid, uuid)`);
    await q.query(`ALTER TABLE access.principals DROP COLUMN created_by_token`);
  }
}

const NEW_FUNCTIONS = [
  'access.lineage_conflict(uuid, uuid)',
  'access.log_refusal(uuid, text, text)',
  'access.execute_approval(uuid, text, text, text, text)',
  'access.revoke_token(uuid, text)',
  'bronze.destroy_event_as(text, uuid, uuid, text)',
];

/** The name shown for the acting token's principal in the log (token names are bounded the same way everywhere). */
const NAME = `CASE WHEN length(t.name) > 200 THEN left(t.name, 199) || '…' ELSE t.name END`;

const EDITS: FunctionEdit[] = [
  // A new principal records the token that created it (lineage).
  {
    signature: 'access.create_token(text, uuid, text, text, bytea, text, jsonb, timestamptz)',
    from: `INSERT INTO access.principals (name) VALUES (p_principal_name) RETURNING id INTO pid;`,
    to: `INSERT INTO access.principals (name, created_by_token) VALUES (p_principal_name, c.id) RETURNING id INTO pid;`,
  },
  // The REQUESTED line, written by the function that proves the requester (the service wrote it before).
  {
    signature: 'access.request_approval(text, text, text, jsonb, text, text, double precision)',
    from: `RETURNING id INTO rid;`,
    to: `RETURNING id INTO rid;
        INSERT INTO access.approval_log (request_id, namespace, step, principal_id, principal_name, detail)
        VALUES (rid, p_namespace, 'REQUESTED', t.principal_id::text, ${NAME}, 'reason: ' || p_reason);`,
  },
  // Two people: after the self-approval check, the lineage rule (it closes with that check's END IF).
  {
    signature: 'access.decide_approval(uuid, text, text, text)',
    from: `RAISE EXCEPTION 'decide_approval: the requester cannot decide its own request' USING ERRCODE = 'insufficient_privilege';`,
    to: `RAISE EXCEPTION 'decide_approval: the requester cannot decide its own request' USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF access.lineage_conflict(r.requested_by, t.id) IS NOT NULL THEN
          RAISE EXCEPTION 'decide_approval: %', access.lineage_conflict(r.requested_by, t.id) USING ERRCODE = 'insufficient_privilege';`,
  },
];

const LINEAGE_CONFLICT = `
CREATE FUNCTION access.lineage_conflict(p_requester uuid, p_token uuid) RETURNS text
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t access.tokens;
BEGIN
  SELECT * INTO t FROM access.tokens k WHERE k.id = p_token;
  IF NOT FOUND THEN
    RETURN 'the deciding token does not exist';
  END IF;
  IF t.principal_id = p_requester THEN
    RETURN 'the requester cannot decide its own request';
  END IF;
  IF EXISTS (SELECT 1 FROM access.tokens b WHERE b.principal_id = t.principal_id AND b.is_bootstrap) THEN
    RETURN 'the bootstrap admin may request but never approve';
  END IF;
  -- Descendants of the requester: its tokens, tokens they created, principals those created, their tokens, and so on.
  IF EXISTS (
    WITH RECURSIVE tainted(kind, id) AS (
      SELECT 'p'::text, p_requester
      UNION
      SELECT n.kind, n.id FROM tainted x CROSS JOIN LATERAL (
        SELECT 't'::text AS kind, k.id FROM access.tokens k
         WHERE (x.kind = 'p' AND k.principal_id = x.id) OR (x.kind = 't' AND k.created_by = x.id)
        UNION ALL
        SELECT 'p'::text, pr.id FROM access.principals pr WHERE x.kind = 't' AND pr.created_by_token = x.id) n
    )
    SELECT 1 FROM tainted WHERE (kind = 't' AND id = p_token) OR (kind = 'p' AND id = t.principal_id)) THEN
    RETURN 'the deciding token or its principal was created by the requester, or by a token the requester created';
  END IF;
  -- Ancestors of the requester: the tokens that created the requester's tokens or principal, and their creators.
  IF EXISTS (
    WITH RECURSIVE up(id) AS (
      SELECT k.id FROM access.tokens k WHERE k.principal_id = p_requester
      UNION SELECT pr.created_by_token FROM access.principals pr WHERE pr.id = p_requester AND pr.created_by_token IS NOT NULL
      UNION SELECT k.created_by FROM access.tokens k JOIN up ON k.id = up.id WHERE k.created_by IS NOT NULL
    )
    SELECT 1 FROM up JOIN access.tokens o ON o.id = up.id WHERE o.principal_id = t.principal_id) THEN
    RETURN 'the deciding principal created a token of the requester, so it holds or held the requester''s secret';
  END IF;
  RETURN NULL;
END $$`;

/** A REFUSED line by the secret's principal on an existing request (false: no such request, or no live token). */
const LOG_REFUSAL = `
CREATE FUNCTION access.log_refusal(p_request uuid, p_secret text, p_detail text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t access.tokens;
BEGIN
  t := access.live_token(p_secret);
  IF t.id IS NULL THEN RETURN false; END IF;
  INSERT INTO access.approval_log (request_id, namespace, step, principal_id, principal_name, detail)
  SELECT r.id, r.namespace, 'REFUSED', t.principal_id::text, ${NAME}, left(p_detail, 2000)
    FROM access.approval_requests r WHERE r.id = p_request;
  RETURN FOUND;
END $$`;

/**
 * The gate of operations the service performs itself: consumes the approval for the secret's
 * principal and logs EXECUTED; NULL when a condition of the approval failed (the caller reads the
 * request to say which). An executor without the action's capability is refused after the
 * consumption, which its error rolls back.
 */
const EXECUTE_APPROVAL = `
CREATE FUNCTION access.execute_approval(p_id uuid, p_secret text, p_namespace text, p_action text, p_hash text) RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t access.tokens;
  done uuid;
BEGIN
  t := access.live_token(p_secret);
  IF t.id IS NULL THEN
    RAISE EXCEPTION 'execute_approval: the executing token is not a live token' USING ERRCODE = 'insufficient_privilege';
  END IF;
  done := access.consume_approval(p_id, p_namespace, p_action, p_hash, t.principal_id::text);
  IF done IS NULL THEN
    RETURN NULL;
  END IF;
  IF NOT access.token_can(t.id, CASE WHEN p_action IN ('DESTROY_EVENT', 'RETAIN_BRONZE') THEN 'admin' ELSE 'overlay' END, p_namespace) THEN
    RAISE EXCEPTION 'execute_approval: the executing token lacks the capability for % on %', p_action, p_namespace
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  INSERT INTO access.approval_log (request_id, namespace, step, principal_id, principal_name, detail)
  VALUES (done, p_namespace, 'EXECUTED', t.principal_id::text, ${NAME}, 'executed ' || p_action);
  RETURN done;
END $$`;

/** Revokes a token for the secret's holder: its own, or one whose every grant an admin grant of the secret's token covers. */
const REVOKE_TOKEN_BY_SECRET = `
CREATE FUNCTION access.revoke_token(p_id uuid, p_secret text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t access.tokens;
BEGIN
  t := access.live_token(p_secret);
  IF t.id IS NULL THEN
    RAISE EXCEPTION 'revoke_token: the revoking token is not a live token' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF t.id <> p_id AND EXISTS (
       SELECT 1 FROM access.grants g WHERE g.token_id = p_id
          AND NOT EXISTS (SELECT 1 FROM access.grants h WHERE h.token_id = t.id AND 'admin' = ANY (h.capabilities)
                                                          AND access.pattern_covers(h.namespace_pattern, g.namespace_pattern))) THEN
    RAISE EXCEPTION 'revoke_token: revoking token % needs admin on every namespace it grants', p_id USING ERRCODE = 'insufficient_privilege';
  END IF;
  UPDATE access.tokens SET revoked_at = now() WHERE id = p_id AND revoked_at IS NULL;
  IF NOT FOUND THEN RETURN false; END IF;
  PERFORM pg_notify('medallion_token_revoked', p_id::text);
  RETURN true;
END $$`;

/**
 * Whether a call stack (PG_CONTEXT, innermost frame first) comes from the erasure: its outermost
 * frame is \`bronze.destroy_event\`, or \`bronze.destroy_event_as\` calling it. Both row guards
 * (Bronze events, Gold overlays) accept their erasure UPDATE only then.
 */
const ERASURE_STACK_OK = `
CREATE FUNCTION bronze.erasure_stack_ok(p_stack text) RETURNS boolean
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE
    WHEN f[cardinality(f)] ~ '^PL/pgSQL function bronze\\.destroy_event\\(uuid,uuid,uuid,text,text\\) line [0-9]+ at SQL statement$' THEN true
    WHEN cardinality(f) >= 3
         AND f[cardinality(f)] ~ '^PL/pgSQL function bronze\\.destroy_event_as\\(text,uuid,uuid,text\\) line [0-9]+ at RETURN QUERY$'
         AND f[cardinality(f) - 2] ~ '^PL/pgSQL function bronze\\.destroy_event\\(uuid,uuid,uuid,text,text\\) line [0-9]+ at SQL statement$' THEN true
    ELSE false END
    FROM (SELECT regexp_split_to_array(p_stack, E'\\n') AS f) s
$$`;

const GUARD_EDITS: FunctionEdit[] = [
  {
    signature: 'bronze.guard_event_mutation()',
    from: `IF outermost ~ '^PL/pgSQL function bronze\\.destroy_event\\(uuid,uuid,uuid,text,text\\) line [0-9]+ at SQL statement$'`,
    to: `IF bronze.erasure_stack_ok(stack)`,
  },
  {
    signature: 'gold.overlays_append_only()',
    from: `IF frames[array_length(frames, 1)] ~ '^PL/pgSQL function bronze\\.destroy_event\\(uuid,uuid,uuid,text,text\\) line [0-9]+ at SQL statement$'`,
    to: `IF bronze.erasure_stack_ok(stack)`,
  },
];

/** The erasure for the runtime role: the executor is the secret's principal, with admin on the namespace (one statement, so the guards see this frame outermost). */
const DESTROY_EVENT_AS = `
CREATE FUNCTION bronze.destroy_event_as(p_secret text, p_event_id uuid, p_approval_id uuid, p_namespace text)
RETURNS TABLE (retired_facts integer, kept_facts integer, destroyed_at timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t access.tokens;
BEGIN
  t := access.live_token(p_secret);
  IF t.id IS NULL OR NOT access.token_can(t.id, 'admin', p_namespace) THEN
    RAISE EXCEPTION 'destroy_event_as: the executing token lacks admin on %', p_namespace USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN QUERY SELECT d.retired_facts, d.kept_facts, d.destroyed_at FROM bronze.destroy_event(p_event_id, p_approval_id, t.principal_id, ${NAME}, p_namespace) d;
END $$`;
