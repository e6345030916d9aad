import neo4j, { Driver } from 'neo4j-driver';
import { Client } from 'pg';
import { dumpNamespace } from '../test/support/graph-dump';
import { sleep } from './chaos-cluster';
import { Acks, gqlAny } from './chaos-load';

/** What is still in flight across the namespaces of the run. */
export async function backlog(pg: Client, namespaces: readonly string[]): Promise<{ pending: number; failed: number; outbox: number; jobs: number }> {
  const { rows } = await pg.query(
    `SELECT (SELECT count(*) FROM ops.derivation_queue WHERE namespace = ANY($1) AND status = 'pending')::int AS pending,
            (SELECT count(*) FROM ops.derivation_queue WHERE namespace = ANY($1) AND status = 'failed')::int AS failed,
            (SELECT count(*) FROM ops.outbox WHERE processed_at IS NULL)::int AS outbox,
            (SELECT count(*) FROM ops.jobs WHERE status = 'running' OR (status = 'queued' AND run_at <= now()))::int AS jobs`,
    [namespaces],
  );
  return rows[0] as { pending: number; failed: number; outbox: number; jobs: number };
}

/** Waits until nothing is pending, failed, unprojected or running three polls in a row. */
export async function settle(
  pg: Client,
  namespaces: readonly string[],
  timeoutMs: number,
  log: (m: string) => void,
): Promise<{ ms: number; settled: boolean; last: unknown }> {
  const t0 = Date.now();
  let quiet = 0;
  let last = await backlog(pg, namespaces);
  let lastLog = 0;
  while (Date.now() - t0 < timeoutMs) {
    last = await backlog(pg, namespaces);
    quiet = last.pending + last.failed + last.outbox + last.jobs === 0 ? quiet + 1 : 0;
    if (quiet >= 3) return { ms: Date.now() - t0, settled: true, last };
    if (Date.now() - lastLog > 15_000) {
      lastLog = Date.now();
      log(`settling: ${JSON.stringify(last)}`);
    }
    await sleep(1000);
  }
  return { ms: Date.now() - t0, settled: false, last };
}

/** Overlays and approval requests as stored (to count before and after the settle and rebuild). */
export async function goldCounts(pg: Client, namespaces: readonly string[]): Promise<{ overlays: number; approvals: number; approved: number }> {
  const { rows } = await pg.query(
    `SELECT (SELECT count(DISTINCT id) FROM gold.overlays WHERE namespace = ANY($1))::int AS overlays,
            (SELECT count(*) FROM access.approval_requests WHERE namespace = ANY($1))::int AS approvals,
            (SELECT count(*) FROM access.approval_requests WHERE namespace = ANY($1) AND status = 'APPROVED')::int AS approved`,
    [namespaces],
  );
  return rows[0] as { overlays: number; approvals: number; approved: number };
}

export interface ChaosChecks {
  acknowledgedEvents: number;
  acknowledgedMissingInBronze: number;
  acknowledgedWithOtherIdInBronze: number;
  bronzeEvents: number;
  storedButUnacknowledged: number;
  duplicateEventKeys: number;
  duplicateEventRows: number;
  /** Bronze rows that are not the event their idempotency key (bronze.event_keys) names: a second copy of a key under another id. */
  eventsNotUnderTheirKey: number;
  liveFacts: number;
  /** Two live facts of one namespace with the same statement and the same set of source events. */
  duplicateFacts: number;
  /** Live facts sharing a statement in a namespace, whatever their sources (informative). */
  sameStatementLiveFacts: number;
  eventsDerived: number;
  eventsNotDerived: number;
  eventsWithoutQueueRow: number;
  deadLettersOpen: number;
  graph: Array<{
    namespace: string;
    consistent: boolean;
    missingInNeo4j: number;
    extraInNeo4j: number;
    nodes: number;
    edges: number;
    equalToRebuild: boolean;
    diff: number;
    /** The first differing elements (node: [labels, properties]; edge: [from, type, to, properties]), so a difference can be read. */
    onlyIncremental?: string[];
    onlyRebuilt?: string[];
  }>;
  overlaysAcknowledged: number;
  overlaysLost: number;
  approvalsAcknowledged: number;
  approvalsLost: number;
  approvedAcknowledged: number;
  approvedNoLongerApproved: number;
}

