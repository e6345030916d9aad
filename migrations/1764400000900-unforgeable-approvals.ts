import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Approvals the runtime role cannot forge (issue 24, docs/approvals.md "Who can write a decision").
 *
 * Before this, the runtime role held INSERT and UPDATE on every `access` table, so anything holding
 * its connection could mark a request APPROVED by another principal, or mint itself an approver's
 * token. Now the runtime role only reads `access.tokens`, `grants`, `principals` and
 * `approval_requests` (grants in `infra/postgres/runtime-role.ts`); every write to them goes
 * through a SECURITY DEFINER function owned by the migration owner that proves who is acting by
 * the caller's token secret, which the database never stores (only its SHA-256): the runtime role
 * can read every hash and still cannot name a secret that hashes to one.
 *
 * - `access.create_token(creator_secret, …)`: the creator's live token must hold `admin` (and
 *   `approve` to hand out `approve`) on a pattern covering each new grant; another principal needs
 *   `admin` on `*`. The same rules as `TokenService.createToken`.
 * - `access.revoke_token(id)`: sets `revoked_at` once and NOTIFYs `medallion_token_revoked` (open
 *   subscriptions of that token close at once). Revoking only ever takes rights away.
 * - `access.request_approval(secret, …)`: the requester is the secret's principal, which must hold
 *   the action's capability; the stored `params_hash` must be the canonical hash of `params`.
 * - `access.decide_approval(id, secret, decision, reason)`: the decider is the secret's principal,
 *   which must hold `approve` on the request's namespace and differ from the requester.
 * - `access.expire_approval(id)`, and `access.consume_approval` now SECURITY DEFINER (it only
 *   moves APPROVED to EXECUTED).
 */
export class UnforgeableApprovals1764400000900 implements MigrationInterface {
  name = 'UnforgeableApprovals1764400000900';

