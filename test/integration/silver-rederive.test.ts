import { Client } from 'pg';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';

/**
 * Issue 43: live Silver equals a fresh derivation of the same Bronze. The same contradicting
 * statements derived as they arrive (one batch each, or out of their time order) and re-derived
 * from Bronze by `rebuildSilver` (one batch, in time order) give the same facts: statement,
 * validity, supersession, sources.
 */

/** Every believed fact: statement, validity, whether superseded and by which statement, sources. */
async function snapshot(sql: Client, ns: string): Promise<string[]> {
  const { rows } = await sql.query(
    `SELECT f.statement, f.is_negation, f.valid_from, f.valid_to, n.statement AS superseded_by,
            (SELECT string_agg(s.event_id || ':' || s.span_start || '-' || s.span_end, ',' ORDER BY s.event_id, s.span_start) FROM silver.fact_sources s WHERE s.fact_id = f.id) AS sources
       FROM silver.facts f LEFT JOIN silver.facts n ON n.id = f.superseded_by
      WHERE f.namespace = $1 AND f.retired_at IS NULL`,
    [ns],
  );
  return rows.map((r) => JSON.stringify(r)).sort();
}

const current = (rows: readonly string[]) =>
  rows
    .map((r) => JSON.parse(r) as { statement: string; valid_to: string | null })
    .filter((r) => r.valid_to === null)
    .map((r) => r.statement)
    .sort();

describe('live Silver equals a fresh derivation of the same Bronze', () => {
  let t: TestApp;
  let sql: Client;
  let admin: string;
  const prefix = uniqueNamespace('rederive');

  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50' });
    admin = (await createToken(t, [{ namespacePattern: `${prefix}*`, capabilities: ['ADMIN', 'READ', 'INGEST'] }])).token;
    sql = new Client({ connectionString: t.databaseUrl });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await t?.stop();
  });

  const settled = (ns: string) =>
    eventually(
      async () =>
        (await gqlOk<{ pipelineStatus: { pending: number } }>(t.url, admin, `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`, { ns }))
          .pipelineStatus.pending === 0,
      'derivation',
    );

  const ingest = async (ns: string, events: ReadonlyArray<readonly [string, number, string, string]>) => {
    const input = events.map(([conversation, seq, at, content]) =>
      anEvent(ns).inConversation(conversation, seq).by('USER', 'Dana').saying(content).at(at).build(),
    );
    await gqlOk(t.url, admin, `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`, { input });
  };

  /** One message per ingest request, each derived before the next is sent (one batch each). */
  const oneByOne = async (ns: string, said: ReadonlyArray<readonly [string, string]>) => {
    for (const [i, [at, content]] of said.entries()) {
      await ingest(ns, [['chat', i + 1, at, content]]);
      await settled(ns);
    }
  };

  /** rebuildSilver over the whole namespace (every event again, in time order, in one batch) and waits for it. */
  const rebuild = async (ns: string) => {
    const job = (
      await gqlOk<{ rebuildSilver: { id: string } }>(t.url, admin, `mutation($ns: String!) { rebuildSilver(namespace: $ns, reason: "rederive") { id } }`, {
        ns,
      })
    ).rebuildSilver;
    await eventually(
      async () =>
        (await gqlOk<{ job: { status: string } }>(t.url, admin, `query($id: ID!) { job(id: $id) { status } }`, { id: job.id })).job.status === 'succeeded',
      'the rebuild',
      60_000,
    );
  };

  it('a statement restated after its contradiction: derived one message at a time as in one batch', async () => {
    const ns = `${prefix}-restated`;
    const said = [
      ['2026-06-01T09:00:00Z', 'I use emacs for everything'],
      ['2026-06-01T09:01:00Z', 'I no longer use emacs'],
      ['2026-06-01T09:02:00Z', 'I use emacs for everything'],
      ['2026-06-01T09:03:00Z', 'I no longer use vim'],
      ['2026-06-01T09:04:00Z', 'I use vim for everything'],
      ['2026-06-01T09:05:00Z', 'I no longer use vim'],
    ] as const;
    await oneByOne(ns, said);
    const live = await snapshot(sql, ns);
    // What was said last about each editor is what holds.
    expect(current(live)).toEqual(expect.arrayContaining(['Dana does not use Vim', 'Dana uses Emacs']));
    await rebuild(ns);
    expect(await snapshot(sql, ns)).toEqual(live);
  });

  it('a message that ends a value and names the new one leaves one current fact, the new value superseding the negation that ended the old one', async () => {
    const ns = `${prefix}-ended`;
    await oneByOne(ns, [
      ['2026-06-03T09:00:00Z', 'I drink about four cups of coffee a day'],
      ['2026-06-03T09:05:00Z', 'I quit coffee last month, only green tea now'],
    ]);
    const live = await snapshot(sql, ns);
    const facts = live.map((r) => JSON.parse(r) as { statement: string; is_negation: boolean; valid_to: string | null; superseded_by: string | null });
    const head = facts.filter((f) => f.valid_to === null);
    expect(head).toHaveLength(1);
    expect(head[0]?.statement).toMatch(/green tea/);
    // The chain: coffee → the negation that ended it → the new value.
    const negation = facts.find((f) => f.is_negation);
    expect(negation?.superseded_by).toBe(head[0]?.statement);
    expect(facts.find((f) => /four cups of coffee/.test(f.statement))?.superseded_by).toBe(negation?.statement);
    await rebuild(ns);
    expect(await snapshot(sql, ns)).toEqual(live);
  });

  it('the end of a value and the new one in two messages: derived one message at a time as in one batch', async () => {
    const ns = `${prefix}-ended-apart`;
    await oneByOne(ns, [
      ['2026-06-04T09:00:00Z', 'I drink about four cups of coffee a day'],
      ['2026-06-04T09:05:00Z', 'I quit coffee last month'],
      ['2026-06-04T09:06:00Z', 'I only drink green tea now'],
    ]);
    const live = await snapshot(sql, ns);
    // Derived one per batch, "I only drink green tea now" meets only the negation (the coffee fact is no longer current); one batch gives the same.
    expect(current(live).some((s) => /green tea/.test(s))).toBe(true);
    await rebuild(ns);
    expect(await snapshot(sql, ns)).toEqual(live);
  });

  it('an older statement that arrives after a newer one: the newer one still holds, as in a derivation in time order', async () => {
    const ns = `${prefix}-late`;
    // Two writers on one namespace: the second's newer messages are derived before the first's older ones arrive.
    await ingest(ns, [['writer-2', 1, '2026-06-02T09:01:00Z', 'I no longer use vim']]);
    await settled(ns);
    await ingest(ns, [['writer-2', 2, '2026-06-02T09:02:00Z', 'I use emacs for everything']]);
    await settled(ns);
    await ingest(ns, [
      ['writer-1', 1, '2026-06-02T09:00:00Z', 'I use vim for everything'],
      ['writer-1', 2, '2026-06-02T09:00:30Z', 'I work at Acme'],
    ]);
    await settled(ns);
    const live = await snapshot(sql, ns);
    expect(current(live)).toEqual(['Dana does not use Vim', 'Dana uses Emacs', 'Dana works at Acme']);
    await rebuild(ns);
    expect(await snapshot(sql, ns)).toEqual(live);
  });
});