const CONSISTENCY = `query($ns: String!) { graphConsistency(namespace: $ns) { ok missingInNeo4j extraInNeo4j } }`;
const REBUILD = `mutation($ns: String!) { rebuildGraph(namespace: $ns, reason: "chaos check") { id } }`;
const JOB = `query($id: ID!) { job(id: $id) { status error } }`;

/** Compares the incremental graph with a rebuild of it, per namespace, through the API's own paths. */
export async function graphChecks(
  pg: Client,
  driver: Driver,
  urls: () => string[],
  adminToken: string,
  namespaces: readonly string[],
): Promise<ChaosChecks['graph']> {
  const stats = { transportRetries: 0 };
  const out: ChaosChecks['graph'] = [];
  for (const ns of namespaces) {
    const c = await gqlAny<{ graphConsistency: { ok: boolean; missingInNeo4j: string[]; extraInNeo4j: string[] } }>(
      urls,
      adminToken,
      CONSISTENCY,
      { ns },
      stats,
    );
    if (!c.data) throw new Error(`graphConsistency: ${JSON.stringify(c.errors)}`);
    const incremental = await dumpNamespace(driver, ns);
    const job = await gqlAny<{ rebuildGraph: { id: string } }>(urls, adminToken, REBUILD, { ns }, stats);
    if (!job.data) throw new Error(`rebuildGraph: ${JSON.stringify(job.errors)}`);
    for (let i = 0; ; i += 1) {
      const j = await gqlAny<{ job: { status: string; error: string | null } }>(urls, adminToken, JOB, { id: job.data.rebuildGraph.id }, stats);
      if (j.data?.job.status === 'succeeded') break;
      if (j.data?.job.status === 'failed' || i > 600) throw new Error(`rebuildGraph job ${j.data?.job.status ?? '?'}: ${j.data?.job.error ?? ''}`);
      await sleep(500);
    }
    await settle(pg, namespaces, 60_000, () => undefined);
    const rebuilt = await dumpNamespace(driver, ns);
    const a = new Set([...incremental.nodes, ...incremental.edges]);
    const b = new Set([...rebuilt.nodes, ...rebuilt.edges]);
    const onlyIncremental = [...a].filter((x) => !b.has(x));
    const onlyRebuilt = [...b].filter((x) => !a.has(x));
    const diff = onlyIncremental.length + onlyRebuilt.length;
    out.push({
      namespace: ns,
      consistent: c.data.graphConsistency.ok,
      missingInNeo4j: c.data.graphConsistency.missingInNeo4j.length,
      extraInNeo4j: c.data.graphConsistency.extraInNeo4j.length,
      nodes: incremental.nodes.length,
      edges: incremental.edges.length,
      equalToRebuild: diff === 0,
      diff,
      ...(diff > 0 ? { onlyIncremental: onlyIncremental.slice(0, 8), onlyRebuilt: onlyRebuilt.slice(0, 8) } : {}),
    });
  }
  return out;
}

/** Every check of issue 24 item 6, after the run settled. */
export async function runChecks(
  pg: Client,
  neo4jConn: { uri: string; password: string },
  urls: () => string[],
  adminToken: string,
  namespaces: readonly string[],
  acks: Acks,
): Promise<ChaosChecks> {
  const stored = await storeChecks(pg, namespaces, acks);
  const driver = neo4j.driver(neo4jConn.uri, neo4j.auth.basic('neo4j', neo4jConn.password));
  try {
    return { ...stored, graph: await graphChecks(pg, driver, urls, adminToken, namespaces) };
  } finally {
    await driver.close();
  }
}