  async up(q: QueryRunner): Promise<void> {
    const fn = (sig: string): string[] => [`REVOKE ALL ON FUNCTION ${sig} FROM PUBLIC`];

    // The live token whose secret this is (NULL when none): revoked and expired tokens prove nothing.
    await q.query(`
      CREATE FUNCTION access.live_token(p_secret text) RETURNS access.tokens
      LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
        SELECT t.* FROM access.tokens t
         WHERE p_secret IS NOT NULL AND t.token_hash = sha256(convert_to(p_secret, 'UTF8'))
           AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())
      $$`);
    // common/namespace.ts patternMatches / patternCovers, and capability.ts (admin implies all but approve).
    await q.query(`
      CREATE FUNCTION access.pattern_matches(p_pattern text, p_namespace text) RETURNS boolean
      LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
        SELECT CASE WHEN right(p_pattern, 1) = '*' THEN starts_with(p_namespace, left(p_pattern, -1)) ELSE p_pattern = p_namespace END
      $$`);
    await q.query(`
      CREATE FUNCTION access.pattern_covers(p_outer text, p_inner text) RETURNS boolean
      LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
        SELECT CASE WHEN right(p_outer, 1) = '*' THEN starts_with(p_inner, left(p_outer, -1))
                    ELSE right(p_inner, 1) <> '*' AND p_outer = p_inner END
      $$`);
    await q.query(`
      CREATE FUNCTION access.token_can(p_token uuid, p_capability text, p_namespace text) RETURNS boolean
      LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
        SELECT EXISTS (SELECT 1 FROM access.grants g
                        WHERE g.token_id = p_token AND access.pattern_matches(g.namespace_pattern, p_namespace)
                          AND (p_capability = ANY (g.capabilities) OR (p_capability <> 'approve' AND 'admin' = ANY (g.capabilities))))
      $$`);
    // RFC 8785 of a flat object of strings (every action's params are): keys sorted, no spaces.
    await q.query(`
      CREATE FUNCTION access.params_hash(p_params jsonb) RETURNS text
      LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
        SELECT encode(sha256(convert_to('{' || COALESCE(string_agg(to_json(e.key)::text || ':' || to_json(e.value #>> '{}')::text, ',' ORDER BY e.key COLLATE "C"), '') || '}', 'UTF8')), 'hex')
          FROM jsonb_each(p_params) e
      $$`);
    const name = `CASE WHEN length(t.name) > 200 THEN left(t.name, 199) || '…' ELSE t.name END`;

    await q.query(`
      CREATE FUNCTION access.create_token(p_creator_secret text, p_principal_id uuid, p_principal_name text, p_name text,
                                          p_hash bytea, p_prefix text, p_grants jsonb, p_expires_at timestamptz)
      RETURNS uuid LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
      DECLARE
        c access.tokens;
        g jsonb;
        cap text;
        pid uuid := p_principal_id;
        tid uuid;
      BEGIN
        c := access.live_token(p_creator_secret);
        IF c.id IS NULL THEN
          RAISE EXCEPTION 'create_token: the creating token is not a live token' USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF jsonb_typeof(p_grants) <> 'array' OR jsonb_array_length(p_grants) = 0 THEN
          RAISE EXCEPTION 'create_token: a token needs at least one grant' USING ERRCODE = 'invalid_parameter_value';
        END IF;
        FOR g IN SELECT e FROM jsonb_array_elements(p_grants) e LOOP
          FOREACH cap IN ARRAY (CASE WHEN (g -> 'caps') ? 'approve' THEN ARRAY['admin', 'approve'] ELSE ARRAY['admin'] END) LOOP
            IF NOT EXISTS (SELECT 1 FROM access.grants h WHERE h.token_id = c.id AND cap = ANY (h.capabilities)
                                                          AND access.pattern_covers(h.namespace_pattern, g ->> 'pattern')) THEN
              RAISE EXCEPTION 'create_token: a grant on % needs % on a pattern covering it', g ->> 'pattern', cap USING ERRCODE = 'insufficient_privilege';
            END IF;
          END LOOP;
        END LOOP;
        IF pid IS NULL THEN
          INSERT INTO access.principals (name) VALUES (p_principal_name) RETURNING id INTO pid;
        ELSIF pid <> c.principal_id AND NOT access.token_can(c.id, 'admin', '*') THEN
          RAISE EXCEPTION 'create_token: issuing a token to another principal needs admin on *' USING ERRCODE = 'insufficient_privilege';
        END IF;
        INSERT INTO access.tokens (principal_id, name, token_hash, token_prefix, is_bootstrap, created_by, expires_at)
        VALUES (pid, p_name, p_hash, p_prefix, false, c.id, p_expires_at) RETURNING id INTO tid;
        INSERT INTO access.grants (token_id, namespace_pattern, capabilities)
        SELECT tid, e ->> 'pattern', ARRAY(SELECT jsonb_array_elements_text(e -> 'caps')) FROM jsonb_array_elements(p_grants) e;
        RETURN tid;
      END $$`);

    await q.query(`
      CREATE FUNCTION access.revoke_token(p_id uuid) RETURNS boolean
      LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
      BEGIN
        UPDATE access.tokens SET revoked_at = now() WHERE id = p_id AND revoked_at IS NULL;
        IF NOT FOUND THEN RETURN false; END IF;
        PERFORM pg_notify('medallion_token_revoked', p_id::text);
        RETURN true;
      END $$`);

    await q.query(`
      CREATE FUNCTION access.request_approval(p_secret text, p_namespace text, p_action text, p_params jsonb, p_params_hash text,
                                              p_reason text, p_ttl_seconds double precision)
      RETURNS uuid LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
      DECLARE
        t access.tokens;
        rid uuid;
      BEGIN
        t := access.live_token(p_secret);
        IF t.id IS NULL OR NOT access.token_can(t.id, CASE p_action WHEN 'DESTROY_EVENT' THEN 'admin' ELSE 'overlay' END, p_namespace) THEN
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
      END $$`);

    // NULL when the request is not PENDING or past expiry (the service reads it again to say which).
    await q.query(`
      CREATE FUNCTION access.decide_approval(p_id uuid, p_secret text, p_decision text, p_reason text)
      RETURNS uuid LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
      DECLARE
        t access.tokens;
        r access.approval_requests;
        did uuid;
      BEGIN
        IF p_decision NOT IN ('APPROVED', 'REJECTED') THEN
          RAISE EXCEPTION 'decide_approval: the decision is APPROVED or REJECTED' USING ERRCODE = 'invalid_parameter_value';
        END IF;
        t := access.live_token(p_secret);
        IF t.id IS NULL THEN
          RAISE EXCEPTION 'decide_approval: the deciding token is not a live token' USING ERRCODE = 'insufficient_privilege';
        END IF;
        SELECT * INTO r FROM access.approval_requests WHERE id = p_id;
        IF NOT FOUND THEN RETURN NULL; END IF;
        IF NOT access.token_can(t.id, 'approve', r.namespace) THEN
          RAISE EXCEPTION 'decide_approval: the deciding token lacks approve on %', r.namespace USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF r.requested_by = t.principal_id THEN
          RAISE EXCEPTION 'decide_approval: the requester cannot decide its own request' USING ERRCODE = 'insufficient_privilege';
        END IF;
        UPDATE access.approval_requests
           SET status = p_decision, decided_by = t.principal_id, decided_by_name = ${name}, decided_at = now(), decision_reason = p_reason
         WHERE id = p_id AND status = 'PENDING' AND expires_at > now() AND requested_by <> t.principal_id
        RETURNING id INTO did;
        IF did IS NOT NULL THEN
          INSERT INTO access.approval_log (request_id, namespace, step, principal_id, principal_name, detail)
          VALUES (did, r.namespace, p_decision, t.principal_id::text, ${name}, p_reason);
        END IF;
        RETURN did;
      END $$`);

    await q.query(`
      CREATE FUNCTION access.expire_approval(p_id uuid) RETURNS void
      LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        UPDATE access.approval_requests SET status = 'EXPIRED' WHERE id = p_id AND status = 'PENDING' AND expires_at <= now()
      $$`);
    await q.query(`ALTER FUNCTION access.consume_approval(uuid, text, text, text, text) SECURITY DEFINER`);

    for (const sig of [
      'access.live_token(text)',
      'access.pattern_matches(text, text)',
      'access.pattern_covers(text, text)',
      'access.token_can(uuid, text, text)',
      'access.params_hash(jsonb)',
      'access.create_token(text, uuid, text, text, bytea, text, jsonb, timestamptz)',
      'access.revoke_token(uuid)',
      'access.request_approval(text, text, text, jsonb, text, text, double precision)',
      'access.decide_approval(uuid, text, text, text)',
      'access.expire_approval(uuid)',
    ]) {
      for (const s of fn(sig)) await q.query(s);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER FUNCTION access.consume_approval(uuid, text, text, text, text) SECURITY INVOKER`);
    for (const sig of [
      'access.expire_approval(uuid)',
      'access.decide_approval(uuid, text, text, text)',
      'access.request_approval(text, text, text, jsonb, text, text, double precision)',
      'access.revoke_token(uuid)',
      'access.create_token(text, uuid, text, text, bytea, text, jsonb, timestamptz)',
      'access.params_hash(jsonb)',
      'access.token_can(uuid, text, text)',
      'access.pattern_covers(text, text)',
      'access.pattern_matches(text, text)',
      'access.live_token(text)',
    ]) {
      await q.query(`DROP FUNCTION ${sig}`);
    }
  }
}
