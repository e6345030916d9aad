import { Client } from 'pg';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

const WORD = 'Zorblatt';
const INGEST = `mutation($input: EventInput!) { ingestEvent(input: $input) { event { id } } }`;
const STATUS = `query($ns: String!) { pipelineStatus(namespace: $ns) { pending outboxLag } }`;
const SEARCH = `query($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q, limit: 20) {
  kind channels fact { id statement } event { id content } evidence { id } } }`;
const CONSISTENCY = `query($ns: String!) { graphConsistency(namespace: $ns) { ok missingInNeo4j extraInNeo4j } }`;
const JOB = `query($id: ID!) { job(id: $id) { status } }`;

type Hit = {
  kind: string;
  channels: string[];
  fact: { id: string; statement: string } | null;
  event: { id: string; content: string } | null;
  evidence: Array<{ id: string }>;
};

/** SQLSTATE of a failed statement, or 'succeeded'. */
async function failure(client: Client, sql: string, params: unknown[] = []): Promise<string> {
  try {
    await client.query(sql, params);
    return 'succeeded';
  } catch (err) {
    return (err as { code?: string }).code ?? 'no code';
  }
}

describe('destroyEvent: the approved erasure of one Bronze event', () => {
  let t: TestApp;
  let owner: Client;
  let runtime: Client;
  const ns = uniqueNamespace('erase');
  let admin: string;
  let approver: string;
  let erased: string;
  let survivor: string;
  let approvalId: string;
  let zFact: string;
  let berlinFact: string;

  const settled = () =>
    eventually(
      async () => {
        const s = (await gqlOk<{ pipelineStatus: { pending: number; outboxLag: number } }>(t.url, admin, STATUS, { ns })).pipelineStatus;
        return s.pending === 0 && s.outboxLag === 0;
      },
      'derivation and projection',
      60_000,
    );
  const search = async (q: string) => (await gqlOk<{ searchMemory: Hit[] }>(t.url, admin, SEARCH, { ns, q })).searchMemory;
  const neo = async (cypher: string, params: Record<string, unknown>) => (await t.app.neo4j.executeQuery(cypher, params)).records.map((r) => r.toObject());
  const waitJob = (id: string) =>
    eventually(async () => (await gqlOk<{ job: { status: string } }>(t.url, admin, JOB, { id })).job.status === 'succeeded', `job ${id}`, 60_000);

  beforeAll(async () => {
    // GOLD_MIN_SOURCES 1: one event is enough to promote, so the erased word reaches Gold before the erasure.
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50', GOLD_MIN_SOURCES: '1' });
    admin = (await createToken(t, [{ namespacePattern: ns, capabilities: ['ADMIN'] }], 'erasing-admin')).token;
    approver = (await createToken(t, [{ namespacePattern: ns, capabilities: ['APPROVE'] }], 'dpo')).token;
    owner = new Client({ connectionString: t.databaseUrl });
    runtime = new Client({ connectionString: t.runtimeDatabaseUrl });
    await Promise.all([owner.connect(), runtime.connect()]);
    const ingest = async (text: string, seq: number, payload: unknown) =>
      (
        await gqlOk<{ ingestEvent: { event: { id: string } } }>(t.url, admin, INGEST, {
          input: {
            ...anEvent(ns)
              .inConversation('life', seq)
              .by('USER')
              .saying(text)
              .at(`2026-01-0${seq + 1}T09:00:00Z`)
              .build(),
            rawPayload: payload,
          },
        })
      ).ingestEvent.event.id;
    erased = await ingest(`I work at ${WORD} and I live in Berlin`, 0, { secret: `${WORD}-payload` });
    await settled();
    survivor = await ingest('I live in Berlin', 1, null);
    await settled();
    const facts = (
      await owner.query(
        `SELECT f.id, f.statement, array_agg(s.event_id::text ORDER BY s.event_id) AS sources
           FROM silver.facts f JOIN silver.fact_sources s ON s.fact_id = f.id WHERE f.namespace = $1 AND f.retired_at IS NULL GROUP BY f.id`,
        [ns],
      )
    ).rows as Array<{ id: string; statement: string; sources: string[] }>;
    const z = facts.find((f) => f.statement.includes(WORD));
    const b = facts.find((f) => /Berlin/.test(f.statement));
    if (!z || !b) throw new Error(`the extractor did not give the expected facts: ${JSON.stringify(facts)}`);
    expect(z.sources).toEqual([erased]);
    expect(b.sources.sort()).toEqual([erased, survivor].sort());
    zFact = z.id;
    berlinFact = b.id;
  });
  afterAll(async () => {
    await Promise.all([owner?.end(), runtime?.end()]);
    await t?.stop();
  });

  it('before: searchMemory finds the word by keyword and by vector, as a fact and as the raw event', async () => {
    const hits = await search(WORD);
    const factHit = hits.find((h) => h.fact?.id === zFact);
    expect(factHit?.channels).toEqual(expect.arrayContaining(['keyword', 'vector']));
    const found = hits.flatMap((h) => [h.event?.id, ...h.evidence.map((e) => e.id)]);
    expect(found).toContain(erased);
    expect(hits.flatMap((h) => h.channels)).toEqual(expect.arrayContaining(['event_keyword', 'event_vector']));
    // The next turn holds the erased one's text as its keyword context (event-nodes.ts).
    expect(await neo(`MATCH (e:Event {id: $id}) RETURN e.contextEventId AS before, e.context CONTAINS $w AS holds`, { id: survivor, w: WORD })).toEqual([
      { before: erased, holds: true },
    ]);
  });

  let goldZ: string;
  it('before: overlays and Gold hold copies of the word', async () => {
    const add = `mutation($input: OverlayInput!) { addOverlay(input: $input) { id } }`;
    await gqlOk(t.url, admin, add, { input: { factId: zFact, kind: 'ANNOTATION', exact: WORD, body: `${WORD} is the employer`, reason: `about ${WORD}` } });
    await gqlOk(t.url, admin, add, { input: { eventId: erased, kind: 'REDACTION', exact: WORD, reason: 'employer is private' } });
    const job = await gqlOk<{ promote: { id: string } }>(t.url, admin, `mutation($ns: String!) { promote(namespace: $ns, reason: "before erasure") { id } }`, {
      ns,
    });
    await waitJob(job.promote.id);
    await settled();
    const gold = (await owner.query(`SELECT id::text AS id FROM gold.entities WHERE namespace = $1 AND name ILIKE $2`, [ns, `%${WORD}%`])).rows;
    expect(gold).toHaveLength(1);
    goldZ = gold[0].id;
    expect(await neo(`MATCH (g:GoldEntity {id: $id}) RETURN g.name AS name`, { id: goldZ })).toEqual([{ name: expect.stringContaining(WORD) }]);
    expect((await owner.query(`SELECT count(*)::int AS n FROM gold.overlays WHERE namespace = $1 AND exact ILIKE $2`, [ns, `%${WORD}%`])).rows[0].n).toBe(2);
  });

  it('erases content and payload, leaves a tombstone, retires and scrubs every fact resting on it, the shared ones included', async () => {
    const req = await gqlOk<{ requestApproval: { id: string } }>(
      t.url,
      admin,
      `mutation($input: ApprovalRequestInput!) { requestApproval(input: $input) { id } }`,
      { input: { namespace: ns, action: 'DESTROY_EVENT', params: { eventId: erased }, reason: 'GDPR art. 17 request 2026-11-30' } },
    );
    approvalId = req.requestApproval.id;
    await gqlOk(t.url, approver, `mutation($id: ID!) { approve(id: $id, reason: "verified the request") { status } }`, { id: approvalId });
    const checksum = (await owner.query(`SELECT checksum FROM bronze.events WHERE id = $1`, [erased])).rows[0].checksum;
    const destroyed = (
      await gqlOk<{ destroyEvent: { id: string; content: string; rawPayload: unknown; destroyedAt: string | null; checksum: string | null } }>(
        t.url,
        admin,
        `mutation($e: ID!, $a: ID!) { destroyEvent(eventId: $e, approvalId: $a) { id content rawPayload destroyedAt checksum } }`,
        { e: erased, a: approvalId },
      )
    ).destroyEvent;
    // The checksum stays in the tombstone (and the hash chain) but is read by nobody: it would confirm a guess of the content.
    expect(destroyed).toMatchObject({ id: erased, content: '', rawPayload: null, checksum: null });
    expect(destroyed.destroyedAt).not.toBeNull();
    const read = (
      await gqlOk<{ event: { content: string; destroyedAt: string } }>(t.url, admin, `query($id: ID!) { event(id: $id) { content destroyedAt } }`, {
        id: erased,
      })
    ).event;
    expect(read).toEqual({ content: '', destroyedAt: destroyed.destroyedAt });

    const tomb = (
      await owner.query(
        `SELECT t.namespace, t.source, t.source_event_id, t.checksum, t.reason, t.retired_facts, t.kept_facts,
                t.requested_by = r.requested_by AS requester_ok, t.approved_by = r.decided_by AS approver_ok, t.requested_by <> t.approved_by AS two_people,
                t.executed_by_name
           FROM bronze.event_tombstones t JOIN access.approval_requests r ON r.id = t.approval_id WHERE t.event_id = $1`,
        [erased],
      )
    ).rows;
    expect(tomb).toEqual([
      expect.objectContaining({
        namespace: ns,
        checksum,
        reason: 'GDPR art. 17 request 2026-11-30',
        kept_facts: 1,
        requester_ok: true,
        approver_ok: true,
        two_people: true,
        executed_by_name: 'erasing-admin',
      }),
    ]);
    expect(tomb[0].retired_facts).toBeGreaterThanOrEqual(1);
    expect((await owner.query(`SELECT raw_payload FROM bronze.events WHERE id = $1`, [erased])).rows[0].raw_payload).toBeNull();
    // the idempotency key stays (re-sending the event is a DUPLICATE of the tombstone, not a resurrection)
    expect((await owner.query(`SELECT count(*)::int AS n FROM bronze.event_keys WHERE event_id = $1`, [erased])).rows[0].n).toBe(1);

    const z = (await owner.query(`SELECT retired_at, retired_reason, erased_at, statement, embedding FROM silver.facts WHERE id = $1`, [zFact])).rows[0];
    expect(z.retired_at).not.toBeNull();
    expect(z.retired_reason).toBe('erasure');
    expect(z.erased_at).not.toBeNull();
    expect(z.statement).toBe('[erased]');
    expect(z.embedding).toBeNull();
    const b = await owner.query(
      `SELECT f.retired_at, array(SELECT s.event_id::text FROM silver.fact_sources s WHERE s.fact_id = f.id) AS sources FROM silver.facts f WHERE f.id = $1`,
      [berlinFact],
    );
    // A fact that also rested on a surviving event is erased too (its text may hold words only the
    // erased event supported); the survivor is queued to be derived again from its own words.
    expect(b.rows[0].retired_at).not.toBeNull();
    // Nothing of the word is left anywhere in Silver.
    const leftovers = (
      await owner.query(
        `SELECT (SELECT count(*)::int FROM silver.facts WHERE statement ILIKE $1 OR object_value ILIKE $1) AS facts,
                (SELECT count(*)::int FROM silver.fact_sources WHERE quote ILIKE $1) AS fact_quotes,
                (SELECT count(*)::int FROM silver.relationship_sources WHERE quote ILIKE $1) AS relationship_quotes,
                (SELECT count(*)::int FROM silver.judge_decisions WHERE statement ILIKE $1 OR reason ILIKE $1 OR candidates::text ILIKE $1) AS decisions,
                (SELECT count(*)::int FROM silver.event_embeddings WHERE event_id = $2) AS embeddings,
                (SELECT count(*)::int FROM silver.entities WHERE name ILIKE $1 OR array_to_string(aliases, ' ') ILIKE $1) AS entities,
                (SELECT count(*)::int FROM bronze.events WHERE content ILIKE $1 OR raw_payload::text ILIKE $1) AS events`,
        [`%${WORD}%`, erased],
      )
    ).rows[0];
    expect(leftovers).toEqual({ facts: 0, fact_quotes: 0, relationship_quotes: 0, decisions: 0, embeddings: 0, entities: 0, events: 0 });
  });

  it('a resend under the erased key is a DUPLICATE of the tombstone whatever its content: no answer tells a right guess from a wrong one', async () => {
    const key = (await owner.query(`SELECT source, source_event_id FROM bronze.event_tombstones WHERE event_id = $1`, [erased])).rows[0];
    const resend = async (text: string) =>
      (
        await gqlOk<{
          ingestEvent: { status: string; code: string | null; reason: string | null; event: { id: string; content: string; checksum: string | null } };
        }>(t.url, admin, `mutation($input: EventInput!) { ingestEvent(input: $input) { status code reason event { id content checksum } } }`, {
          input: {
            ...anEvent(ns).withKey(key.source, key.source_event_id).inConversation('life', 0).by('USER').saying(text).at('2026-01-01T09:00:00Z').build(),
            rawPayload: { secret: `${WORD}-payload` },
          },
        })
      ).ingestEvent;
    const right = await resend(`I work at ${WORD} and I live in Berlin`);
    const wrong = await resend('I work at Acme and I live in Berlin');
    expect(right).toEqual({ status: 'DUPLICATE', code: null, reason: null, event: { id: erased, content: '', checksum: null } });
    expect(wrong).toEqual(right);
  });

  it('removes the event and its erased facts from Neo4j and from both search channels', async () => {
    await settled();
    expect(await neo(`MATCH (e:Event {id: $id}) RETURN e.id AS id`, { id: erased })).toEqual([]);
    expect(await neo(`MATCH (f:Fact {id: $id}) RETURN f.id AS id`, { id: zFact })).toEqual([]);
    expect(
      await neo(
        `MATCH (n) WHERE n.namespace = $ns AND (n.content CONTAINS $w OR n.context CONTAINS $w OR n.statement CONTAINS $w OR n.name CONTAINS $w) RETURN n.id AS id`,
        {
          ns,
          w: WORD,
        },
      ),
    ).toEqual([]);
    expect(await neo(`MATCH (f:Fact {id: $id}) RETURN f.id AS id`, { id: berlinFact })).toEqual([]);
    // The survivor's Berlin fact, derived again from its own words.
    const again = (
      await owner.query(
        `SELECT f.id::text AS id FROM silver.facts f WHERE f.namespace = $1 AND f.retired_at IS NULL AND f.statement ILIKE '%Berlin%'
            AND EXISTS (SELECT 1 FROM silver.fact_sources s WHERE s.fact_id = f.id AND s.event_id = $2)`,
        [ns, survivor],
      )
    ).rows as Array<{ id: string }>;
    expect(again).toHaveLength(1);
    expect(await neo(`MATCH (:Fact {id: $id})-[:DERIVED_FROM]->(e:Event) RETURN e.id AS id`, { id: again[0]?.id })).toEqual([{ id: survivor }]);
    expect(await neo(`MATCH (e:Event {id: $id}) RETURN e.context AS context, e.contextEventId AS before`, { id: survivor })).toEqual([
      { context: null, before: null },
    ]);
    const hits = await search(WORD);
    expect(hits.filter((h) => h.fact?.id === zFact || h.event?.id === erased || h.evidence.some((e) => e.id === erased))).toEqual([]);
    expect(JSON.stringify(hits).toLowerCase()).not.toContain(WORD.toLowerCase());
    expect((await gqlOk<{ graphConsistency: { ok: boolean } }>(t.url, admin, CONSISTENCY, { ns })).graphConsistency).toMatchObject({ ok: true });
  });

  it('reaches Gold: overlays, Gold entities, the promotion log and the Gold graph keep no copy of the word', async () => {
    await settled();
    const left = (
      await owner.query(
        `SELECT (SELECT count(*)::int FROM gold.overlays WHERE concat_ws(' ', exact, prefix, suffix, body, reason) ILIKE $1) AS overlays,
                (SELECT count(*)::int FROM gold.overlays WHERE namespace = $2) AS overlay_rows,
                (SELECT count(*)::int FROM gold.entities WHERE name ILIKE $1 OR array_to_string(aliases, ' ') ILIKE $1) AS entities,
                (SELECT count(*)::int FROM gold.promotion_log WHERE reason ILIKE $1) AS log`,
        [`%${WORD}%`, ns],
      )
    ).rows[0];
    expect(left).toEqual({ overlays: 0, overlay_rows: 2, entities: 0, log: 0 });
    const g = (await owner.query(`SELECT name, retired_at, retired_reason, version FROM gold.entities WHERE id = $1`, [goldZ])).rows[0];
    expect(g).toMatchObject({ name: '[erased]', retired_reason: 'erased' });
    expect(g.retired_at).not.toBeNull();
    expect(
      await neo(`MATCH (g:GoldEntity) WHERE g.namespace = $ns AND (g.name CONTAINS $w OR any(a IN g.aliases WHERE a CONTAINS $w)) RETURN g.id AS id`, {
        ns,
        w: WORD,
      }),
    ).toEqual([]);
    expect(await neo(`MATCH (g:GoldEntity {id: $id}) RETURN g.name AS name, g.version AS version`, { id: goldZ })).toEqual([
      { name: '[erased]', version: expect.anything() },
    ]);
    // Outside an erasure the overlays stay append-only, for the owner too, with the flag set by hand.
    await owner.query(`SELECT set_config('medallion.erasing_event', '${erased}', false)`);
    const tamper = `UPDATE gold.overlays SET exact = '[erased]', prefix = '', suffix = '', body = NULL, reason = NULL, span_end = span_start + 8 WHERE namespace = '${ns}'`;
    expect(await failure(owner, tamper)).toBe('23001');
    await owner.query(`SELECT set_config('medallion.erasing_event', '', false)`);
    expect((await gqlOk<{ graphConsistency: { ok: boolean } }>(t.url, admin, CONSISTENCY, { ns })).graphConsistency).toMatchObject({ ok: true });
  });

  it('keeps refusing raw SQL on Bronze, for the runtime role and for the owner outside the function', async () => {
    const attempts: Array<[Client, string, string]> = [
      [runtime, `UPDATE bronze.events SET content = '' , raw_payload = NULL WHERE id = '${survivor}'`, '42501'],
      [runtime, `DELETE FROM bronze.events WHERE id = '${survivor}'`, '42501'],
      [runtime, `UPDATE bronze.event_tombstones SET reason = 'x'`, '42501'],
      [runtime, `INSERT INTO bronze.event_tombstones SELECT * FROM bronze.event_tombstones`, '42501'],
      [owner, `UPDATE bronze.events SET content = 'tampered' WHERE id = '${survivor}'`, '42501'],
      [owner, `DELETE FROM bronze.events WHERE id = '${survivor}'`, '42501'],
      [owner, `UPDATE bronze.event_tombstones SET reason = 'x'`, '42501'],
      [owner, `DELETE FROM bronze.event_tombstones`, '42501'],
      [owner, `TRUNCATE bronze.event_tombstones`, '42501'],
    ];
    const outcomes = [];
    for (const [c, s, want] of attempts) outcomes.push([s, await failure(c, s), want]);
    // The flag alone opens nothing: the owner sets it and updates exactly as the function would, directly and from a DO block.
    const flag = `SELECT set_config('medallion.erasing_event', '${survivor}', false)`;
    await owner.query(flag);
    outcomes.push(['owner, flag set', await failure(owner, `UPDATE bronze.events SET content = '', raw_payload = NULL WHERE id = '${survivor}'`), '42501']);
    outcomes.push([
      'owner, flag set, DO block',
      await failure(owner, `DO $$ BEGIN UPDATE bronze.events SET content = '', raw_payload = NULL WHERE id = '${survivor}'; END $$`),
      '42501',
    ]);
    await owner.query(`SELECT set_config('medallion.erasing_event', '', false)`);
    await runtime.query(flag);
    outcomes.push(['runtime, flag set', await failure(runtime, `UPDATE bronze.events SET content = '', raw_payload = NULL WHERE id = '${survivor}'`), '42501']);
    // The function itself, called raw by the runtime role: not callable (it names its executor by id);
    // the one it may call proves the executor by its secret, and refuses the spent approval.
    const principal = (await owner.query(`SELECT requested_by FROM access.approval_requests WHERE id = $1`, [approvalId])).rows[0].requested_by;
    outcomes.push([
      'runtime, destroy_event naming an executor',
      await failure(runtime, `SELECT * FROM bronze.destroy_event($1, $2, $3, 'x', $4)`, [survivor, approvalId, principal, ns]),
      '42501',
    ]);
    const call = `SELECT * FROM bronze.destroy_event_as($1, $2, $3, $4)`;
    outcomes.push(['runtime, spent approval, other event', await failure(runtime, call, [admin, survivor, approvalId, ns]), '22023']);
    outcomes.push(['runtime, spent approval, same event', await failure(runtime, call, [admin, erased, approvalId, ns]), '55000']);
    expect(outcomes.map(([s, got]) => [s, got])).toEqual(outcomes.map(([s, , want]) => [s, want]));
    expect((await owner.query(`SELECT content FROM bronze.events WHERE id = $1`, [survivor])).rows[0].content).toBe('I live in Berlin');
    // a second execution through the API is refused too
    const again = await gql(t.url, admin, `mutation($e: ID!, $a: ID!) { destroyEvent(eventId: $e, approvalId: $a) { id } }`, { e: erased, a: approvalId });
    expect(again.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT'); // already destroyed
  });

  it('rebuildSilver and rebuildGraph afterwards resurrect nothing', async () => {
    const rebuild = await gqlOk<{ rebuildSilver: { id: string } }>(
      t.url,
      admin,
      `mutation($ns: String!) { rebuildSilver(namespace: $ns, reason: "after erasure") { id } }`,
      {
        ns,
      },
    );
    await waitJob(rebuild.rebuildSilver.id);
    await settled();
    const live = (
      await owner.query(
        `SELECT f.statement, array(SELECT s.event_id::text FROM silver.fact_sources s WHERE s.fact_id = f.id) AS sources
           FROM silver.facts f WHERE f.namespace = $1 AND f.retired_at IS NULL`,
        [ns],
      )
    ).rows as Array<{ statement: string; sources: string[] }>;
    expect(live.length).toBeGreaterThan(0);
    expect(live.every((f) => !f.sources.includes(erased) && !f.statement.includes(WORD))).toBe(true);
    expect(live.some((f) => /Berlin/.test(f.statement) && f.sources.includes(survivor))).toBe(true);
    expect(
      (
        await owner.query(
          `SELECT count(*)::int AS n FROM silver.fact_sources WHERE event_id = $1 AND fact_id IN (SELECT id FROM silver.facts WHERE retired_at IS NULL)`,
          [erased],
        )
      ).rows[0].n,
    ).toBe(0);

    const graph = await gqlOk<{ rebuildGraph: { id: string } }>(
      t.url,
      admin,
      `mutation($ns: String) { rebuildGraph(namespace: $ns, reason: "after erasure") { id } }`,
      { ns },
    );
    await waitJob(graph.rebuildGraph.id);
    expect(await neo(`MATCH (e:Event {id: $id}) RETURN e.id AS id`, { id: erased })).toEqual([]);
    expect(
      await neo(
        `MATCH (n) WHERE n.namespace = $ns AND (n.content CONTAINS $w OR n.context CONTAINS $w OR n.statement CONTAINS $w OR n.name CONTAINS $w) RETURN n.id AS id`,
        {
          ns,
          w: WORD,
        },
      ),
    ).toEqual([]);
    expect(Number((await neo(`MATCH (e:Event) WHERE e.namespace = $ns RETURN count(e) AS n`, { ns }))[0]?.n)).toBe(1);
    expect((await gqlOk<{ graphConsistency: { ok: boolean } }>(t.url, admin, CONSISTENCY, { ns })).graphConsistency).toMatchObject({ ok: true });
    const hits = await search(WORD);
    expect(JSON.stringify(hits).toLowerCase()).not.toContain(WORD.toLowerCase());
    expect(hits.some((h) => h.event?.id === erased || h.evidence.some((e) => e.id === erased))).toBe(false);
  });
});
