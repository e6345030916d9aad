import { deleteProjectedNodes } from '../../src/graph/cypher/graph-admin';
import { GraphRebuildService } from '../../src/graph/graph-rebuild.service';
import { ProjectionJob } from '../../src/graph/projection.job';
import { OverlayRepository } from '../../src/gold/overlay/overlay.repository';
import { graphRebuildService } from '../../src/app/app';
import { ProjectionOverlays } from '../../src/graph/overlay-projection';
import { goldGraphSource } from '../../src/gold/promotion/gold-graph-source';
import { PromotionRepository } from '../../src/gold/promotion/promotion.repository';
import { Sql } from '../../src/platform/postgres/sql';
import { anEvent } from '../builders/event-input';
import { cypher, dumpNamespace } from '../support/graph-dump';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';

/** Overlays whose fact spans wait for `release`: the batch or page has read its facts when `hasRead` resolves. */
function gated(repo: ProjectionOverlays): { overlays: ProjectionOverlays; hasRead: Promise<void>; release: () => void } {
  let release: () => void = () => undefined;
  let readFacts: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const hasRead = new Promise<void>((resolve) => (readFacts = resolve));
  return {
    overlays: {
      spansOnFacts: async (ids) => {
        readFacts();
        await gate;
        return repo.spansOnFacts(ids);
      },
      spansOnEvents: (ids) => repo.spansOnEvents(ids),
      eventRedactionsIn: (namespaces) => repo.eventRedactionsIn(namespaces),
    },
    hasRead,
    release,
  };
}

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status event { id } } }`;
const PENDING = `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`;

describe('Graph projection: Silver in Neo4j through the outbox, rebuildable and checkable', () => {
  let t: TestApp;
  let graph: GraphRebuildService;
  const ns = uniqueNamespace('graph');
  const other = uniqueNamespace('graph-other');
  let token: string;
  let vimEvent: string;
  let neovimEvent: string;

  const ingest = async (events: unknown[]): Promise<string[]> =>
    (await gqlOk<{ ingestEvents: Array<{ event: { id: string } }> }>(t.url, token, INGEST, { input: events })).ingestEvents.map((e) => e.event.id);
  const derived = async (namespace: string) =>
    eventually(
      async () => (await gqlOk<{ pipelineStatus: { pending: number } }>(t.url, token, PENDING, { ns: namespace })).pipelineStatus.pending === 0,
      `derivation in ${namespace}`,
      60_000,
    );
  const drained = async (namespace: string) =>
    eventually(
      async () => {
        const [row] = (await t.app.ds.query(`SELECT count(*)::int AS n FROM ops.outbox WHERE processed_at IS NULL AND namespace = $1`, [namespace])) as Array<{
          n: number;
        }>;
        return row?.n === 0;
      },
      `the outbox of ${namespace} to drain`,
      120_000,
    );

  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50', PROJECTOR_POLL_MS: '50' });
    graph = graphRebuildService(t.app.ds, t.app.neo4j);
    token = (await createToken(t, [{ namespacePattern: 'graph-*', capabilities: ['INGEST', 'READ', 'LIST'] }])).token;
    [vimEvent] = (await ingest([anEvent(ns).inConversation('c1', 1).by('USER').saying('I use vim for everything').at('2026-01-10T09:00:00.000Z').build()])) as [
      string,
    ];
    await derived(ns);
    [neovimEvent] = (await ingest([
      anEvent(ns).inConversation('c1', 2).by('USER').saying('I switched to neovim last week').at('2026-03-08T09:00:00.000Z').build(),
    ])) as [string];
    await ingest([
      anEvent(ns).inConversation('c1', 3).by('USER').saying('I live in Berlin').at('2026-03-09T09:00:00.000Z').build(),
      anEvent(ns).inConversation('c1', 4).by('USER').saying('My favorite language is TypeScript').at('2026-03-10T09:00:00.000Z').build(),
      anEvent(ns).inConversation('c1', 5).by('USER').saying('I work at Acme with Bob').at('2026-03-11T09:00:00.000Z').build(),
      anEvent(other).inConversation('o1', 1).by('USER').saying('I use emacs for everything').at('2026-03-10T09:00:00.000Z').build(),
    ]);
    await derived(ns);
    await drained(ns);
    // Corroborates an already projected fact: one more source (DERIVED_FROM edge) and confidence on it.
    await ingest([anEvent(ns).inConversation('c2', 1).by('USER').saying('I live in Berlin').at('2026-03-12T09:00:00.000Z').build()]);
    await derived(ns);
    await derived(other);
    await drained(ns);
    await drained(other);
  }, 120_000);
  afterAll(async () => t?.stop());

  it('projects facts with their spans, subjects and the supersession neovim -> vim', async () => {
    const [counts] = (await t.app.ds.query(
      `SELECT (SELECT count(*)::int FROM silver.facts WHERE namespace = $1) AS facts, (SELECT count(*)::int FROM silver.fact_sources s JOIN silver.facts f ON f.id = s.fact_id WHERE f.namespace = $1) AS sources`,
      [ns],
    )) as Array<{ facts: number; sources: number }>;
    const facts = await cypher<{
      id: string;
      statement: string;
      object: string | null;
      validTo: unknown;
      namespace: string;
      factType: string;
      extractionModel: string;
    }>(
      t.app.neo4j,
      `MATCH (f:Fact) WHERE f.namespace = $ns RETURN f.id AS id, f.statement AS statement, f.object AS object, f.validTo AS validTo, f.namespace AS namespace, f.factType AS factType, f.extractionModel AS extractionModel`,
      { ns },
    );
    expect(facts).toHaveLength(counts?.facts as number);
    expect(facts.length).toBeGreaterThanOrEqual(3);
    expect(facts.every((f) => f.namespace === ns && f.factType && f.extractionModel)).toBe(true);
    const vim = facts.find((f) => /\bvim\b/i.test(f.statement) && !/neovim/i.test(f.statement));
    const neovim = facts.find((f) => /neovim/i.test(f.statement));
    expect(vim).toBeDefined();
    expect(neovim).toBeDefined();
    expect(vim?.validTo).not.toBeNull();
    expect(neovim?.validTo).toBeNull();

    const supersedes = await cypher<{ newer: string; older: string }>(
      t.app.neo4j,
      `MATCH (n:Fact)-[:SUPERSEDES]->(o:Fact) WHERE o.namespace = $ns RETURN n.id AS newer, o.id AS older`,
      { ns },
    );
    expect(supersedes).toEqual([{ newer: neovim?.id, older: vim?.id }]);

    const derivedFrom = await cypher<{ fact: string; event: string; spanStart: number; spanEnd: number; quote: string; content: string; kind: string | null }>(
      t.app.neo4j,
      `MATCH (f:Fact)-[d:DERIVED_FROM]->(e:Event) WHERE f.namespace = $ns
       RETURN f.id AS fact, e.id AS event, d.spanStart AS spanStart, d.spanEnd AS spanEnd, d.quote AS quote, e.kind AS kind`,
      { ns },
    );
    expect(derivedFrom).toHaveLength(counts?.sources as number);
    expect(derivedFrom.every((d) => d.kind !== null)).toBe(true); // the Event nodes are complete, not placeholders
    const vimSource = derivedFrom.find((d) => d.fact === vim?.id);
    const neovimSource = derivedFrom.find((d) => d.fact === neovim?.id);
    expect(vimSource?.event).toBe(vimEvent);
    expect(neovimSource?.event).toBe(neovimEvent);
    expect(Number.isInteger(vimSource?.spanStart)).toBe(true);
    const perFact = new Map<string, Set<string>>();
    for (const d of derivedFrom) perFact.set(d.fact, new Set([...(perFact.get(d.fact) ?? []), d.event]));
    expect([...perFact.values()].some((events) => events.size === 2)).toBe(true); // the corroborated Berlin fact
    expect('I use vim for everything'.slice(vimSource?.spanStart, vimSource?.spanEnd)).toBe(vimSource?.quote);
    expect('I switched to neovim last week'.slice(neovimSource?.spanStart, neovimSource?.spanEnd)).toBe(neovimSource?.quote);
    const pgSpans = (await t.app.ds.query(`SELECT span_start, span_end, quote FROM silver.fact_sources WHERE fact_id = $1`, [vim?.id])) as Array<{
      span_start: number;
      span_end: number;
      quote: string;
    }>;
    expect(pgSpans).toEqual([{ span_start: vimSource?.spanStart, span_end: vimSource?.spanEnd, quote: vimSource?.quote }]);

    const about = await cypher<{ fact: string; role: string; name: string; type: string; ns: string }>(
      t.app.neo4j,
      `MATCH (f:Fact)-[a:ABOUT]->(n:Entity) WHERE f.namespace = $ns RETURN f.id AS fact, a.role AS role, n.name AS name, n.type AS type, n.namespace AS ns`,
      { ns },
    );
    const pgAbout = (await t.app.ds.query(
      `SELECT count(*) FILTER (WHERE subject_entity_id IS NOT NULL)::int + count(*) FILTER (WHERE object_entity_id IS NOT NULL)::int AS n FROM silver.facts WHERE namespace = $1`,
      [ns],
    )) as Array<{ n: number }>;
    expect(about).toHaveLength(pgAbout[0]?.n as number);
    expect(about.length).toBeGreaterThan(0);
    expect(about.every((a) => a.ns === ns && a.name && a.type)).toBe(true);
    expect(about.some((a) => a.fact === vim?.id && a.role === 'subject')).toBe(true);

    // Nothing of this namespace leaked into the other one, and vice versa.
    const crossing = await cypher(t.app.neo4j, `MATCH (a)-[r]-(b) WHERE a.namespace = $ns AND b.namespace <> $ns RETURN count(r) AS n`, { ns });
    expect(crossing).toEqual([{ n: 0 }]);
  });

  it('is consistent with Postgres, and a namespace rebuild gives the same graph without touching other namespaces', async () => {
    const check = await graph.checkConsistency(ns);
    expect(check).toMatchObject({ ok: true, missingInNeo4j: [], extraInNeo4j: [] });
    expect(check.postgres.Fact).toBeGreaterThanOrEqual(3);
    expect(check.postgres.SUPERSEDES).toBe(1);
    expect(check.neo4j).toEqual(check.postgres);

    const incremental = await dumpNamespace(t.app.neo4j, ns);
    const otherBefore = await dumpNamespace(t.app.neo4j, other);
    expect(otherBefore.nodes.length).toBeGreaterThan(0);
    const otherIds = await cypher<{ id: string; eid: string }>(
      t.app.neo4j,
      `MATCH (n) WHERE n.namespace = $ns RETURN n.id AS id, elementId(n) AS eid ORDER BY id`,
      { ns: other },
    );

    await t.app.stages.get('projector')?.stop(); // the rebuild alone writes the graph from here
    try {
      const phases: string[] = [];
      const result = await graph.rebuildGraph(ns, { batchSize: 2, onProgress: (p) => phases.push(p.phase) });
      expect(result.deleted).toBe(incremental.nodes.length);
      expect(result.facts).toBe(check.postgres.Fact);
      expect(result.events).toBe(check.postgres.Event);
      expect(new Set(phases)).toEqual(new Set(['delete', 'events', 'entities', 'facts', ...(check.postgres.RELATED > 0 ? ['relationships'] : [])]));

      const rebuilt = await dumpNamespace(t.app.neo4j, ns);
      expect(rebuilt).toEqual(incremental);
      expect((await graph.checkConsistency(ns)).ok).toBe(true);
      // The other namespace's nodes are the very same nodes (not deleted and re-created).
      expect(await cypher(t.app.neo4j, `MATCH (n) WHERE n.namespace = $ns RETURN n.id AS id, elementId(n) AS eid ORDER BY id`, { ns: other })).toEqual(
        otherIds,
      );
      expect(await dumpNamespace(t.app.neo4j, other)).toEqual(otherBefore);
    } finally {
      t.app.stages.get('projector')?.start();
    }
  });

  it('reports what is missing and what is extra', async () => {
    const [fact] = await cypher<{ id: string }>(t.app.neo4j, `MATCH (f:Fact) WHERE f.namespace = $ns RETURN f.id AS id ORDER BY id LIMIT 1`, { ns });
    await t.app.neo4j.executeQuery(`MATCH (f:Fact {id: $id}) DETACH DELETE f`, { id: fact?.id });
    await t.app.neo4j.executeQuery(`CREATE (:Entity {id: 'stray-entity', namespace: $ns})`, { ns });
    const check = await graph.checkConsistency(ns);
    expect(check.ok).toBe(false);
    expect(check.missingInNeo4j).toContain(`Fact:${fact?.id}`);
    expect(check.extraInNeo4j).toEqual(['Entity:stray-entity']);
    expect(check.neo4j.Fact).toBe(check.postgres.Fact - 1);
    await graph.rebuildGraph(ns);
    expect((await graph.checkConsistency(ns)).ok).toBe(true);
  });

  it('changes nothing when the same outbox rows are delivered again', async () => {
    const before = await dumpNamespace(t.app.neo4j, ns);
    const counts = await cypher(
      t.app.neo4j,
      `MATCH (n) WHERE n.namespace = $ns OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n) AS nodes, count(r) AS edges`,
      { ns },
    );
    const replayed: unknown[] = await t.app.ds.query(`UPDATE ops.outbox SET processed_at = NULL WHERE namespace = $1 RETURNING id`, [ns]);
    expect((replayed[0] as unknown[]).length).toBeGreaterThan(5);
    t.app.stages.get('projector')?.wake();
    await drained(ns);
    expect(await dumpNamespace(t.app.neo4j, ns)).toEqual(before);
    expect(
      await cypher(t.app.neo4j, `MATCH (n) WHERE n.namespace = $ns OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n) AS nodes, count(r) AS edges`, { ns }),
    ).toEqual(counts);
    expect((await graph.checkConsistency(ns)).ok).toBe(true);
  });

  it('projects in any order: a fact before its event, entity and superseding fact', async () => {
    const [row] = (await t.app.ds.query(`SELECT f.id FROM silver.facts f WHERE f.namespace = $1 AND f.superseded_by IS NOT NULL LIMIT 1`, [ns])) as Array<{
      id: string;
    }>;
    const before = await dumpNamespace(t.app.neo4j, ns);
    await t.app.stages.get('projector')?.stop();
    try {
      await graph.rebuildGraph(ns); // a clean slate, then delete everything and replay only the old fact's row first
      await t.app.neo4j.executeQuery(`MATCH (n) WHERE n.namespace = $ns DETACH DELETE n`, { ns });
      await t.app.ds.query(`UPDATE ops.outbox SET processed_at = now() WHERE namespace = $1 AND processed_at IS NULL`, [ns]);
      const [ids] = (await t.app.ds.query(
        `INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload) VALUES ($1, 'fact', $2, 'upsert', jsonb_build_object('id', $2::text)) RETURNING id`,
        [ns, row?.id],
      )) as Array<{ id: string }>;
      const job = new ProjectionJob(t.app.ds, t.app.neo4j, 1, { overlays: (tx) => new OverlayRepository(tx) });
      expect(await job.runOnce()).toEqual({ kind: 'success', projected: 1 });
      const placeholders = await cypher<{ labels: string[]; keys: string[] }>(
        t.app.neo4j,
        `MATCH (n) WHERE n.namespace = $ns AND NOT n:Fact OR (n:Fact AND n.namespace = $ns AND n.statement IS NULL) RETURN labels(n) AS labels, keys(n) AS keys`,
        { ns },
      );
      expect(placeholders.length).toBeGreaterThan(0);
      expect(placeholders.every((p) => [...p.keys].sort().join() === 'id,namespace')).toBe(true);
      expect(ids).toBeDefined();
      // Then everything else arrives (events and entities after the fact that pointed at them): the same graph.
      await t.app.ds.query(`UPDATE ops.outbox SET processed_at = NULL WHERE namespace = $1`, [ns]);
    } finally {
      t.app.stages.get('projector')?.start();
    }
    await drained(ns);
    expect(await dumpNamespace(t.app.neo4j, ns)).toEqual(before);
  });

  it('follows a Silver rebuild: retired facts keep their node, the reopened fact loses its stale SUPERSEDES edge', async () => {
    const [old] = (await t.app.ds.query(`SELECT id, superseded_by FROM silver.facts WHERE namespace = $1 AND superseded_by IS NOT NULL`, [ns])) as Array<{
      id: string;
      superseded_by: string;
    }>;
    const job = (
      await gqlOk<{ rebuildSilver: { id: string } }>(
        t.url,
        t.adminToken,
        `mutation($ns: String!, $from: DateTime, $to: DateTime) { rebuildSilver(namespace: $ns, from: $from, to: $to, reason: "graph test") { id } }`,
        {
          ns,
          from: '2026-03-01T00:00:00.000Z',
          to: '2026-03-09T00:00:00.000Z',
        },
      )
    ).rebuildSilver;
    await eventually(
      async () =>
        (await gqlOk<{ job: { status: string } }>(t.url, t.adminToken, `query($id: ID!) { job(id: $id) { status } }`, { id: job.id })).job.status ===
        'succeeded',
      'the Silver rebuild',
      60_000,
    );
    await derived(ns);
    await drained(ns);
    const [now] = (await t.app.ds.query(
      `SELECT id, superseded_by FROM silver.facts WHERE namespace = $1 AND superseded_by IS NOT NULL AND retired_at IS NULL`,
      [ns],
    )) as Array<{ id: string; superseded_by: string }>;
    expect(now?.id).toBe(old?.id); // vim again, now superseded by the re-derived neovim fact
    expect(now?.superseded_by).not.toBe(old?.superseded_by);
    const edges = await cypher<{ newer: string; older: string; retired: unknown }>(
      t.app.neo4j,
      `MATCH (n:Fact)-[:SUPERSEDES]->(o:Fact) WHERE o.namespace = $ns RETURN n.id AS newer, o.id AS older, n.retiredAt AS retired`,
      { ns },
    );
    expect(edges).toEqual([{ newer: now?.superseded_by, older: old?.id, retired: null }]);
    const [retired] = await cypher<{ retiredAt: unknown }>(t.app.neo4j, `MATCH (f:Fact {id: $id}) RETURN f.retiredAt AS retiredAt`, { id: old?.superseded_by });
    expect(retired?.retiredAt).not.toBeNull();
    expect((await graph.checkConsistency(ns)).ok).toBe(true);
    const incremental = await dumpNamespace(t.app.neo4j, ns);
    await graph.rebuildGraph(ns);
    expect(await dumpNamespace(t.app.neo4j, ns)).toEqual(incremental);
  });

  /**
   * Two writers of the graph side by side: `slow` has read the vim fact as current and waits; the
   * supersession commits; the projector (another process) drains; then `slow` writes. The graph must
   * end with the supersession, as a rebuild gives it.
   */
  async function raceOnSupersession(slow: (overlays: (tx: Sql) => ProjectionOverlays, namespace: string) => Promise<unknown>): Promise<void> {
    const race = uniqueNamespace('graph-race');
    await ingest([anEvent(race).inConversation('r1', 1).by('USER').saying('I use vim for everything').at('2026-01-10T09:00:00.000Z').build()]);
    await derived(race);
    await drained(race);
    const [vim] = (await t.app.ds.query(`SELECT id FROM silver.facts WHERE namespace = $1 AND statement ~* '\\mvim\\M'`, [race])) as Array<{ id: string }>;
    expect(vim).toBeDefined();
    const projector = t.app.stages.get('projector');
    await projector?.stop();
    const gate = gated(new OverlayRepository(Sql.of(t.app.ds)));
    try {
      // A pending row of the vim fact, for a drain to claim.
      await t.app.ds.query(
        `INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload) VALUES ($1, 'fact', $2, 'upsert', jsonb_build_object('id', $2::text))`,
        [race, vim?.id],
      );
      const first = slow(() => gate.overlays, race);
      await gate.hasRead;
      await ingest([anEvent(race).inConversation('r1', 2).by('USER').saying('I switched to neovim last week').at('2026-03-08T09:00:00.000Z').build()]);
      await derived(race);
      const [superseded] = (await t.app.ds.query(`SELECT valid_to FROM silver.facts WHERE id = $1`, [vim?.id])) as Array<{ valid_to: Date | null }>;
      expect(superseded?.valid_to).not.toBeNull();
      // Another process's projector drains while the first writer is between its read and its write.
      await new ProjectionJob(t.app.ds, t.app.neo4j, 1000, { overlays: (tx) => new OverlayRepository(tx) }).runOnce();
      gate.release();
      await first;
    } finally {
      gate.release();
      projector?.start();
    }
    projector?.wake();
    await drained(race);
    const [node] = await cypher<{ validTo: unknown; newer: string | null }>(
      t.app.neo4j,
      `MATCH (f:Fact {id: $id}) OPTIONAL MATCH (n:Fact)-[:SUPERSEDES]->(f) RETURN f.validTo AS validTo, n.id AS newer`,
      { id: vim?.id },
    );
    expect(node?.validTo).not.toBeNull();
    expect(node?.newer).not.toBeNull();
    const incremental = await dumpNamespace(t.app.neo4j, race);
    await graph.rebuildGraph(race);
    expect(await dumpNamespace(t.app.neo4j, race)).toEqual(incremental);
  }

  it('keeps the newer state when a drain that read before a supersession would write after the drain that read after it', async () => {
    await raceOnSupersession(async (overlays) => {
      expect(await new ProjectionJob(t.app.ds, t.app.neo4j, 1000, { overlays }).runOnce()).toMatchObject({ kind: 'success' });
    });
  });

  it('keeps the newer state when a graph rebuild that read before a supersession would write after the projector', async () => {
    await raceOnSupersession(async (overlays, race) => {
      const sql = Sql.of(t.app.ds);
      const rebuild = new GraphRebuildService(t.app.ds, t.app.neo4j, { gold: goldGraphSource(new PromotionRepository(sql)), overlays: overlays(sql) });
      expect((await rebuild.rebuildGraph(race)).facts).toBeGreaterThan(0);
    });
  });

  it('refuses a label that is not a plain identifier before it reaches Cypher', async () => {
    const session = t.app.neo4j.session();
    try {
      await expect(deleteProjectedNodes(session, 'Fact) DETACH DELETE n //', ns, 10)).rejects.toThrow(/not a valid Cypher identifier/);
    } finally {
      await session.close();
    }
    expect((await graph.checkConsistency(ns)).ok).toBe(true);
  });
});
