import { Client } from 'pg';
import { ApprovalException } from '../../src/access/approval.exception';
import { Sql } from '../../src/platform/postgres/sql';
import { connectPostgres } from '../../src/platform/postgres/data-source';
import { grantRuntimePrivileges } from '../../src/platform/postgres/runtime-role';
import { ApprovalsBySecretAndLineage1764400001410 } from '../../migrations/1764400001410-approvals-by-secret-and-lineage';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

const REQUEST = `mutation($input: ApprovalRequestInput!) { requestApproval(input: $input) { id status params paramsHash requestedBy createdAt expiresAt } }`;
const APPROVE = `mutation($id: ID!, $reason: String) { approve(id: $id, reason: $reason) { id status decidedBy } }`;
const REJECT = `mutation($id: ID!, $reason: String) { reject(id: $id, reason: $reason) { id status decidedBy } }`;
const DESTROY = `mutation($e: ID!, $a: ID!) { destroyEvent(eventId: $e, approvalId: $a) { id content rawPayload destroyedAt checksum } }`;
const LIST = `query($ns: String!, $status: ApprovalStatus) { approvals(namespace: $ns, status: $status) { id namespace action status history { step principalName detail } } }`;
const INGEST = `mutation($input: EventInput!) { ingestEvent(input: $input) { event { id } } }`;

type Req = { id: string; status: string; params: Record<string, unknown>; paramsHash: string; requestedBy: string; createdAt: string; expiresAt: string };
type Listed = { id: string; namespace: string; action: string; status: string; history: Array<{ step: string; principalName: string; detail: string | null }> };

const TTL = 600;