/** The PostgreSQL checks alone, on whatever `pg` sees (the self-test runs them inside a transaction with a planted defect). */
export async function storeChecks(pg: Client, namespaces: readonly string[], acks: Acks): Promise<Omit<ChaosChecks, 'graph'>> {
  const acked = [...acks.events.values()];
  const ids = acked.map((e) => e.id);
  const one = async <T>(sql: string, params: unknown[]): Promise<T> => (await pg.query(sql, params)).rows[0] as T;

  const bronze = await one<{ found: number; total: number; dupKeys: number; dupRows: number; strays: number }>(
    `SELECT (SELECT count(*) FROM bronze.events WHERE id = ANY($2::uuid[]))::int AS found,
            (SELECT count(*) FROM bronze.events WHERE namespace = ANY($1))::int AS total,
            (SELECT count(*) FROM (SELECT 1 FROM bronze.events WHERE namespace = ANY($1) GROUP BY namespace, source, source_event_id HAVING count(*) > 1) d)::int AS "dupKeys",
            (SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM bronze.events WHERE namespace = ANY($1) GROUP BY namespace, source, source_event_id HAVING count(*) > 1) d)::int AS "dupRows",
            (SELECT count(*) FROM bronze.events e WHERE e.namespace = ANY($1) AND NOT EXISTS (
               SELECT 1 FROM bronze.event_keys k WHERE k.namespace = e.namespace AND k.source = e.source AND k.source_event_id = e.source_event_id AND k.event_id = e.id))::int AS strays`,
    [namespaces, ids],
  );
  const { rows: keyRows } = await pg.query(`SELECT namespace, source, source_event_id, event_id FROM bronze.event_keys WHERE namespace = ANY($1)`, [
    namespaces,
  ]);
  const keyId = new Map(keyRows.map((r: Record<string, string>) => [`${r.namespace}\u0000${r.source}\u0000${r.source_event_id}`, r.event_id]));
  const otherId = acked.filter((e) => keyId.get(`${e.namespace}\u0000${e.source}\u0000${e.sourceEventId}`) !== e.id).length;

  const facts = await one<{ live: number; dup: number; same: number }>(
    `WITH live AS (
       SELECT f.namespace, f.statement,
              (SELECT string_agg(DISTINCT s.event_id::text, ',' ORDER BY s.event_id::text) FROM silver.fact_sources s WHERE s.fact_id = f.id) AS sources
         FROM silver.facts f WHERE f.namespace = ANY($1) AND f.retired_at IS NULL AND f.valid_to IS NULL)
     SELECT (SELECT count(*) FROM live)::int AS live,
            (SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM live GROUP BY namespace, statement, sources HAVING count(*) > 1) d)::int AS dup,
            (SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM live GROUP BY namespace, statement HAVING count(*) > 1) d)::int AS same`,
    [namespaces],
  );
  const derivation = await one<{ done: number; notDone: number; noRow: number; dead: number }>(
    `SELECT (SELECT count(*) FROM ops.derivation_queue WHERE event_id = ANY($2::uuid[]) AND status = 'done')::int AS done,
            (SELECT count(*) FROM ops.derivation_queue WHERE event_id = ANY($2::uuid[]) AND status <> 'done')::int AS "notDone",
            (SELECT count(*) FROM bronze.events e WHERE e.namespace = ANY($1) AND NOT EXISTS (SELECT 1 FROM ops.derivation_queue q WHERE q.event_id = e.id))::int AS "noRow",
            (SELECT count(*) FROM silver.dead_letters WHERE namespace = ANY($1) AND resolved_at IS NULL)::int AS dead`,
    [namespaces, ids],
  );
  const overlays = await one<{ found: number }>(`SELECT count(DISTINCT id)::int AS found FROM gold.overlays WHERE id = ANY($1::uuid[])`, [[...acks.overlays]]);
  const approvals = await one<{ found: number; approved: number }>(
    `SELECT (SELECT count(*) FROM access.approval_requests WHERE id = ANY($1::uuid[]))::int AS found,
            (SELECT count(*) FROM access.approval_requests WHERE id = ANY($2::uuid[]) AND status = 'APPROVED')::int AS approved`,
    [[...acks.approvalsRequested], [...acks.approvalsApproved]],
  );

  return {
    acknowledgedEvents: acked.length,
    acknowledgedMissingInBronze: acked.length - bronze.found,
    acknowledgedWithOtherIdInBronze: otherId,
    bronzeEvents: bronze.total,
    storedButUnacknowledged: bronze.total - bronze.found,
    duplicateEventKeys: bronze.dupKeys,
    duplicateEventRows: bronze.dupRows,
    liveFacts: facts.live,
    duplicateFacts: facts.dup,
    sameStatementLiveFacts: facts.same,
    eventsDerived: derivation.done,
    eventsNotDerived: derivation.notDone,
    eventsWithoutQueueRow: derivation.noRow,
    deadLettersOpen: derivation.dead,
    eventsNotUnderTheirKey: bronze.strays,
    overlaysAcknowledged: acks.overlays.size,
    overlaysLost: acks.overlays.size - overlays.found,
    approvalsAcknowledged: acks.approvalsRequested.size,
    approvalsLost: acks.approvalsRequested.size - approvals.found,
    approvedAcknowledged: acks.approvalsApproved.size,
    approvedNoLongerApproved: acks.approvalsApproved.size - approvals.approved,
  };
}
