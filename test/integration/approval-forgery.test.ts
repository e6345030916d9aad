import { createHash, randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { ConfigError, loadConfig, OWNER_RUNTIME_REFUSED } from '../../src/common/config';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

const REQUEST = `mutation($input: ApprovalRequestInput!) { requestApproval(input: $input) { id status } }`;
const DESTROY = `mutation($e: ID!, $a: ID!) { destroyEvent(eventId: $e, approvalId: $a) { id destroyedAt } }`;
const INGEST = `mutation($input: EventInput!) { ingestEvent(input: $input) { event { id } } }`;
const STATUS = `SELECT status, decided_by FROM access.approval_requests WHERE id = $1`;

/** The SQLSTATE of a statement that must fail ('ok' when it succeeded). */
async function sqlState(c: Client, text: string, params: unknown[] = []): Promise<string> {
  try {
    await c.query(text, params);
    return 'ok';
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}

/**
 * Issue 24 item 3: whoever holds the runtime role's connection (the service's own pool) cannot
 * record a decision, mint an approver or forge a requester; only a live approver's token secret,
 * passed to the owner's `access.decide_approval`, records one.
 */
describe('approvals cannot be forged with the runtime role', () => {
  let t: TestApp;
  let runtime: Client;
  let owner: Client;
  const ns = uniqueNamespace('forge');
  let admin: string;
  let reader: string;
  let approver: string;
  let event: string;
  let approvalId: string;
  let adminPrincipal: string;
  let approverPrincipal: string;

  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing' });
    admin = (await createToken(t, [{ namespacePattern: ns, capabilities: ['ADMIN'] }], 'requester')).token;
    reader = (await createToken(t, [{ namespacePattern: ns, capabilities: ['READ'] }], 'reader')).token;
    approver = (await createToken(t, [{ namespacePattern: ns, capabilities: ['APPROVE'] }], 'approver')).token;
    runtime = new Client({ connectionString: t.runtimeDatabaseUrl });
    owner = new Client({ connectionString: t.databaseUrl });
    await runtime.connect();
    await owner.connect();
    event = (await gqlOk<{ ingestEvent: { event: { id: string } } }>(t.url, t.adminToken, INGEST, { input: anEvent(ns).saying('erase me: 4242').build() }))
      .ingestEvent.event.id;
    approvalId = (
      await gqlOk<{ requestApproval: { id: string } }>(t.url, admin, REQUEST, {
        input: { namespace: ns, action: 'DESTROY_EVENT', params: { eventId: event }, reason: 'forgery test' },
      })
    ).requestApproval.id;
    const principalOf = async (secret: string): Promise<string> =>
      (await owner.query(`SELECT principal_id::text AS p FROM access.tokens WHERE token_hash = $1`, [createHash('sha256').update(secret).digest()])).rows[0].p;
    adminPrincipal = await principalOf(admin);
    approverPrincipal = await principalOf(approver);
  });
  afterAll(async () => {
    await runtime?.end();
    await owner?.end();
    await t?.stop();
  });

  it('refuses every direct route to a decision, a token or a request, and destroyEvent stays refused', async () => {
    const secret = `mm_${randomBytes(32).toString('base64url')}`;
    const hash = createHash('sha256').update(secret).digest();
    const eventHash = createHash('sha256').update(`{"eventId":"${event}"}`).digest('hex');
    const attempts: Array<[string, string, unknown[]]> = [
      // the decision itself
      [
        'UPDATE the request to APPROVED by the approver',
        `UPDATE access.approval_requests SET status = 'APPROVED', decided_by = $2, decided_by_name = 'approver', decided_at = now() WHERE id = $1`,
        [approvalId, approverPrincipal],
      ],
      ['UPDATE only the status column', `UPDATE access.approval_requests SET status = 'APPROVED' WHERE id = $1`, [approvalId]],
      [
        'INSERT an already APPROVED request',
        `INSERT INTO access.approval_requests (namespace, action, params, params_hash, reason, requested_by, requested_by_name, expires_at, status, decided_by, decided_by_name, decided_at)
         VALUES ($1, 'DESTROY_EVENT', jsonb_build_object('eventId', $2::text), $3, 'forged', $4, 'requester', now() + interval '1 hour', 'APPROVED', $5, 'approver', now())`,
        [ns, event, eventHash, adminPrincipal, approverPrincipal],
      ],
      [
        'INSERT a PENDING request in another principal\u2019s name',
        `INSERT INTO access.approval_requests (namespace, action, params, params_hash, reason, requested_by, requested_by_name, expires_at)
         VALUES ($1, 'DESTROY_EVENT', jsonb_build_object('eventId', $2::text), $3, 'forged', $4, 'requester', now() + interval '1 hour')`,
        [ns, event, eventHash, approverPrincipal],
      ],
      // minting an approver: a token, a grant, a principal, or taking over a token's hash
      [
        'INSERT a token with a known secret',
        `INSERT INTO access.tokens (principal_id, name, token_hash, token_prefix) VALUES ($1, 'forged', $2, 'mm_xxx')`,
        [approverPrincipal, hash],
      ],
      [
        'UPDATE the approver\u2019s token hash to a known secret',
        `UPDATE access.tokens SET token_hash = $2 WHERE principal_id = $1`,
        [approverPrincipal, hash],
      ],
      [
        'INSERT an approve grant for the reader',
        `INSERT INTO access.grants (token_id, namespace_pattern, capabilities) SELECT id, '*', ARRAY['approve'] FROM access.tokens WHERE name = 'reader'`,
        [],
      ],
      ['UPDATE a grant to approve', `UPDATE access.grants SET capabilities = ARRAY['approve','admin'], namespace_pattern = '*'`, []],
      ['INSERT a principal', `INSERT INTO access.principals (name) VALUES ('forged')`, []],
      ['un-revoke a token', `UPDATE access.tokens SET revoked_at = NULL`, []],
      // the owner's functions, called without an approver's secret
      ['decide_approval with the requester\u2019s own secret', `SELECT access.decide_approval($1, $2, 'APPROVED', 'self')`, [approvalId, admin]],
      ['decide_approval with a non-approver\u2019s secret', `SELECT access.decide_approval($1, $2, 'APPROVED', 'reader')`, [approvalId, reader]],
      ['decide_approval with an unknown secret', `SELECT access.decide_approval($1, $2, 'APPROVED', 'made up')`, [approvalId, secret]],
      [
        'decide_approval with the approver\u2019s stored hash as the secret',
        `SELECT access.decide_approval($1, encode(t.token_hash, 'hex'), 'APPROVED', 'hash') FROM access.tokens t WHERE t.principal_id = $2`,
        [approvalId, approverPrincipal],
      ],
      [
        'create_token with a reader\u2019s secret',
        `SELECT access.create_token($1, NULL, 'x', 'x', $2, 'mm_x', '[{"pattern":"*","caps":["approve"]}]'::jsonb, NULL)`,
        [reader, hash],
      ],
      [
        'create_token with the requester (admin without approve) handing out approve',
        `SELECT access.create_token($1, NULL, 'x', 'x', $2, 'mm_x', jsonb_build_array(jsonb_build_object('pattern', $3::text, 'caps', jsonb_build_array('approve'))), NULL)`,
        [admin, hash, ns],
      ],
      [
        'request_approval in a reader\u2019s name',
        `SELECT access.request_approval($1, $2, 'DESTROY_EVENT', jsonb_build_object('eventId', $3::text), $4, 'r', 60)`,
        [reader, ns, event, eventHash],
      ],
      ['the helpers are not the runtime role\u2019s to call', `SELECT access.live_token($1)`, [approver]],
      [
        'nor is consume_approval a way to approve',
        `SELECT access.consume_approval($1, $2, 'DESTROY_EVENT', $3, $4)`,
        [approvalId, ns, eventHash, adminPrincipal],
      ],
    ];
    const outcomes: Array<[string, string]> = [];
    for (const [what, text, params] of attempts) outcomes.push([what, await sqlState(runtime, text, params)]);
    // Every route is refused (42501); consume_approval too since issue 43 (the gate is execute_approval, by secret).
    expect(outcomes).toEqual(outcomes.map(([what]) => [what, '42501']));

    const row = (await owner.query(STATUS, [approvalId])).rows[0];
    expect(row).toEqual({ status: 'PENDING', decided_by: null });
    expect((await owner.query(`SELECT count(*)::int AS n FROM access.tokens WHERE token_hash = $1`, [hash])).rows[0].n).toBe(0);
    const destroy = await gql(t.url, admin, DESTROY, { e: event, a: approvalId });
    expect(destroy.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(destroy.errors?.[0]?.message).toMatch(/not approved|PENDING/i);
    expect((await owner.query(`SELECT content FROM bronze.events WHERE id = $1`, [event])).rows[0].content).toBe('erase me: 4242');
  });

  it('writes Bronze, the approval log and revocations only through the functions that prove who acts (issue 43)', async () => {
    const [bootstrap] = (await owner.query(`SELECT id::text AS id FROM access.tokens WHERE is_bootstrap ORDER BY created_at LIMIT 1`)).rows as Array<{
      id: string;
    }>;
    const eventHash = createHash('sha256').update(`{"eventId":"${event}"}`).digest('hex');
    const attempts: Array<[string, string, unknown[]]> = [
      [
        'INSERT a back-dated event',
        `INSERT INTO bronze.events (id, namespace, source, source_event_id, kind, content, checksum, occurred_at, ingested_at)
         VALUES (gen_random_uuid(), $1, 'forged', 'f-1', 'message', 'I approved it myself', repeat('0', 64), '2026-01-01T00:00:00Z', '2020-01-01T00:00:00Z')`,
        [ns],
      ],
      [
        'INSERT an idempotency key',
        `INSERT INTO bronze.event_keys (namespace, source, source_event_id, event_id, occurred_at, checksum)
         VALUES ($1, 'forged', 'f-1', gen_random_uuid(), '2026-01-01T00:00:00Z', repeat('0', 64))`,
        [ns],
      ],
      ...(['REQUESTED', 'APPROVED', 'EXECUTED'] as const).map((step): [string, string, unknown[]] => [
        `INSERT a ${step} line into the approval log`,
        `INSERT INTO access.approval_log (request_id, namespace, step, principal_id, principal_name, detail) VALUES ($1, $2, $3, $4, 'approver', 'forged')`,
        [approvalId, ns, step, approverPrincipal],
      ]),
      ['revoke the bootstrap token without a secret', `SELECT access.revoke_token($1, NULL)`, [bootstrap?.id]],
      ['revoke the bootstrap token with a reader\u2019s secret', `SELECT access.revoke_token($1, $2)`, [bootstrap?.id, reader]],
      ['revoke the bootstrap token with an admin\u2019s secret that covers only one namespace', `SELECT access.revoke_token($1, $2)`, [bootstrap?.id, admin]],
      ['execute an approval with a made-up secret', `SELECT access.execute_approval($1, 'mm_made_up', $2, 'DESTROY_EVENT', $3)`, [approvalId, ns, eventHash]],
      ['erase naming any executor', `SELECT * FROM bronze.destroy_event($1, $2, $3, 'approver', $4)`, [event, approvalId, approverPrincipal, ns]],
      ['erase with a reader\u2019s secret', `SELECT * FROM bronze.destroy_event_as($1, $2, $3, $4)`, [reader, event, approvalId, ns]],
    ];
    const outcomes: Array<[string, string]> = [];
    for (const [what, text, params] of attempts) outcomes.push([what, await sqlState(runtime, text, params)]);
    expect(outcomes).toEqual(outcomes.map(([what]) => [what, '42501']));
    // The old one-argument revocation is gone.
    expect(await sqlState(runtime, `SELECT access.revoke_token($1::uuid)`, [bootstrap?.id])).toBe('42883');
    // A refusal line needs a live secret; with a made-up one nothing is written.
    const lines = async () => (await owner.query(`SELECT count(*)::int AS n FROM access.approval_log WHERE request_id = $1`, [approvalId])).rows[0].n as number;
    const before = await lines();
    expect((await runtime.query(`SELECT access.log_refusal($1, 'mm_made_up', 'x') AS ok`, [approvalId])).rows[0].ok).toBe(false);
    expect(await lines()).toBe(before);
    expect((await owner.query(`SELECT revoked_at FROM access.tokens WHERE id = $1`, [bootstrap?.id])).rows[0].revoked_at).toBeNull();
    expect((await owner.query(`SELECT count(*)::int AS n FROM bronze.event_keys WHERE source = 'forged'`)).rows[0].n).toBe(0);

    // What the runtime role can do: ingest through the function, which draws the id and the ingest time itself.
    const before1 = Date.now();
    const created = await runtime.query(
      `SELECT ord, id::text AS id, ingested_at FROM bronze.ingest_events(ARRAY[$1], ARRAY['raw'], ARRAY['r-1'], ARRAY[NULL], ARRAY['message'], ARRAY[NULL],
         ARRAY[NULL], ARRAY[NULL]::int[], ARRAY['user'], ARRAY[NULL], ARRAY['through the function'], ARRAY[NULL], ARRAY[repeat('1', 64)],
         ARRAY[now()], ARRAY[NULL], NULL)`,
      [ns],
    );
    expect(created.rows).toHaveLength(1);
    expect(Math.abs(new Date(created.rows[0].ingested_at).getTime() - before1)).toBeLessThan(60_000);
    const row = (
      await owner.query(
        `SELECT e.checksum, k.checksum AS key_checksum, (SELECT count(*)::int FROM ops.derivation_queue q WHERE q.event_id = e.id) AS queued
                                      FROM bronze.events e JOIN bronze.event_keys k ON k.event_id = e.id WHERE e.id = $1`,
        [created.rows[0].id],
      )
    ).rows[0];
    expect(row).toEqual({ checksum: '1'.repeat(64), key_checksum: '1'.repeat(64), queued: 1 });
  });

  it('records a decision through the function with a live approver\u2019s secret, and then destroyEvent works', async () => {
    // The route the service takes: the same function, the approver's real secret. A revoked approver cannot.
    const spare = await createToken(t, [{ namespacePattern: ns, capabilities: ['APPROVE'] }], 'revoked-approver');
    await gqlOk(t.url, t.adminToken, `mutation($id: ID!) { revokeToken(id: $id) }`, { id: spare.id });
    expect(await sqlState(runtime, `SELECT access.decide_approval($1, $2, 'APPROVED', 'revoked')`, [approvalId, spare.token])).toBe('42501');
    const decided = await runtime.query(`SELECT access.decide_approval($1, $2, 'APPROVED', 'ok')::text AS id`, [approvalId, approver]);
    expect(decided.rows[0].id).toBe(approvalId);
    expect((await owner.query(STATUS, [approvalId])).rows[0]).toEqual({ status: 'APPROVED', decided_by: approverPrincipal });
    const destroyed = await gqlOk<{ destroyEvent: { destroyedAt: string | null } }>(t.url, admin, DESTROY, { e: event, a: approvalId });
    expect(destroyed.destroyEvent.destroyedAt).not.toBeNull();
  });
});

describe('secure by default on one\u2019s own server', () => {
  it('refuses DATABASE_URL without DATABASE_RUNTIME_URL, saying how to create the role, unless ALLOW_OWNER_RUNTIME=true', () => {
    const url = 'postgres://owner:pw@db.example:5432/medallion';
    let error: unknown;
    try {
      loadConfig({ DATABASE_URL: url });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([OWNER_RUNTIME_REFUSED]);
    expect((error as Error).message).toMatch(/CREATE ROLE medallion_runtime LOGIN PASSWORD/);
    expect((error as Error).message).toMatch(/docs\/bronze\.md/);
    expect((error as Error).message).toMatch(/ALLOW_OWNER_RUNTIME=true/);
    expect(loadConfig({ DATABASE_URL: url, ALLOW_OWNER_RUNTIME: 'true' }).allowOwnerRuntime).toBe(true);
    expect(loadConfig({ DATABASE_URL: url, DATABASE_RUNTIME_URL: 'postgres://rt:pw@db.example:5432/medallion' }).databaseRuntimeUrl).toMatch(/^postgres:/);
    // the embedded default (no DATABASE_URL) creates its runtime role itself
    expect(loadConfig({}).allowOwnerRuntime).toBe(false);
  });
});
