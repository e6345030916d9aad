import { Client } from 'pg';
import { anEvent } from '../builders/event-input';
import { dataOf, errorOf, mcpClient } from '../support/mcp-client';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';
import { decayedImportance } from '../../src/silver/decay';
import { decaySettings } from '../../src/common/config';
import { LifecycleRepository } from '../../src/gold/decay/lifecycle.repository';
import { Sql } from '../../src/platform/postgres/sql';
import { JobRepository } from '../../src/platform/jobs/job.repository';

const DAY = 86_400_000;

const CONVERSATION = [
  'Alice uses vim for everything',
  'Alice lives in Berlin and works at Acme',
  'Alice prefers tabs over spaces',
  'Alice drinks green tea every morning',
  'We plan to migrate to PostgreSQL next month',
];

/** A simulated clock the app's decay, pruning and use recording read (AppOptions.clock). */
const clock = {
  t: Date.now(),
  now(): Date {
    return new Date(this.t);
  },
};

interface FactRow {
  id: string;
  statement: string;
  importance: number;
  confidence: number;
  sources: string;
  retired_reason: string | null;
}

describe('memory lifecycle: decay, use recording, reversible pruning (docs/lifecycle.md)', () => {
  let t: TestApp;
  let pg: Client;
  let repo: LifecycleRepository;
  const nsA = uniqueNamespace('life-a');
  const nsB = uniqueNamespace('life-b');
  const nsG = uniqueNamespace('life-g');
  let adminA: string;
  let adminB: string;
  let readerA: string;
  let seq = 0;
  const usedIds = new Set<string>();

  const ingest = async (ns: string, content: string) =>
    gqlOk(t.url, t.adminToken, `mutation($input: EventInput!) { ingestEvent(input: $input) { status } }`, {
      input: anEvent(ns)
        .inConversation('life', seq++)
        .by('USER', 'Alice')
        .saying(content)
        .at(new Date(Date.now() - 60_000).toISOString())
        .build(),
    });
  const settled = async (ns: string) => {
    await eventually(
      async () =>
        (
          await gqlOk<{ pipelineStatus: { pending: number } }>(t.url, t.adminToken, `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`, {
            ns,
          })
        ).pipelineStatus.pending === 0,
      'derivation',
      90_000,
    );
    await eventually(
      async () =>
        (await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM ops.outbox WHERE processed_at IS NULL AND namespace = $1`, [ns])).rows[0]?.n === 0,
      'the outbox to drain',
      90_000,
    );
  };
  const current = async (ns: string): Promise<FactRow[]> =>
    (
      await pg.query<FactRow>(
        `SELECT f.id::text, f.statement, f.importance::float8 AS importance, f.confidence::float8 AS confidence, f.retired_reason,
                (SELECT string_agg(s.event_id || ':' || s.span_start || '-' || s.span_end, ',' ORDER BY s.event_id, s.span_start) FROM silver.fact_sources s WHERE s.fact_id = f.id) AS sources
           FROM silver.facts f WHERE f.namespace = $1 AND f.retired_at IS NULL AND f.valid_to IS NULL ORDER BY f.id`,
        [ns],
      )
    ).rows;
  const waitJob = async (id: string) =>
    eventually(
      async () => {
        const j = (
          await gqlOk<{ job: { status: string; error: string | null } }>(t.url, t.adminToken, `query($id: ID!) { job(id: $id) { status error } }`, { id })
        ).job;
        if (j.status === 'failed') throw new Error(`job ${id} failed: ${j.error}`);
        return j.status === 'succeeded';
      },
      `job ${id}`,
      120_000,
    );
  const bronze = async (ns: string) =>
    (await pg.query(`SELECT md5(string_agg(e::text, '|' ORDER BY e.id)) AS h, count(*)::int AS n FROM bronze.events e WHERE namespace = $1`, [ns])).rows[0];
  const effective = async (ns: string): Promise<Map<string, { id: string; base: number; eff: number; active: Date }>> => {
    const ids = (await current(ns)).map((f) => f.id);
    const rows = await repo.factLifecycle(ids);
    const statements = new Map((await current(ns)).map((f) => [f.id, f.statement]));
    return new Map(
      rows.map((r) => [statements.get(r.id) as string, { id: r.id, base: r.importance, eff: r.effectiveImportance ?? Number.NaN, active: r.lastActive }]),
    );
  };
  const prune = async (token: string, ns: string, maxImportance: number, unusedForDays: number) =>
    gql<{ prune: { id: string } }>(
      t.url,
      token,
      `mutation($ns: String!, $m: Float!, $d: Int!) { prune(namespace: $ns, maxImportance: $m, unusedForDays: $d) { id status } }`,
      { ns, m: maxImportance, d: unusedForDays },
    );
  const explore = async (id: string) =>
    (
      await gqlOk<{ graphFacts: Array<{ id: string; statement: string }> }>(
        t.url,
        t.adminToken,
        `query($id: ID!) { graphFacts(where: { id: { eq: $id } }) { id statement } }`,
        { id },
      )
    ).graphFacts;
  const neoFact = async (id: string) => Number((await t.app.neo4j.executeQuery(`MATCH (f:Fact {id: $id}) RETURN count(f) AS n`, { id })).records[0]?.get('n'));
  const restore = async (token: string, ns: string, factIds?: string[]) =>
    gql<{ restorePruned: number }>(t.url, token, `mutation($ns: String!, $ids: [ID!]) { restorePruned(namespace: $ns, factIds: $ids) }`, { ns, ids: factIds });

  beforeAll(async () => {
    // Default lifecycle settings: only the test stores' usual speed-ups.
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50' }, { api: true, worker: true, clock });
    pg = new Client({ connectionString: t.databaseUrl });
    await pg.connect();
    repo = new LifecycleRepository(Sql.of(t.app.ds));
    // The test flushes recorded uses itself (the usage stage would every USAGE_FLUSH_MS).
    await t.app.stages.get('usage')?.stop();
    adminA = (await createToken(t, [{ namespacePattern: nsA, capabilities: ['ADMIN'] }])).token;
    adminB = (await createToken(t, [{ namespacePattern: nsB, capabilities: ['ADMIN'] }])).token;
    readerA = (await createToken(t, [{ namespacePattern: nsA, capabilities: ['READ', 'LIST', 'SEARCH'] }])).token;
    for (const c of CONVERSATION) await ingest(nsA, c);
    await ingest(nsB, 'Bob uses emacs for everything');
    for (const c of ['Carol likes jazz', 'Carol plays the piano every evening', 'Carol lives in Oslo']) await ingest(nsG, c);
    await settled(nsA);
    await settled(nsB);
    await settled(nsG);
  }, 240_000);
  afterAll(async () => {
    await pg?.end();
    await t?.stop();
  });

  it('decay follows the documented formula over a simulated clock, and never touches Bronze', async () => {
    const s = decaySettings(t.app.config);
    expect(s).toEqual({ afterDays: 30, cycleDays: 7, factor: 0.8, floor: 0.05 });
    const bronzeBefore = await bronze(nsA);
    expect((await current(nsA)).length).toBeGreaterThanOrEqual(4);

    // Fresh: nothing decays.
    const fresh = await t.app.services.lifecycle.decay(nsA, null);
    expect(fresh.decayed).toBe(0);
    for (const f of (await effective(nsA)).values()) expect(f.eff).toBeCloseTo(f.base, 6);

    // 60 idle days: floor((60 - 30) / 7) = 4 cycles of 0.8.
    clock.t += 60 * DAY;
    // Through the job kernel, as the schedule runs it.
    const { job } = await new JobRepository(Sql.of(t.app.ds)).enqueue({ kind: 'decay', namespace: nsA, params: {}, reason: 'lifecycle test' });
    await waitJob(job.id);
    expect((await pg.query(`SELECT message FROM ops.jobs WHERE id = $1`, [job.id])).rows[0].message).toMatch(
      /^(\d+) current facts, \1 below their base importance/,
    );
    for (const f of (await effective(nsA)).values()) {
      expect(f.eff).toBeCloseTo(decayedImportance(f.base, f.active, clock.now(), s), 5);
      expect(f.eff).toBeCloseTo(Math.max(Math.min(f.base, 0.05), f.base * 0.8 ** 4), 5);
      expect(f.eff).toBeLessThan(f.base);
    }
    // Fact.effectiveImportance shows it.
    const [one] = [...(await effective(nsA)).values()];
    const read = await gqlOk<{ fact: { importance: number; effectiveImportance: number } }>(
      t.url,
      adminA,
      `query($id: ID!) { fact(id: $id) { importance effectiveImportance } }`,
      { id: one?.id },
    );
    expect(read.fact.effectiveImportance).toBeCloseTo(one?.eff as number, 5);
    // An entity's importance is its best current fact's, so it decayed with them.
    const byEntity = await pg.query<{ entity: string; fact: string }>(
      `SELECT x.entity::text, f.id::text AS fact FROM silver.facts f,
              LATERAL (VALUES (f.subject_entity_id), (f.object_entity_id)) AS x(entity)
        WHERE f.namespace = $1 AND f.retired_at IS NULL AND f.valid_to IS NULL AND x.entity IS NOT NULL`,
      [nsA],
    );
    const effById = new Map([...(await effective(nsA)).values()].map((f) => [f.id, f]));
    const entityIds = [...new Set(byEntity.rows.map((r) => r.entity))];
    expect(entityIds.length).toBeGreaterThan(0);
    for (const id of entityIds) {
      const facts = byEntity.rows.filter((r) => r.entity === id).map((r) => effById.get(r.fact));
      const expected = Math.max(...facts.map((f) => f?.eff as number));
      const base = Math.max(...facts.map((f) => f?.base as number));
      const { entity } = await gqlOk<{ entity: { effectiveImportance: number | null } }>(
        t.url,
        adminA,
        `query($id: ID!) { entity(id: $id) { effectiveImportance } }`,
        { id },
      );
      expect(entity.effectiveImportance).toBeCloseTo(expected, 5);
      expect(entity.effectiveImportance).toBeLessThan(base);
    }
    // That read was a use.
    usedIds.add(one?.id as string);
    await t.app.usage.flush();
    expect(await bronze(nsA)).toEqual(bronzeBefore);
  });

  it('a search hit or a read by id is a use: recorded in memory, written in one batch, and it resets decay', async () => {
    const hits = await gqlOk<{ searchMemory: Array<{ fact: { id: string } | null }> }>(
      t.url,
      readerA,
      `query($ns: String!) { searchMemory(namespace: $ns, query: "Alice green tea morning", limit: 3) { fact { id } } }`,
      { ns: nsA },
    );
    const hitIds = hits.searchMemory.flatMap((h) => (h.fact ? [h.fact.id] : []));
    expect(hitIds.length).toBeGreaterThan(0);
    for (const id of hitIds) usedIds.add(id);
    const used = [...usedIds];
    // Nothing written on the request path.
    const usageRows = async () => (await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM silver.fact_usage WHERE namespace = $1`, [nsA])).rows[0]?.n;
    expect(t.app.usage.pendingCount).toBe(new Set(hitIds).size);
    await t.app.usage.flush();
    expect(t.app.usage.pendingCount).toBe(0);
    expect(await usageRows()).toBe(used.length);

    await t.app.services.lifecycle.decay(nsA, null);
    const after = await effective(nsA);
    for (const f of after.values()) {
      if (used.includes(f.id)) expect(f.eff).toBeCloseTo(f.base, 6);
      else expect(f.eff).toBeLessThan(f.base);
    }
  });

  it('a Silver rebuild reproduces the decayed importance (uses are keyed by the fact, not its row)', async () => {
    const before = await effective(nsA);
    const job = (
      await gqlOk<{ rebuildSilver: { id: string } }>(
        t.url,
        adminA,
        `mutation($ns: String!) { rebuildSilver(namespace: $ns, reason: "lifecycle test") { id } }`,
        {
          ns: nsA,
        },
      )
    ).rebuildSilver;
    await waitJob(job.id);
    await settled(nsA);
    await t.app.services.lifecycle.decay(nsA, null);
    const after = await effective(nsA);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [statement, b] of before) {
      const a = after.get(statement);
      expect(a?.id).not.toBe(b.id);
      expect(a?.eff).toBeCloseTo(b.eff, 5);
    }
  });

  let overlaid: string;
  let pruned: FactRow[];

  it('prune (default settings) retires decayed, unused facts with reason "pruned", keeps a fact with a human overlay, and every read path loses them', async () => {
    const facts = await current(nsA);
    const target = facts.find((f) => f.statement.includes('tea')) ?? (facts[0] as FactRow);
    overlaid = (facts.find((f) => f.id !== target.id) as FactRow).id;
    const word = (facts.find((f) => f.id === overlaid) as FactRow).statement.split(' ')[0] as string;
    await gqlOk(t.url, t.adminToken, `mutation($input: OverlayInput!) { addOverlay(input: $input) { id } }`, {
      input: { factId: overlaid, kind: 'ANNOTATION', exact: word, body: 'checked by a person', reason: 'lifecycle test' },
    });
    const bronzeBefore = await bronze(nsA);

    // A year on, with the configured defaults (PRUNE_MAX_IMPORTANCE, PRUNE_UNUSED_FOR_DAYS).
    clock.t += 365 * DAY;
    const { pruneMaxImportance, pruneUnusedForDays } = t.app.config.lifecycle;
    expect([pruneMaxImportance, pruneUnusedForDays]).toEqual([0.1, 180]);
    const r = await prune(adminA, nsA, pruneMaxImportance, pruneUnusedForDays);
    expect(r.errors).toBeUndefined();
    await waitJob((r.data as { prune: { id: string } }).prune.id);
    await settled(nsA);

    const left = await current(nsA);
    expect(left.map((f) => f.id)).toEqual([overlaid]);
    pruned = facts.filter((f) => f.id !== overlaid);
    const prunedRows = (await pg.query(`SELECT id::text FROM silver.facts WHERE namespace = $1 AND retired_reason = 'pruned' ORDER BY id`, [nsA])).rows;
    expect(prunedRows.map((x) => x.id)).toEqual(pruned.map((f) => f.id).sort());
    expect(await bronze(nsA)).toEqual(bronzeBefore);

    const id = target.id;
    // fact(id): gone by default; with includePruned it says why.
    const byId = await gqlOk<{ fact: unknown; withPruned: { retiredReason: string } }>(
      t.url,
      adminA,
      `query($id: ID!) { fact(id: $id) { id } withPruned: fact(id: $id, includePruned: true) { retiredReason } }`,
      { id },
    );
    expect(byId.fact).toBeNull();
    expect(byId.withPruned.retiredReason).toBe('pruned');
    // Listings.
    const listed = await gqlOk<{ facts: { edges: Array<{ node: { id: string } }> } }>(
      t.url,
      adminA,
      `query($ns: String!) { facts(namespace: $ns) { edges { node { id } } } }`,
      {
        ns: nsA,
      },
    );
    expect(listed.facts.edges.map((e) => e.node.id)).toEqual([overlaid]);
    // Search (Neo4j channels and the Postgres re-check).
    const searched = await gqlOk<{ searchMemory: Array<{ fact: { id: string } | null }> }>(
      t.url,
      adminA,
      `query($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q, limit: 20) { fact { id } } }`,
      { ns: nsA, q: target.statement },
    );
    expect(searched.searchMemory.map((h) => h.fact?.id)).not.toContain(id);
    // Neo4j: the node leaves the graph (graph exploration), and graphConsistency agrees.
    expect(await explore(id)).toEqual([]);
    expect(await neoFact(id)).toBe(0);
    const consistency = await gqlOk<{ graphConsistency: { ok: boolean } }>(t.url, adminA, `query($ns: String!) { graphConsistency(namespace: $ns) { ok } }`, {
      ns: nsA,
    });
    expect(consistency.graphConsistency.ok).toBe(true);
    // MCP.
    const mcp = await mcpClient(t.url, adminA);
    try {
      expect(errorOf(await mcp.callTool({ name: 'get_fact', arguments: { id } })).code).toBe('NOT_FOUND');
      const list = dataOf<{ facts: Array<{ id: string }> }>(await mcp.callTool({ name: 'list_facts', arguments: { namespace: nsA } }));
      expect(list.facts.map((f) => f.id)).toEqual([overlaid]);
    } finally {
      await mcp.close();
    }
  });

  it('restorePruned brings pruned facts back unchanged: by id, then all of the namespace', async () => {
    const [first, ...rest] = pruned;
    const one = await restore(adminA, nsA, [first?.id as string]);
    expect(one.data?.restorePruned).toBe(1);
    const all = await restore(adminA, nsA);
    expect(all.data?.restorePruned).toBe(rest.length);
    await settled(nsA);
    const back = (await current(nsA)).filter((f) => f.id !== overlaid);
    expect(back).toEqual(pruned.map((f) => ({ ...f, retired_reason: null })).sort((a, b) => a.id.localeCompare(b.id)));
    const target = pruned.find((f) => f.statement.includes('tea')) ?? (first as FactRow);
    const byId = await gqlOk<{ fact: { id: string; retiredAt: string | null; retiredReason: string | null } }>(
      t.url,
      adminA,
      `query($id: ID!) { fact(id: $id) { id retiredAt retiredReason } }`,
      { id: target.id },
    );
    expect(byId.fact).toEqual({ id: target.id, retiredAt: null, retiredReason: null });
    // Back in the graph, with its statement and edges.
    expect(await explore(target.id)).toEqual([{ id: target.id, statement: target.statement }]);
    const consistency = await gqlOk<{ graphConsistency: { ok: boolean } }>(t.url, adminA, `query($ns: String!) { graphConsistency(namespace: $ns) { ok } }`, {
      ns: nsA,
    });
    expect(consistency.graphConsistency.ok).toBe(true);
    await eventually(async () => {
      const s = await gqlOk<{ searchMemory: Array<{ fact: { id: string } | null }> }>(
        t.url,
        adminA,
        `query($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q, limit: 20) { fact { id } } }`,
        { ns: nsA, q: target.statement },
      );
      return s.searchMemory.some((h) => h.fact?.id === target.id);
    }, 'the restored fact in search');
  });

  it('new evidence (an event deriving the same fact) brings a pruned fact back', async () => {
    clock.t += 365 * DAY;
    const r = await prune(adminA, nsA, 0.1, 180);
    await waitJob((r.data as { prune: { id: string } }).prune.id);
    await settled(nsA);
    const tea = (
      await pg.query<{ id: string }>(`SELECT id::text FROM silver.facts WHERE namespace = $1 AND retired_reason = 'pruned' AND statement ILIKE '%tea%'`, [nsA])
    ).rows[0];
    expect(tea).toBeDefined();
    await ingest(nsA, 'Alice drinks green tea every morning');
    await settled(nsA);
    const now = (await pg.query(`SELECT retired_at, retired_reason FROM silver.facts WHERE id = $1`, [tea?.id])).rows[0];
    expect(now).toEqual({ retired_at: null, retired_reason: null });
    const dup = (await pg.query(`SELECT count(*)::int AS n FROM silver.facts WHERE namespace = $1 AND retired_reason = 'duplicate'`, [nsA])).rows[0];
    expect(dup.n).toBeGreaterThanOrEqual(1);
  });

  it('namespace isolation and input errors of prune and restorePruned', async () => {
    expect((await prune(adminB, nsA, 0.5, 30)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await prune(readerA, nsA, 0.5, 30)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await restore(adminB, nsA)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await restore(readerA, nsA)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const prunedInA = async () =>
      (await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM silver.facts WHERE namespace = $1 AND retired_reason = 'pruned'`, [nsA])).rows[0]?.n;
    const before = await prunedInA();
    expect(before).toBeGreaterThan(0);
    // B's admin restoring "its" namespace with A's fact ids touches nothing of A.
    const ids = (await pg.query<{ id: string }>(`SELECT id::text FROM silver.facts WHERE namespace = $1 AND retired_reason = 'pruned'`, [nsA])).rows.map(
      (x) => x.id,
    );
    expect((await restore(adminB, nsB, ids)).data?.restorePruned).toBe(0);
    expect(await prunedInA()).toBe(before);
    // B's prune leaves A alone.
    const b = await prune(adminB, nsB, 1, 1);
    await waitJob((b.data as { prune: { id: string } }).prune.id);
    expect(await prunedInA()).toBe(before);
    expect((await pg.query(`SELECT count(*)::int AS n FROM silver.facts WHERE namespace = $1 AND retired_reason = 'pruned'`, [nsB])).rows[0].n).toBeGreaterThan(
      0,
    );
    // A's pruned fact read by B's admin: not there.
    expect((await gqlOk<{ fact: unknown }>(t.url, adminB, `query($id: ID!) { fact(id: $id, includePruned: true) { id } }`, { id: ids[0] })).fact).toBeNull();

    const bad = await prune(adminA, nsA, 2, 30);
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(bad.errors?.[0]?.message).toMatch(/maxImportance must be between 0 and 1/);
    expect((await prune(adminA, nsA, 0.1, 0)).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await restore(adminA, nsA, ['not-a-uuid'])).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('Gold: an entity whose facts were all pruned is pruned too (promotion leaves it so), and restorePruned brings it back', async () => {
    const promote = async () => {
      const job = (await gqlOk<{ promote: { id: string } }>(t.url, t.adminToken, `mutation($ns: String!) { promote(namespace: $ns) { id } }`, { ns: nsG }))
        .promote;
      await waitJob(job.id);
      await settled(nsG);
    };
    const gold = async () =>
      (
        await pg.query<{ id: string; retired_reason: string | null }>(`SELECT id::text, retired_reason FROM gold.entities WHERE namespace = $1 ORDER BY id`, [
          nsG,
        ])
      ).rows;
    const neoRetired = async (id: string) =>
      (await t.app.neo4j.executeQuery(`MATCH (g:GoldEntity {id: $id}) RETURN g.retiredAt IS NOT NULL AS retired`, { id })).records[0]?.get('retired');
    await promote();
    // Entities Gold already retired for another reason (a promotion that ran while derivation was
    // still merging Silver entities retires the Gold rows of the merged-away ones) keep it throughout.
    const before = await gold();
    const live = before.filter((g) => g.retired_reason === null);
    expect(live.length).toBeGreaterThan(0);
    const goldImportance = async (id: string) =>
      (
        await gqlOk<{ goldEntity: { effectiveImportance: number | null } | null }>(
          t.url,
          t.adminToken,
          `query($id: ID!) { goldEntity(id: $id) { effectiveImportance } }`,
          { id },
        )
      ).goldEntity?.effectiveImportance;
    const importanceBefore = await goldImportance(live[0]?.id as string);
    expect(importanceBefore).toBeGreaterThan(0);
    const reasons = async (liveReason: string | null) =>
      expect(await gold()).toEqual(before.map((g) => (g.retired_reason === null ? { ...g, retired_reason: liveReason } : g)));

    clock.t += 400 * DAY;
    const r = await prune(t.adminToken, nsG, 1, 1);
    await waitJob((r.data as { prune: { id: string } }).prune.id);
    await settled(nsG);
    await reasons('pruned');
    expect(await neoRetired(live[0]?.id as string)).toBe(true);
    const read = await gqlOk<{ goldEntity: { retiredReason: string | null } | null }>(
      t.url,
      t.adminToken,
      `query($id: ID!) { goldEntity(id: $id) { retiredReason } }`,
      {
        id: live[0]?.id,
      },
    );
    expect(read.goldEntity?.retiredReason).toBe('pruned');
    // Nothing current is about it any more: no importance.
    expect(await goldImportance(live[0]?.id as string)).toBeNull();
    // A promotion run does not bring it back on its own.
    await promote();
    await reasons('pruned');

    const back = await restore(t.adminToken, nsG);
    expect(back.data?.restorePruned).toBeGreaterThan(0);
    await settled(nsG);
    await reasons(null);
    expect(await goldImportance(live[0]?.id as string)).toBeCloseTo(importanceBefore as number, 5);
    expect(await neoRetired(live[0]?.id as string)).toBe(false);
  });

  it('every namespace with facts gets a decay and a prune schedule with the configured defaults', async () => {
    const schedules = await eventually(
      async () => {
        const rows = (
          await pg.query<{ kind: string; params: unknown; secs: number }>(
            `SELECT kind, params, extract(epoch FROM run_every)::int AS secs FROM ops.schedules WHERE namespace = $1 AND kind IN ('decay', 'prune') ORDER BY kind`,
            [nsA],
          )
        ).rows;
        return rows.length === 2 ? rows : null;
      },
      'the decay and prune schedules (checked once a minute)',
      90_000,
    );
    expect(schedules).toEqual([
      { kind: 'decay', params: {}, secs: 86_400 },
      { kind: 'prune', params: { maxImportance: 0.1, unusedForDays: 180 }, secs: 604_800 },
    ]);
  }, 120_000);
});
