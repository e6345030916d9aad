import { uniqueNamespace } from '../support/stores';
import { createToken, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

const REBUILD = `mutation($ns: String!, $from: DateTime, $to: DateTime) { rebuildSilver(namespace: $ns, from: $from, to: $to, reason: "twice") { id status } }`;
const GRAPH = `mutation($ns: String) { rebuildGraph(namespace: $ns, reason: "twice") { id status } }`;
const REEMBED = `mutation($ns: String) { reembed(namespace: $ns, reason: "twice") { id status } }`;

/**
 * Job requests as callers meet them. One queued or running job per kind and namespace: asking again returns the
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

  it('refuses a window or a reason a job could not use, before anything is queued, with a message that says what to send', async () => {
    const other = uniqueNamespace('jobreq-bad');
    const token = (await createToken(t, [{ namespacePattern: other, capabilities: ['ADMIN'] }])).token;
    // Year 0 was queued and the job then failed with Postgres' "date/time field value out of range".
    const refusals = [
      {
        vars: { ns: other, from: '0000-01-01T00:00:00Z', to: null },
        code: 'BAD_USER_INPUT',
        message: /from must lie between 1900-01-01 and 2200-01-01.*omit from/,
      },
      {
        vars: { ns: other, from: null, to: '9999-12-31T00:00:00Z' },
        code: 'BAD_USER_INPUT',
        message: /to must lie between 1900-01-01 and 2200-01-01.*omit to/,
      },
      { vars: { ns: other, from: '1899-12-31T23:59:59Z', to: '2026-01-01T00:00:00Z' }, code: 'BAD_USER_INPUT', message: /^from must lie between/ },
    ];
    for (const r of refusals) {
      const answer = await gql(t.url, token, REBUILD, r.vars);
      expect({ code: answer.errors?.[0]?.extensions?.code, message: answer.errors?.[0]?.message }).toEqual({
        code: r.code,
        message: expect.stringMatching(r.message),
      });
    }
    const long = 'x'.repeat(2_001);
    const tooLong = [
      gql(t.url, token, `mutation($ns: String!, $r: String!) { rebuildSilver(namespace: $ns, reason: $r) { id } }`, { ns: other, r: long }),
      gql(t.url, token, `mutation($ns: String!, $r: String!) { rebuildGraph(namespace: $ns, reason: $r) { id } }`, { ns: other, r: long }),
      gql(t.url, token, `mutation($ns: String!, $r: String!) { reembed(namespace: $ns, reason: $r) { id } }`, { ns: other, r: long }),
      gql(t.url, token, `mutation($ns: String!, $r: String!) { promote(namespace: $ns, reason: $r) { id } }`, { ns: other, r: long }),
    ];
    for (const answer of await Promise.all(tooLong)) {
      expect(answer.errors?.[0]).toMatchObject({
        extensions: { code: 'LIMIT_EXCEEDED' },
        message: 'reason is 2001 characters; at most 2000 are kept: shorten it',
      });
    }
    expect((await t.app.ds.query(`SELECT count(*)::int AS n FROM ops.jobs WHERE namespace = $1`, [other]))[0].n).toBe(0);
    // The edges of the range are windows like any other.
    const edges = await gqlOk<{ rebuildSilver: { status: string } }>(t.url, token, REBUILD, {
      ns: other,
      from: '1900-01-01T00:00:00Z',
      to: '2200-01-01T00:00:00Z',
    });
    expect(edges.rebuildSilver.status).toBe('queued');
  });
});
