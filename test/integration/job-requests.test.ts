import { uniqueNamespace } from '../support/stores';
import { createToken, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

const REBUILD = `mutation($ns: String!, $from: DateTime, $to: DateTime) { rebuildSilver(namespace: $ns, from: $from, to: $to, reason: "twice") { id status } }`;
const GRAPH = `mutation($ns: String) { rebuildGraph(namespace: $ns, reason: "twice") { id status } }`;
const REEMBED = `mutation($ns: String) { reembed(namespace: $ns, reason: "twice") { id status } }`;

/**
 * One queued or running job per kind and namespace, as callers meet it: asking again returns the
 * job already under way; a Silver rebuild over another window waits for it, with an error that
 * says so. No worker runs here, so requested jobs stay queued.
 */
describe('job requests while one is under way', () => {
  let t: TestApp;
  let admin: string;
  const ns = uniqueNamespace('jobreq');

  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing' }, { api: true, worker: false });
    admin = (await createToken(t, [{ namespacePattern: ns, capabilities: ['ADMIN', 'READ'] }])).token;
  });
  afterAll(async () => t?.stop());

  it('returns the active job to a repeated request, and refuses a Silver rebuild over another window', async () => {
    const window = { ns, from: '2026-01-01T00:00:00.000Z', to: '2026-02-01T00:00:00.000Z' };
    const [a, b] = await Promise.all([
      gqlOk<{ rebuildSilver: { id: string; status: string } }>(t.url, admin, REBUILD, window),
      gqlOk<{ rebuildSilver: { id: string; status: string } }>(t.url, admin, REBUILD, window),
    ]);
    expect(a.rebuildSilver.status).toBe('queued');
    expect(b.rebuildSilver.id).toBe(a.rebuildSilver.id);

    const other = await gql(t.url, admin, REBUILD, { ns, from: '2026-03-01T00:00:00.000Z', to: null });
    expect(other.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(other.errors?.[0]?.message).toContain(a.rebuildSilver.id);

    const g1 = await gqlOk<{ rebuildGraph: { id: string } }>(t.url, admin, GRAPH, { ns });
    const g2 = await gqlOk<{ rebuildGraph: { id: string } }>(t.url, admin, GRAPH, { ns });
    expect(g2.rebuildGraph.id).toBe(g1.rebuildGraph.id);
    const r1 = await gqlOk<{ reembed: { id: string } }>(t.url, admin, REEMBED, { ns });
    const r2 = await gqlOk<{ reembed: { id: string } }>(t.url, admin, REEMBED, { ns });
    expect(r2.reembed.id).toBe(r1.reembed.id);
    expect(new Set([a.rebuildSilver.id, g1.rebuildGraph.id, r1.reembed.id]).size).toBe(3);

    const active = (await t.app.ds.query(`SELECT kind, count(*)::int AS n FROM ops.jobs WHERE namespace = $1 GROUP BY kind ORDER BY kind`, [ns])) as Array<{
      kind: string;
      n: number;
    }>;
    expect(active).toEqual([
      { kind: 'rebuild_graph', n: 1 },
      { kind: 'rebuild_silver', n: 1 },
      { kind: 'reembed', n: 1 },
    ]);
  });
});
