import { Client } from 'pg';
import { ChainRepository } from '../../src/gold/portability/chain.repository';
import { readChainVerifyState } from '../../src/gold/portability/chain-verify.repository';
import { Sql } from '../../src/platform/postgres/sql';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';
import { scrape, total } from '../support/prometheus';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status event { id } } }`;
const QUALITY = `query($ns: String!) { qualityReport(namespace: $ns, checks: ["chain_intact"]) { ok checks { name ok value detail } } }`;

type Check = { name: string; ok: boolean; value: number; detail: string };

/**
 * Issue 43 item 4: nothing but a manual `verify` noticed an edited Bronze row. Now the worker
 * verifies every namespace's chain on a schedule (CHAIN_VERIFY_EVERY_SECONDS), stores the verdict,
 * and the quality report, /metrics and the state /health reads all show a break nobody looked for.
 */
describe('the scheduled verify notices an edited Bronze row on its own', () => {
  let t: TestApp;
  let owner: Client;
  const ns = uniqueNamespace('verify-schedule');

  const chainCheck = async (): Promise<Check> =>
    (await gqlOk<{ qualityReport: { checks: Check[] } }>(t.url, t.adminToken, QUALITY, { ns })).qualityReport.checks[0] as Check;
  /** /health's `chain` section (the stored state of the scheduled verify). */
  const healthChain = async (): Promise<{ status: number; chain: Record<string, unknown> }> => {
    const res = await fetch(`${t.url}/health`);
    return { status: res.status, chain: ((await res.json()) as { chain: Record<string, unknown> }).chain };
  };

  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', CHAIN_VERIFY_EVERY_SECONDS: '2' });
    owner = new Client({ connectionString: t.databaseUrl });
    await owner.connect();
  }, 180_000);
  afterAll(async () => {
    await owner?.end();
    await t?.stop();
  });

  it('before a namespace is verified the check passes and says so; then it is verified as intact', async () => {
    const r = await gqlOk<{ ingestEvents: Array<{ event: { id: string } }> }>(t.url, t.adminToken, INGEST, {
      input: [
        anEvent(ns).withKey('chat', 'v1').saying('I keep the spare key under the blue pot').build(),
        anEvent(ns).withKey('chat', 'v2').saying('The meeting moved to Friday').build(),
      ],
    });
    expect(r.ingestEvents).toHaveLength(2);
    const chain = new ChainRepository(Sql.of(t.app.ds));
    await eventually(async () => (await chain.linkCount(ns)) >= 2 && (await chain.unsealedCount(ns)) === 0, 'the events sealed', 60_000);
    const intact = await eventually(
      async () => {
        const c = await chainCheck();
        return /^chain intact at/.test(c.detail) ? c : null;
      },
      'a scheduled verify of the namespace',
      90_000,
    );
    expect(intact).toMatchObject({ name: 'chain_intact', ok: true, value: 0 });
    const s = await scrape(t.url);
    expect(total(s, 'medallion_chain_verifications_total', { result: 'intact' })).toBeGreaterThanOrEqual(1);
    expect(total(s, 'medallion_chain_broken_namespaces')).toBe(0);
    expect(total(s, 'medallion_chain_last_verified_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 120);
    const h = await healthChain();
    expect(h.status).toBe(200);
    expect(h.chain).toMatchObject({ ok: true, brokenNamespaces: 0, verifiedNamespaces: expect.any(Number) });
    expect(Date.parse(h.chain.lastVerifiedAt as string)).toBeGreaterThan(Date.now() - 120_000);
  }, 180_000);

  it("an owner's edit behind the guards turns the check, the gauges and the stored state red without anyone running verify", async () => {
    const [row] = (
      await owner.query(
        `SELECT e.id::text AS id, c.seq::int AS seq FROM bronze.events e JOIN ops.hash_chain c ON c.item_id = e.id::text
                                       WHERE e.namespace = $1 AND e.source_event_id = 'v1'`,
        [ns],
      )
    ).rows as Array<{ id: string; seq: number }>;
    await owner.query('BEGIN');
    await owner.query(`SET LOCAL session_replication_role = replica`);
    await owner.query(`UPDATE bronze.events SET content = 'I keep the spare key under the red pot' WHERE id = $1`, [row?.id]);
    await owner.query('COMMIT');

    const broken = await eventually(
      async () => {
        const c = await chainCheck();
        return c.ok ? null : c;
      },
      'the next scheduled verify to find the edit',
      90_000,
    );
    expect(broken).toMatchObject({ value: 1 });
    expect(broken.detail).toContain(`chain BROKEN`);
    expect(broken.detail).toContain(`at position ${row?.seq}: event ${row?.id}: the content does not match the event checksum`);
    // Nor does the check leak the edited text.
    expect(broken.detail).not.toContain('red pot');
    const text = await (await fetch(`${t.url}/metrics`)).text();
    const s = await scrape(t.url);
    expect(total(s, 'medallion_chain_broken_namespaces')).toBe(1);
    expect(total(s, 'medallion_chain_verifications_total', { result: 'broken' })).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(ns);
    // /health reports the break in its chain section (no namespace named) and stays 200: informative, like the lags; the alert rule pages.
    const h = await healthChain();
    expect(h).toMatchObject({ status: 200, chain: { ok: true, brokenNamespaces: 1 } });
    expect(JSON.stringify(h.chain)).not.toContain(ns);
    expect(await readChainVerifyState(Sql.of(t.app.ds))).toMatchObject({ brokenNamespaces: 1, lastVerifiedAt: expect.any(Date) });
  }, 180_000);
});
