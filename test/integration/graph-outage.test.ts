import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { graphRebuildService } from '../../src/app/app';
import { freePort } from '../../src/platform/local-services/free-port';
import { LocalNeo4j, startLocalNeo4j } from '../../src/platform/local-services/local-neo4j';
import { anEvent } from '../builders/event-input';
import { dumpNamespace } from '../support/graph-dump';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`;

/** This file runs its own Neo4j, so it can stop and start it without disturbing other tests. */
describe('Neo4j outage: ingest and derivation go on, the projector catches up', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-outage-'));
  const password = 'outage-password';
  let port: number;
  let neo4j: LocalNeo4j;
  let t: TestApp;
  const ns = uniqueNamespace('outage');
  let token: string;
  const start = () =>
    startLocalNeo4j({
      dataDir,
      cacheDir: path.resolve(process.env.CACHE_DIR ?? '.cache'),
      javaHome: process.env.JAVA_HOME || undefined,
      password,
      port,
      heapMb: 512,
    });

  /** The service on this file's Neo4j (hashing embedder, short waits). */
  const startApp = () =>
    startTestApp({
      NEO4J_URI: neo4j.uri,
      NEO4J_USER: neo4j.user,
      NEO4J_PASSWORD: password,
      OFFLINE_EMBEDDER: 'hashing',
      DERIVE_MAX_WAIT_MS: '0',
      DERIVE_POLL_MS: '50',
      PROJECTOR_POLL_MS: '100',
      // No automatic promotion: it runs 5 s after the namespace settles, and under load it landed
      // between the incremental dump and the rebuild, which then held a Gold entity the first did not.
      GOLD_PROMOTE_EVERY_SECONDS: '0',
    });

  beforeAll(async () => {
    port = await freePort();
    neo4j = await start();
    t = await startApp();
    token = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'READ', 'LIST'] }])).token;
  });
  afterAll(async () => {
    await t?.stop();
    await neo4j?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('loses nothing while Neo4j is down and ends equal to a rebuild', async () => {
    const pendingOutbox = async () =>
      ((await t.app.ds.query(`SELECT count(*)::int AS n FROM ops.outbox WHERE processed_at IS NULL AND namespace = $1`, [ns])) as Array<{ n: number }>)[0]?.n ??
      -1;
    await gqlOk(t.url, token, INGEST, { input: [anEvent(ns).by('USER').saying('I use vim for everything').at('2026-01-01T10:00:00Z').build()] });
    await eventually(
      async () => (await pendingOutbox()) === 0 && (await t.app.ds.query(`SELECT 1 FROM silver.facts WHERE namespace = $1`, [ns])).length > 0,
      'the first fact in the graph',
      30_000,
    );

    await neo4j.stop();
    const health = await fetch(`${t.url}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ postgres: { ok: true }, neo4j: { ok: false } });

    const lines = [
      'I switched to neovim last week',
      'I live in Berlin',
      'I work at Acme',
      'We plan to migrate to PostgreSQL next month',
      'I no longer use Docker',
      'I prefer tabs over spaces',
    ];
    const res = await gqlOk<{ ingestEvents: Array<{ status: string }> }>(t.url, token, INGEST, {
      input: lines.map((l, i) =>
        anEvent(ns)
          .by('USER')
          .saying(l)
          .at(new Date(Date.UTC(2026, 1, 1 + i)).toISOString())
          .build(),
      ),
    });
    expect(res.ingestEvents.map((r) => r.status)).toEqual(Array(lines.length).fill('CREATED'));
    await eventually(
      async () =>
        (await gqlOk<{ pipelineStatus: { pending: number } }>(t.url, token, `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`, { ns }))
          .pipelineStatus.pending === 0,
      'derivation without Neo4j',
    );
    const backlog = await pendingOutbox();
    expect(backlog).toBeGreaterThan(lines.length); // events, facts, entities, supersessions wait

    neo4j = await start();
    await eventually(async () => (await pendingOutbox()) === 0, 'the projector to catch up', 60_000);
    expect((await fetch(`${t.url}/health`)).status).toBe(200);

    const graph = graphRebuildService(t.app.ds, t.app.neo4j);
    const check = await graph.checkConsistency(ns);
    expect(check.missingInNeo4j).toEqual([]);
    expect(check.extraInNeo4j).toEqual([]);
    expect(check.ok).toBe(true);
    const incremental = await dumpNamespace(t.app.neo4j, ns);
    await graph.rebuildGraph(ns);
    expect(await dumpNamespace(t.app.neo4j, ns)).toEqual(incremental);

    // The same through the API: a rebuild job, then the consistency report.
    const admin = (await createToken(t, [{ namespacePattern: ns, capabilities: ['ADMIN'] }], 'graph-admin')).token;
    const refused = await gql(t.url, admin, `mutation { rebuildGraph(reason: "everything") { id } }`);
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const job = (
      await gqlOk<{ rebuildGraph: { id: string } }>(t.url, admin, `mutation($ns: String) { rebuildGraph(namespace: $ns, reason: "after the outage") { id } }`, {
        ns,
      })
    ).rebuildGraph;
    const finished = await eventually(
      async () => {
        const j = (
          await gqlOk<{ job: { status: string; message: string | null } }>(t.url, admin, `query($id: ID!) { job(id: $id) { status message } }`, { id: job.id })
        ).job;
        return j.status === 'succeeded' || j.status === 'failed' ? j : undefined;
      },
      'the graph rebuild job',
      60_000,
    );
    expect(finished.status).toBe('succeeded');
    expect(finished.message).toMatch(/projected 7 events/);
    const report = (
      await gqlOk<{ graphConsistency: { ok: boolean; counts: Array<{ kind: string; postgres: number; neo4j: number }> } }>(
        t.url,
        token,
        `query($ns: String!) { graphConsistency(namespace: $ns) { ok counts { kind postgres neo4j } } }`,
        { ns },
      )
    ).graphConsistency;
    expect(report.ok).toBe(true);
    expect(report.counts.every((c) => c.postgres === c.neo4j)).toBe(true);
    expect(await dumpNamespace(t.app.neo4j, ns)).toEqual(incremental);
    process.stderr.write(`[outage] backlog while down: ${backlog} outbox rows; consistency after catch-up: ${JSON.stringify(check.postgres)}\n`);
  });

  it('starts an API and worker while Neo4j is down: ingest and derivation serve, the projector catches up once it answers', async () => {
    await neo4j.stop();
    const later = uniqueNamespace('outage-start');
    // A process (re)started during the outage: before, applying the graph schema failed its start.
    const t2 = await startApp();
    try {
      const health = await fetch(`${t2.url}/health`);
      expect(health.status).toBe(503);
      expect(await health.json()).toMatchObject({ postgres: { ok: true }, neo4j: { ok: false } });
      const tok = (await createToken(t2, [{ namespacePattern: later, capabilities: ['INGEST', 'READ', 'LIST', 'SEARCH'] }])).token;
      const res = await gqlOk<{ ingestEvents: Array<{ status: string }> }>(t2.url, tok, INGEST, {
        input: [anEvent(later).by('USER').saying('I live in Lisbon').at('2026-03-01T10:00:00Z').build()],
      });
      expect(res.ingestEvents.map((r) => r.status)).toEqual(['CREATED']);
      await eventually(
        async () => (await t2.app.ds.query(`SELECT 1 FROM silver.facts WHERE namespace = $1`, [later])).length > 0,
        'derivation while Neo4j has been down since the start',
        30_000,
      );

      neo4j = await start();
      // The schema is applied in the background and the projector starts: the backlog drains.
      await eventually(
        async () =>
          (
            (await t2.app.ds.query(`SELECT count(*)::int AS n FROM ops.outbox WHERE processed_at IS NULL AND namespace = $1`, [later])) as Array<{ n: number }>
          )[0]?.n === 0,
        'the projector of the process started during the outage to catch up',
        90_000,
      );
      expect((await fetch(`${t2.url}/health`)).status).toBe(200);
      const check = await graphRebuildService(t2.app.ds, t2.app.neo4j).checkConsistency(later);
      expect(check.ok).toBe(true);
      const hits = await gqlOk<{ searchMemory: Array<{ kind: string }> }>(
        t2.url,
        tok,
        `query($ns: String!) { searchMemory(namespace: $ns, query: "Lisbon") { kind } }`,
        {
          ns: later,
        },
      );
      expect(hits.searchMemory.length).toBeGreaterThan(0);
    } finally {
      await t2.stop();
    }
  }, 240_000);
});