describe('approvals: a second principal with "approve", single use, every step logged', () => {
  let t: TestApp;
  let owner: Client;
  const nsA = uniqueNamespace('appr-a');
  const nsB = uniqueNamespace('appr-b');
  const tok: Record<string, string> = {};
  let eventA: string;
  let eventA2: string;
  let eventB: string;

  beforeAll(async () => {
    t = await startTestApp({ APPROVAL_TTL: String(TTL), OFFLINE_EMBEDDER: 'hashing' });
    const grants: Record<string, Array<{ namespacePattern: string; capabilities: string[] }>> = {
      requester: [{ namespacePattern: nsA, capabilities: ['ADMIN'] }],
      secondAdmin: [{ namespacePattern: nsA, capabilities: ['ADMIN'] }],
      approver: [{ namespacePattern: nsA, capabilities: ['APPROVE', 'READ'] }],
      both: [{ namespacePattern: nsA, capabilities: ['ADMIN', 'APPROVE'] }],
      overlay: [{ namespacePattern: nsA, capabilities: ['OVERLAY'] }],
      reader: [{ namespacePattern: nsA, capabilities: ['READ', 'LIST'] }],
      adminB: [{ namespacePattern: nsB, capabilities: ['ADMIN'] }],
      approverB: [{ namespacePattern: nsB, capabilities: ['APPROVE'] }],
    };
    for (const [name, g] of Object.entries(grants)) tok[name] = (await createToken(t, g, name)).token;
    owner = new Client({ connectionString: t.databaseUrl });
    await owner.connect();
    const ingest = async (ns: string, text: string) =>
      (await gqlOk<{ ingestEvent: { event: { id: string } } }>(t.url, t.adminToken, INGEST, { input: anEvent(ns).saying(text).build() })).ingestEvent.event.id;
    eventA = await ingest(nsA, 'a note in A');
    eventA2 = await ingest(nsA, 'another note in A');
    eventB = await ingest(nsB, 'a note in B');
  });
  afterAll(async () => {
    await owner?.end();
    await t?.stop();
  });

  const request = async (token: string, ns: string, action: string, params: unknown, reason = 'legal erasure request #1') =>
    gql<{ requestApproval: Req }>(t.url, token, REQUEST, { input: { namespace: ns, action, params, reason } });
  const requestOk = async (token: string, ns: string, action: string, params: unknown) => {
    const r = await request(token, ns, action, params);
    if (r.errors) throw new Error(JSON.stringify(r.errors));
    return (r.data as { requestApproval: Req }).requestApproval;
  };
  const code = (r: { errors?: Array<{ extensions?: { code?: string } }> }) => r.errors?.[0]?.extensions?.code;
  const history = async (ns: string, id: string) =>
    (await gqlOk<{ approvals: Listed[] }>(t.url, tok.approver, LIST, { ns })).approvals.find((a) => a.id === id)?.history.map((h) => h.step);

  it("needs the action's capability to request, and validates params per action (BAD_USER_INPUT)", async () => {
    expect(code(await request(tok.overlay as string, nsA, 'DESTROY_EVENT', { eventId: eventA }))).toBe('FORBIDDEN');
    expect(code(await request(tok.approver as string, nsA, 'DESTROY_EVENT', { eventId: eventA }))).toBe('FORBIDDEN');
    expect(code(await request(tok.requester as string, nsA, 'DESTROY_EVENT', { eventId: 'x' }))).toBe('BAD_USER_INPUT');
    expect(code(await request(tok.requester as string, nsA, 'DESTROY_EVENT', { eventId: eventA, more: 1 }))).toBe('BAD_USER_INPUT');
    expect(code(await request(tok.requester as string, nsA, 'DESTROY_EVENT', { eventId: '0b5c7a4e-1f6d-4c1a-9a51-2f1e0c9d8b7a' }))).toBe('BAD_USER_INPUT');
    // an event of another namespace cannot be named
    const cross = await request(tok.requester as string, nsA, 'DESTROY_EVENT', { eventId: eventB });
    expect(code(cross)).toBe('BAD_USER_INPUT');
    expect(cross.errors?.[0]?.message).toContain(`no event ${eventB} in namespace "${nsA}"`);
    expect(code(await request(tok.requester as string, nsA, 'DESTROY_EVENT', { eventId: eventA }, '  '))).toBe('BAD_USER_INPUT');
    expect(code(await request(tok.overlay as string, nsA, 'OVERWRITE_OVERLAY', { overlayId: eventA, operation: 'REVISE', kind: 'NOPE' }))).toBe(
      'BAD_USER_INPUT',
    );

    const ok = await requestOk(tok.overlay as string, nsA, 'OVERWRITE_OVERLAY', {
      overlayId: eventA.toUpperCase(),
      operation: 'REVISE',
      body: 'new',
      kind: 'EDIT',
    });
    expect(ok).toMatchObject({ status: 'PENDING', params: { overlayId: eventA, body: 'new', kind: 'EDIT' }, requestedBy: 'overlay' });
    expect(ok.paramsHash).toMatch(/^[0-9a-f]{64}$/);
    expect((Date.parse(ok.expiresAt) - Date.parse(ok.createdAt)) / 1000).toBeCloseTo(TTL, 0);
  });

  it('refuses self-approval (FORBIDDEN, also for a second token of the same principal), a principal without "approve" (admin does not imply it), and approvers of another namespace', async () => {
    const r = await requestOk(tok.both as string, nsA, 'DESTROY_EVENT', { eventId: eventA });
    const self = await gql(t.url, tok.both, APPROVE, { id: r.id });
    expect(code(self)).toBe('FORBIDDEN');
    expect(self.errors?.[0]?.message).toMatch(/you requested .* yourself: a different principal/);
    // The database refuses it too, whatever the code does.
    const principal = (await owner.query(`SELECT requested_by FROM access.approval_requests WHERE id = $1`, [r.id])).rows[0].requested_by;
    await expect(
      owner.query(`UPDATE access.approval_requests SET status = 'APPROVED', decided_by = $2, decided_at = now() WHERE id = $1`, [r.id, principal]),
    ).rejects.toMatchObject({ code: '23514' });

    const noApprove = await gql(t.url, tok.secondAdmin, APPROVE, { id: r.id });
    expect(code(noApprove)).toBe('FORBIDDEN');
    expect(noApprove.errors?.[0]?.message).toContain('lacks the "approve" capability');
    const otherNs = await gql(t.url, tok.approverB, APPROVE, { id: r.id });
    expect(code(otherNs)).toBe('NOT_FOUND');
    expect(code(await gql(t.url, tok.approverB, REJECT, { id: r.id }))).toBe('NOT_FOUND');
    expect(code(await gql(t.url, tok.adminB, DESTROY, { e: eventA, a: r.id }))).toBe('NOT_FOUND');

    const rejected = (await gqlOk<{ reject: { status: string; decidedBy: string } }>(t.url, tok.approver, REJECT, { id: r.id, reason: 'not needed' })).reject;
    expect(rejected).toEqual({ id: r.id, status: 'REJECTED', decidedBy: 'approver' });
    expect(code(await gql(t.url, tok.approver, APPROVE, { id: r.id }))).toBe('FORBIDDEN');
    expect(code(await gql(t.url, tok.both, DESTROY, { e: eventA, a: r.id }))).toBe('FORBIDDEN');
    expect(await history(nsA, r.id)).toEqual(['REQUESTED', 'REFUSED', 'REFUSED', 'REFUSED', 'REFUSED', 'REFUSED', 'REJECTED', 'REFUSED', 'REFUSED']);
  });

  it('refuses a decision or an execution after expiry, and reports EXPIRED', async () => {
    const r = await requestOk(tok.requester as string, nsA, 'DESTROY_EVENT', { eventId: eventA });
    const approved = await requestOk(tok.requester as string, nsA, 'DESTROY_EVENT', { eventId: eventA2 });
    await gqlOk(t.url, tok.approver, APPROVE, { id: approved.id });
    // Time passes: both requests' expiry moves into the past (the owner may edit requests; the log stays append-only).
    await owner.query(
      `UPDATE access.approval_requests SET created_at = now() - interval '2 hours', expires_at = now() - interval '1 second' WHERE id = ANY($1::uuid[])`,
      [[r.id, approved.id]],
    );
    const late = await gql(t.url, tok.approver, APPROVE, { id: r.id });
    expect(code(late)).toBe('FORBIDDEN');
    expect(late.errors?.[0]?.message).toContain('expired');
    const lateRun = await gql(t.url, tok.requester, DESTROY, { e: eventA2, a: approved.id });
    expect(code(lateRun)).toBe('FORBIDDEN');
    expect(lateRun.errors?.[0]?.message).toContain('expired');
    const expired = (await gqlOk<{ approvals: Listed[] }>(t.url, tok.approver, LIST, { ns: nsA, status: 'EXPIRED' })).approvals.map((a) => a.id);
    expect(expired.sort()).toEqual([r.id, approved.id].sort());
    expect((await owner.query(`SELECT status FROM access.approval_requests WHERE id = $1`, [r.id])).rows[0].status).toBe('EXPIRED');
    expect((await owner.query(`SELECT content FROM bronze.events WHERE id = $1`, [eventA2])).rows[0].content).toBe('another note in A');
    expect(await history(nsA, approved.id)).toEqual(['REQUESTED', 'APPROVED', 'REFUSED']);
  });

  it("the gate: consumes once, in the caller's transaction, and refuses a second use, another hash, action or namespace", async () => {
    const gate = t.app.services.approvalGate;
    const params = { overlayId: eventA, operation: 'REVISE', body: 'replacement', kind: 'EDIT' };
    const r = await requestOk(tok.overlay as string, nsA, 'OVERWRITE_OVERLAY', params);
    const sql = Sql.of(t.app.ds);
    const use = { approvalId: r.id, namespace: nsA, action: 'OVERWRITE_OVERLAY' as const, params, credential: tok.both as string };
    await expect(sql.transaction((tx) => gate.consume(tx, use))).rejects.toMatchObject({ code: 'NOT_APPROVED', kind: 'FORBIDDEN' });
    await gqlOk(t.url, tok.approver, APPROVE, { id: r.id });
    await expect(sql.transaction((tx) => gate.consume(tx, { ...use, params: { ...params, body: 'something else' } }))).rejects.toMatchObject({
      code: 'PARAMS_MISMATCH',
      kind: 'BAD_INPUT',
    });
    await expect(sql.transaction((tx) => gate.consume(tx, { ...use, action: 'DESTROY_EVENT' }))).rejects.toMatchObject({ code: 'PARAMS_MISMATCH' });
    await expect(sql.transaction((tx) => gate.consume(tx, { ...use, namespace: nsB }))).rejects.toMatchObject({
      code: 'APPROVAL_NOT_FOUND',
      kind: 'NOT_FOUND',
    });
    // The operation fails after consuming: the approval's use rolls back with it.
    await expect(
      sql.transaction(async (tx) => {
        await gate.consume(tx, { ...use, params: { kind: 'EDIT', operation: 'REVISE', body: 'replacement', overlayId: eventA } }); // same hash, other key order
        throw new Error('the overwrite itself failed');
      }),
    ).rejects.toThrow('the overwrite itself failed');
    await sql.transaction((tx) => gate.consume(tx, use));
    const second = sql.transaction((tx) => gate.consume(tx, use));
    await expect(second).rejects.toBeInstanceOf(ApprovalException);
    await expect(second).rejects.toMatchObject({ code: 'ALREADY_EXECUTED' });
    expect(await history(nsA, r.id)).toEqual(['REQUESTED', 'REFUSED', 'APPROVED', 'REFUSED', 'REFUSED', 'REFUSED', 'EXECUTED', 'REFUSED']);
  });

  it('the gate on a DESTROY_EVENT approval: consumed once, destroyEvent with it is then refused', async () => {
    const r = await requestOk(tok.requester as string, nsA, 'DESTROY_EVENT', { eventId: eventA });
    await gqlOk(t.url, tok.approver, APPROVE, { id: r.id });
    const sql = Sql.of(t.app.ds);
    await sql.transaction((tx) =>
      t.app.services.approvalGate.consume(tx, {
        approvalId: r.id,
        namespace: nsA,
        action: 'DESTROY_EVENT',
        params: { eventId: eventA },
        credential: tok.requester as string,
      }),
    );
    const again = await gql(t.url, tok.requester, DESTROY, { e: eventA, a: r.id });
    expect(code(again)).toBe('FORBIDDEN');
    expect(again.errors?.[0]?.message).toContain('single-use');
  });

  it('keeps namespaces apart: each namespace lists only its own requests, and an approval cannot be spent on another event', async () => {
    const b = await requestOk(tok.adminB as string, nsB, 'DESTROY_EVENT', { eventId: eventB });
    const a = await requestOk(tok.requester as string, nsA, 'DESTROY_EVENT', { eventId: eventA });
    const listA = (await gqlOk<{ approvals: Listed[] }>(t.url, tok.approver, LIST, { ns: nsA })).approvals;
    expect(listA.every((x) => x.namespace === nsA)).toBe(true);
    expect(listA.map((x) => x.id)).toContain(a.id);
    expect(listA.map((x) => x.id)).not.toContain(b.id);
    expect(code(await gql(t.url, tok.approver, LIST, { ns: nsB }))).toBe('FORBIDDEN');
    expect(code(await gql(t.url, tok.reader, LIST, { ns: nsA }))).toBe('FORBIDDEN');
    // overlay holders see only OVERWRITE_OVERLAY requests
    const seenByOverlay = (await gqlOk<{ approvals: Listed[] }>(t.url, tok.overlay, LIST, { ns: nsA })).approvals;
    expect(seenByOverlay.length).toBeGreaterThan(0);
    expect(seenByOverlay.every((x) => x.action === 'OVERWRITE_OVERLAY')).toBe(true);

    await gqlOk(t.url, tok.approver, APPROVE, { id: a.id });
    // approved for eventA: not usable for eventA2 (hash mismatch)
    const wrongEvent = await gql(t.url, tok.requester, DESTROY, { e: eventA2, a: a.id });
    expect(code(wrongEvent)).toBe('BAD_USER_INPUT');
    expect(wrongEvent.errors?.[0]?.message).toContain('other parameters');
    // B's approval cannot destroy A's event, nor B's admin run A's approval
    await gqlOk(t.url, tok.approverB, APPROVE, { id: b.id });
    expect(code(await gql(t.url, tok.requester, DESTROY, { e: eventA, a: b.id }))).toBe('NOT_FOUND');
    expect(code(await gql(t.url, tok.adminB, DESTROY, { e: eventB, a: a.id }))).toBe('NOT_FOUND');
    // an admin of A without the approval's namespace... the approval still works for its own event
    const done = (
      await gqlOk<{ destroyEvent: { id: string; content: string; destroyedAt: string | null } }>(t.url, tok.requester, DESTROY, { e: eventA, a: a.id })
    ).destroyEvent;
    expect(done.content).toBe('');
    expect(done.destroyedAt).not.toBeNull();
    expect((await owner.query(`SELECT content FROM bronze.events WHERE id = $1`, [eventB])).rows[0].content).toBe('a note in B');
    expect(await history(nsA, a.id)).toEqual(['REQUESTED', 'APPROVED', 'REFUSED', 'REFUSED', 'EXECUTED']);
    await eventually(
      async () => (await owner.query(`SELECT count(*)::int AS n FROM access.approval_log WHERE request_id = $1`, [b.id])).rows[0].n === 3,
      'B log',
    );
    const bSteps = (await owner.query(`SELECT step FROM access.approval_log WHERE request_id = $1 ORDER BY id`, [b.id])).rows.map((r) => r.step);
    expect(bSteps).toEqual(['REQUESTED', 'APPROVED', 'REFUSED']);
  });

  it('two people means two people: the bootstrap admin never approves, and nothing the requester created (or that created it) counts', async () => {
    const nsL = uniqueNamespace('lineage');
    const created = async (by: string, name: string, capabilities: string[]) =>
      (
        await gqlOk<{ createToken: { token: string } }>(t.url, by, `mutation($input: TokenInput!) { createToken(input: $input) { token } }`, {
          input: {
            name,
            grants: [{ namespacePattern: capabilities.includes('RETAIN') ? '*' : nsL, capabilities: capabilities.filter((c) => c !== 'RETAIN') }],
          },
        })
      ).createToken.token;
    const eventL = (await gqlOk<{ ingestEvent: { event: { id: string } } }>(t.url, t.adminToken, INGEST, { input: anEvent(nsL).saying('a note in L').build() }))
      .ingestEvent.event.id;
    const status = async (id: string) => (await owner.query(`SELECT status FROM access.approval_requests WHERE id = $1`, [id])).rows[0].status as string;

    // The attack: the bootstrap admin requests RETAIN_BRONZE, creates an approver on "*" in one call, and that token approves.
    const retain = await requestOk(t.adminToken, '*', 'RETAIN_BRONZE', { before: '2007-01-01' });
    const minted = await created(t.adminToken, 'second-approver', ['RETAIN', 'APPROVE']);
    const attack = await gql(t.url, minted, APPROVE, { id: retain.id });
    expect(code(attack)).toBe('FORBIDDEN');
    expect(attack.errors?.[0]?.message).toMatch(/created by the requester, or by a token the requester created/);
    // Enforced by the database, not only by the service: the runtime role calling the function with that secret is refused.
    const runtime = new Client({ connectionString: t.runtimeDatabaseUrl });
    await runtime.connect();
    try {
      await expect(runtime.query(`SELECT access.decide_approval($1, $2, 'APPROVED', 'raw')`, [retain.id, minted])).rejects.toMatchObject({ code: '42501' });
    } finally {
      await runtime.end();
    }
    expect(await status(retain.id)).toBe('PENDING');

    // The bootstrap admin may request, never approve: not even a request it is unrelated to.
    const a = await created(t.adminToken, 'lineage-admin', ['ADMIN', 'APPROVE']);
    const byA = await requestOk(a, nsL, 'DESTROY_EVENT', { eventId: eventL });
    const fromBootstrap = await gql(t.url, t.adminToken, APPROVE, { id: byA.id });
    expect(code(fromBootstrap)).toBe('FORBIDDEN');
    expect(fromBootstrap.errors?.[0]?.message).toMatch(/bootstrap admin may request but never approve/);

    // A token the requester created, and one that token created in turn (a new principal each), do not count.
    const child = await created(a, 'child', ['ADMIN', 'APPROVE']);
    const grandchild = await created(child, 'grandchild', ['APPROVE']);
    for (const token of [child, grandchild]) {
      const r = await gql(t.url, token, APPROVE, { id: byA.id });
      expect(code(r)).toBe('FORBIDDEN');
      expect(r.errors?.[0]?.message).toMatch(/created by the requester/);
    }
    // Nor does the creator of the requester's token (it holds the requester's secret).
    const r2 = await created(a, 'made-by-a', ['ADMIN']);
    const byR2 = await requestOk(r2, nsL, 'DESTROY_EVENT', { eventId: eventL });
    const fromCreator = await gql(t.url, a, APPROVE, { id: byR2.id });
    expect(code(fromCreator)).toBe('FORBIDDEN');
    expect(fromCreator.errors?.[0]?.message).toMatch(/created a token of the requester/);
    expect([await status(byA.id), await status(byR2.id)]).toEqual(['PENDING', 'PENDING']);

    // A second person: an approver the bootstrap admin made beside the requester.
    const sibling = await created(t.adminToken, 'sibling-approver', ['APPROVE']);
    expect((await gqlOk<{ approve: { status: string } }>(t.url, sibling, APPROVE, { id: byA.id })).approve.status).toBe('APPROVED');
    const steps = await owner.query(`SELECT step FROM access.approval_log WHERE request_id = $1 ORDER BY id`, [byA.id]);
    expect(steps.rows.map((r) => r.step)).toEqual(['REQUESTED', 'REFUSED', 'REFUSED', 'REFUSED', 'APPROVED']);
  });

  it('the audit log is append-only, for the runtime role and the owner', async () => {
    const runtime = new Client({ connectionString: t.runtimeDatabaseUrl });
    await runtime.connect();
    try {
      for (const c of [runtime, owner]) {
        await expect(c.query(`UPDATE access.approval_log SET detail = 'x'`)).rejects.toMatchObject({ code: '42501' });
        await expect(c.query(`DELETE FROM access.approval_log`)).rejects.toMatchObject({ code: '42501' });
        await expect(c.query(`TRUNCATE access.approval_log`)).rejects.toMatchObject({ code: '42501' });
      }
    } finally {
      await runtime.end();
    }
  });
  it('records lineage for principals created before it existed: the migration takes the creator of each principal\u2019s first token', async () => {
    const nsM = uniqueNamespace('lineage-migration');
    const mk = async (by: string, name: string) =>
      (
        await gqlOk<{ createToken: { token: string; info: { principalId: string } } }>(
          t.url,
          by,
          `mutation($input: TokenInput!) { createToken(input: $input) { token info { principalId } } }`,
          { input: { name, grants: [{ namespacePattern: nsM, capabilities: ['ADMIN', 'APPROVE'] }] } },
        )
      ).createToken;
    const parent = await mk(t.adminToken, 'old-parent');
    const child = await mk(parent.token, 'old-child');
    const lineage = async () =>
      (
        await owner.query(`SELECT id::text AS id, created_by_token::text AS by FROM access.principals WHERE id = ANY($1::uuid[]) ORDER BY name`, [
          [parent.info.principalId, child.info.principalId],
        ])
      ).rows;
    const recorded = await lineage();
    expect(recorded.every((r) => r.by !== null)).toBe(true);
    // As on a database migrated before this change: the column does not exist, then the migration adds and fills it.
    const { ds } = await connectPostgres({ url: t.databaseUrl });
    const runner = ds.createQueryRunner();
    try {
      await new ApprovalsBySecretAndLineage1764400001410().down(runner);
      expect(
        (await owner.query(`SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'principals' AND column_name = 'created_by_token'`))
          .rows[0].n,
      ).toBe(0);
      await new ApprovalsBySecretAndLineage1764400001410().up(runner);
      await grantRuntimePrivileges(ds, new URL(t.runtimeDatabaseUrl).username);
    } finally {
      await runner.release();
      await ds.destroy();
    }
    expect(await lineage()).toEqual(recorded);
    // And the rule holds on the backfilled lineage: the child cannot approve the parent's request.
    const event = (await gqlOk<{ ingestEvent: { event: { id: string } } }>(t.url, t.adminToken, INGEST, { input: anEvent(nsM).saying('old lineage').build() }))
      .ingestEvent.event.id;
    const r = await requestOk(parent.token, nsM, 'DESTROY_EVENT', { eventId: event });
    expect(code(await gql(t.url, child.token, APPROVE, { id: r.id }))).toBe('FORBIDDEN');
  });
});
