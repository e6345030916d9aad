import { Client } from 'pg';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';

const WORD = 'Quokkaberry';

/**
 * An erasure that meets a derivation batch in flight (issue 43). A batch writes in one transaction
 * that first locks its namespace's lease row (`Leases.fence`) and then writes what it planned from
 * what it read before: facts, source rows, judge decisions naming the candidates it saw. Here a
 * second connection plays that transaction at the moment an erasure is executed through the
 * public `destroyEvent`: it holds the lease row, the erasure starts, then the batch writes a
 * source row tying another fact to the erased event (a merge) and a decision naming the erased
 * event's fact among its candidates, and commits. What the batch wrote must be erased or scrubbed
 * like the rest: the erasure either fences the batch out or sees its writes — it must not scrub
 * first and wait for the lease after (the order before migration 1764400001460, which left the
 * decision's candidate, with the erased words, in Silver and broke the hash chain's check).
 */
describe('destroyEvent while a derivation batch holds the namespace lease', () => {
  let t: TestApp;
  let owner: Client;
  let batch: Client;
  let admin: string;
  let approver: string;
  const ns = uniqueNamespace('erase-race');

  const settled = () =>
    eventually(
      async () => {
        const s = (
          await gqlOk<{ pipelineStatus: { pending: number; outboxLag: number } }>(
            t.url,
            admin,
            `query($ns: String!) { pipelineStatus(namespace: $ns) { pending outboxLag } }`,
            { ns },
          )
        ).pipelineStatus;
        return s.pending === 0 && s.outboxLag === 0;
      },
      'derivation and projection',
      60_000,
    );
  const ingest = async (text: string, seq: number) =>
    (
      await gqlOk<{ ingestEvent: { event: { id: string } } }>(t.url, admin, `mutation($input: EventInput!) { ingestEvent(input: $input) { event { id } } }`, {
        input: anEvent(ns).inConversation('race', seq).by('USER').saying(text).build(),
      })
    ).ingestEvent.event.id;
  const factOf = async (eventId: string) =>
    (
      await owner.query(
        `SELECT f.id, f.statement FROM silver.facts f JOIN silver.fact_sources s ON s.fact_id = f.id
          WHERE s.event_id = $1 AND f.retired_at IS NULL ORDER BY f.recorded_at LIMIT 1`,
        [eventId],
      )
    ).rows[0] as { id: string; statement: string } | undefined;

  beforeAll(async () => {
    t = await startTestApp({ DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50' });
    admin = (await createToken(t, [{ namespacePattern: ns, capabilities: ['ADMIN'] }], 'erasing-admin')).token;
    approver = (await createToken(t, [{ namespacePattern: ns, capabilities: ['APPROVE'] }], 'dpo')).token;
    owner = new Client({ connectionString: t.databaseUrl });
    batch = new Client({ connectionString: t.databaseUrl });
    await owner.connect();
    await batch.connect();
  }, 240_000);
  afterAll(async () => {
    await batch?.end();
    await owner?.end();
    await t?.stop();
  });

  it('what the batch wrote is erased or scrubbed with the rest', async () => {
    const erased = await ingest(`I drink ${WORD} tea every morning`, 1);
    const other = await ingest('I live in Lisbon', 2);
    await settled();
    const erasedFact = await factOf(erased);
    const otherFact = await factOf(other);
    expect(erasedFact?.statement).toContain(WORD);
    expect(otherFact).toBeDefined();
    if (!erasedFact || !otherFact) return;

    const approval = (
      await gqlOk<{ requestApproval: { id: string } }>(t.url, admin, `mutation($input: ApprovalRequestInput!) { requestApproval(input: $input) { id } }`, {
        input: { namespace: ns, action: 'DESTROY_EVENT', params: { eventId: erased }, reason: 'erasure request' },
      })
    ).requestApproval.id;
    await gqlOk(t.url, approver, `mutation($id: ID!) { approve(id: $id, reason: "verified") { status } }`, { id: approval });

    // The batch's write transaction passes its fence: the lease row is locked until it commits.
    await batch.query('BEGIN');
    expect((await batch.query(`SELECT 1 FROM ops.derivation_leases WHERE namespace = $1 FOR UPDATE`, [ns])).rowCount).toBe(1);

    const destroying = gqlOk(t.url, admin, `mutation($e: ID!, $a: ID!) { destroyEvent(eventId: $e, approvalId: $a) { id } }`, { e: erased, a: approval });
    // The erasure is running and waits for a lock (wherever its function asks for the lease row).
    await eventually(
      async () =>
        ((await owner.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%destroy_event%' AND pid <> pg_backend_pid()`))
          .rowCount ?? 0) > 0,
      'the erasure waiting on a lock',
      30_000,
    );

    // What the batch planned from what it read before the erasure: the erased event merged into
    // another fact (a SKIP), and a decision that compared a new fact with the erased one.
    await batch.query(`INSERT INTO silver.fact_sources (fact_id, event_id, quote) VALUES ($1, $2, $3)`, [otherFact.id, erased, `I drink ${WORD} tea`]);
    await batch.query(
      `INSERT INTO silver.judge_decisions (namespace, derivation_run_id, fact_id, statement, action, target_fact_id, reason, candidates, judge_model)
       SELECT d.namespace, d.derivation_run_id, $2, $3, 'ADD', NULL, $4, jsonb_build_array(jsonb_build_object('id', $5::text, 'statement', $6::text)), d.judge_model
         FROM silver.judge_decisions d WHERE d.namespace = $1 LIMIT 1`,
      [ns, otherFact.id, otherFact.statement, `new: unlike "${erasedFact.statement}"`, erasedFact.id, erasedFact.statement],
    );
    await batch.query('COMMIT');
    await destroying;

    // Nothing the batch wrote holds the erased words or names the erased event.
    const left = (
      await owner.query(
        `SELECT (SELECT count(*)::int FROM silver.judge_decisions WHERE namespace = $2 AND (statement ILIKE $1 OR candidates::text ILIKE $1 OR reason ILIKE $1)) AS decisions,
                (SELECT count(*)::int FROM silver.fact_sources WHERE event_id = $3 AND quote ILIKE $1) AS quotes,
                (SELECT count(*)::int FROM silver.fact_sources s JOIN silver.facts f ON f.id = s.fact_id
                  WHERE s.event_id = $3 AND f.erased_at IS NULL) AS live_facts_on_the_erased_event`,
        [`%${WORD}%`, ns, erased],
      )
    ).rows[0];
    expect(left).toEqual({ decisions: 0, quotes: 0, live_facts_on_the_erased_event: 0 });
    // The merged fact rested on the erased event too: erased, and its own event derived again.
    const merged = (await owner.query(`SELECT statement, erased_at FROM silver.facts WHERE id = $1`, [otherFact.id])).rows[0] as {
      statement: string;
      erased_at: Date | null;
    };
    expect(merged.statement).toBe('[erased]');
    expect(merged.erased_at).not.toBeNull();
    await settled();
    expect((await factOf(other))?.statement).toBe(otherFact.statement);
  }, 180_000);
});
