import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Driver } from 'neo4j-driver';
import { Client } from 'pg';
import { cypher } from '../test/support/graph-dump';
import { MAIN, sleep } from './chaos-cluster';
import { gqlAny, GqlResult } from './chaos-load';

/** A pg client that survives nothing but never crashes the bench when PostgreSQL is killed under it. */
export async function ownerClient(url: string): Promise<Client> {
  const c = new Client({ connectionString: url });
  c.on('error', () => undefined);
  await c.connect();
  return c;
}

/** One SQL answer from a short-lived connection, retried while PostgreSQL is down (the chaos kills it). */
export async function sqlRetry<T>(url: () => string, sql: string, params: unknown[], deadlineMs = 300_000): Promise<T[]> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    try {
      const c = await ownerClient(url());
      try {
        return (await c.query(sql, params)).rows as T[];
      } finally {
        await c.end().catch(() => undefined);
      }
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(500);
    }
  }
}

export interface TrustOpsOptions {
  urls: () => string[];
  ownerUrl: () => string;
  /** admin on "*" (requests and executes). */
  requesterToken: string;
  /** approve on "*", created by the bootstrap admin, not by the requester. */
  approverToken: string;
  erase: { namespace: string; eventId: string };
  /** First day of the month before which Bronze partitions are dropped (YYYY-MM-01). */
  retainBefore: string;
  log: (msg: string) => void;
}

export interface TrustOpsResult {
  erasure: { approvalId: string; requestedAtS: number; approvedAtS: number; executedAtS: number; retries: number; destroyedAt: string | null };
  retention: {
    approvalId: string;
    requestedAtS: number;
    approvedAtS: number;
    executedAtS: number;
    retries: number;
    partitions: Array<{ name: string; events: number; namespaces: Array<{ namespace: string; events: number }> }>;
  };
}

const REQUEST = `mutation($input: ApprovalRequestInput!) { requestApproval(input: $input) { id status } }`;
const APPROVE = `mutation($id: ID!) { approve(id: $id, reason: "chaos: second person") { id status } }`;
const DESTROY = `mutation($a: ID!, $e: ID!) { destroyEvent(approvalId: $a, eventId: $e) { id destroyedAt } }`;
const RETAIN = `mutation($a: ID!, $b: DateTime!) { retainBronze(approvalId: $a, before: $b) { name events namespaces { namespace events } } }`;

/**
 * The two irreversible operations through the approval flow while the kills go on: every step is
 * retried until it answers without errors or the stored request shows it already took effect
 * (an answer lost to a kill after the commit).
 */
export async function runTrustOps(opts: TrustOpsOptions, t0: number): Promise<TrustOpsResult> {
  const stats = { transportRetries: 0 };
  let retries = 0;
  const at = () => Math.round((Date.now() - t0) / 100) / 10;
  const statusOf = async (id: string): Promise<string | undefined> =>
    (await sqlRetry<{ status: string }>(opts.ownerUrl, `SELECT status FROM access.approval_requests WHERE id = $1`, [id]))[0]?.status;
  const step = async <T>(
    what: string,
    token: string,
    query: string,
    variables: Record<string, unknown>,
    done?: () => Promise<boolean>,
  ): Promise<T | undefined> => {
    for (let i = 0; ; i += 1) {
      const r: GqlResult<T> = await gqlAny<T>(opts.urls, token, query, variables, stats, 300_000);
      if (r.data && !r.errors?.length) return r.data;
      if (done && (await done())) return undefined;
      retries += 1;
      if (i > 300) throw new Error(`${what}: ${JSON.stringify(r.errors).slice(0, 400)}`);
      if (i % 10 === 0) opts.log(`${what} not through yet (${r.errors?.[0]?.extensions?.code ?? ''} ${r.errors?.[0]?.message ?? ''}); retrying`.slice(0, 300));
      await sleep(1000);
    }
  };
  const approval = async (what: string, input: Record<string, unknown>) => {
    const req = await step<{ requestApproval: { id: string } }>(`${what}: requestApproval`, opts.requesterToken, REQUEST, { input });
    const id = (req as { requestApproval: { id: string } }).requestApproval.id;
    const requestedAtS = at();
    await step(`${what}: approve`, opts.approverToken, APPROVE, { id }, async () => ['APPROVED', 'EXECUTED'].includes((await statusOf(id)) ?? ''));
    return { id, requestedAtS, approvedAtS: at() };
  };

  const e = await approval('erasure', {
    namespace: opts.erase.namespace,
    action: 'DESTROY_EVENT',
    params: { eventId: opts.erase.eventId },
    reason: 'chaos: erasure during kills',
  });
  const eRetries = retries;
  const destroyed = await step<{ destroyEvent: { destroyedAt: string | null } }>(
    'destroyEvent',
    opts.requesterToken,
    DESTROY,
    { a: e.id, e: opts.erase.eventId },
    async () => (await statusOf(e.id)) === 'EXECUTED',
  );
  const erasure = {
    approvalId: e.id,
    requestedAtS: e.requestedAtS,
    approvedAtS: e.approvedAtS,
    executedAtS: at(),
    retries: retries,
    destroyedAt: destroyed?.destroyEvent.destroyedAt ?? null,
  };
  opts.log(`erasure executed at ${erasure.executedAtS} s (${eRetries} retries before execution)`);
  retries = 0;

  const before = `${opts.retainBefore}T00:00:00.000Z`;
  const r = await approval('retention', {
    namespace: '*',
    action: 'RETAIN_BRONZE',
    params: { before: opts.retainBefore },
    reason: 'chaos: retention during kills',
  });
  const retained = await step<{ retainBronze: TrustOpsResult['retention']['partitions'] }>(
    'retainBronze',
    opts.requesterToken,
    RETAIN,
    { a: r.id, b: before },
    async () => (await statusOf(r.id)) === 'EXECUTED',
  );
  const retention = {
    approvalId: r.id,
    requestedAtS: r.requestedAtS,
    approvedAtS: r.approvedAtS,
    executedAtS: at(),
    retries,
    partitions: retained?.retainBronze ?? [],
  };
  opts.log(`retention executed at ${retention.executedAtS} s: ${JSON.stringify(retention.partitions.map((p) => [p.name, p.events]))}`);
  return { erasure, retention };
}

export interface MarkerCheck {
  marker: string;
  /** Tables (schema.table) whose rows still hold the marker, with counts. */
  postgres: Record<string, number>;
  neo4jNodes: number;
  neo4jRelationships: number;
  /** The erased event's row is a tombstone: empty content, no payload. */
  bronzeRowScrubbed: boolean;
  found: number;
}

/** Looks for the erased text in every row of every table (as text) and in every Neo4j node and relationship. */
export async function markerCheck(pg: Client, driver: Driver, marker: string, erasedId: string): Promise<MarkerCheck> {
  const { rows: tables } = await pg.query<{ s: string; t: string }>(
    `SELECT n.nspname AS s, c.relname AS t FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') ORDER BY 1, 2`,
  );
  const postgres: Record<string, number> = {};
  for (const { s, t } of tables) {
    const q = `SELECT count(*)::int AS n FROM "${s}"."${t}" x WHERE x::text ILIKE $1`;
    const n = ((await pg.query<{ n: number }>(q, [`%${marker}%`])).rows[0]?.n ?? 0) as number;
    if (n > 0) postgres[`${s}.${t}`] = n;
  }
  const row = (await pg.query<{ content: string; raw: string | null }>(`SELECT content, raw_payload::text AS raw FROM bronze.events WHERE id = $1`, [erasedId]))
    .rows[0];
  const needle = marker.toLowerCase();
  const nodes = await cypher<{ p: Record<string, unknown> }>(driver, `MATCH (n) RETURN properties(n) AS p`);
  const rels = await cypher<{ p: Record<string, unknown> }>(driver, `MATCH ()-[r]->() RETURN properties(r) AS p`);
  const holds = (p: Record<string, unknown>) => JSON.stringify(p).toLowerCase().includes(needle);
  const neo4jNodes = nodes.filter((n) => holds(n.p)).length;
  const neo4jRelationships = rels.filter((r) => holds(r.p)).length;
  const bronzeRowScrubbed = row !== undefined && row.content === '' && row.raw === null;
  const found = Object.values(postgres).reduce((a, b) => a + b, 0) + neo4jNodes + neo4jRelationships + (bronzeRowScrubbed ? 0 : 1);
  return { marker, postgres, neo4jNodes, neo4jRelationships, bronzeRowScrubbed, found };
}

export interface RetentionCheck {
  before: string;
  retainedNamespace: string;
  /** Events of the retained namespace (all older than `before`) still in Bronze. */
  retainedEventsLeft: number;
  /** Any Bronze event older than `before`, any namespace. */
  eventsBeforeCutLeft: number;
  /** The events the retention reported dropped for the retained namespace vs. those acknowledged. */
  reportedDropped: number;
  acknowledgedOld: number;
  logged: number;
  ok: boolean;
}

export async function retentionCheck(pg: Client, ns: string, before: string, acknowledgedOld: number, reportedDropped: number): Promise<RetentionCheck> {
  const r = (
    await pg.query<{ left: number; older: number; logged: number }>(
      `SELECT (SELECT count(*) FROM bronze.events WHERE namespace = $1)::int AS left,
              (SELECT count(*) FROM bronze.events WHERE occurred_at < $2::timestamptz)::int AS older,
              (SELECT count(*) FROM bronze.retention_log)::int AS logged`,
      [ns, before],
    )
  ).rows[0] as { left: number; older: number; logged: number };
  return {
    before,
    retainedNamespace: ns,
    retainedEventsLeft: r.left,
    eventsBeforeCutLeft: r.older,
    reportedDropped,
    acknowledgedOld,
    logged: r.logged,
    ok: r.left === 0 && r.older === 0 && reportedDropped === acknowledgedOld && r.logged > 0,
  };
}

export interface ChainCheck {
  namespace: string;
  exitCode: number;
  output: string;
  ok: boolean;
}

/** `medallion verify --namespace NS` (the CLI, on the cluster's PostgreSQL): exit 0 intact, 4 broken. */
export async function chainVerify(ownerUrl: string, runtimeUrl: string, namespace: string): Promise<ChainCheck> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-chaos-verify-'));
  try {
    const child = spawn(process.execPath, [MAIN, 'verify', '--namespace', namespace], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        DATABASE_URL: ownerUrl,
        DATABASE_RUNTIME_URL: runtimeUrl,
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exitCode = await new Promise<number>((r) => child.on('exit', (code) => r(code ?? -1)));
    const line = output
      .split('\n')
      .filter((l) => l.includes('namespace ') || l.includes('chain'))
      .join(' ')
      .trim();
    return { namespace, exitCode, output: (line || output).slice(0, 400), ok: exitCode === 0 };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Live facts of a namespace as statement + provenance (source keys and quotes), no ids. */
export async function factProvenance(pg: Client, namespaces: readonly string[], rename: (ns: string) => string = (ns) => ns): Promise<string[]> {
  const { rows } = await pg.query<{ namespace: string; statement: string; sources: string | null }>(
    `SELECT f.namespace, f.statement,
            (SELECT string_agg(coalesce(k.source, '?') || '/' || coalesce(k.source_event_id, s.event_id::text) || ':' || coalesce(s.quote, ''), ' | '
                               ORDER BY k.source, k.source_event_id, s.quote)
               FROM silver.fact_sources s LEFT JOIN bronze.event_keys k ON k.event_id = s.event_id WHERE s.fact_id = f.id) AS sources
       FROM silver.facts f WHERE f.namespace = ANY($1) AND f.retired_at IS NULL AND f.valid_to IS NULL`,
    [namespaces],
  );
  return rows.map((r) => `${rename(r.namespace)} :: ${r.statement} :: ${r.sources ?? ''}`).sort();
}

export interface SilverCheck {
  liveFacts: number;
  freshFacts: number;
  onlyLive: number;
  onlyFresh: number;
  examplesOnlyLive: string[];
  examplesOnlyFresh: string[];
  ok: boolean;
}

/** Multiset difference of live Silver and the fresh derivation (statement + provenance). */
export function compareSilver(live: readonly string[], fresh: readonly string[]): SilverCheck {
  const count = (xs: readonly string[]) => xs.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map<string, number>());
  const a = count(live);
  const b = count(fresh);
  const minus = (x: Map<string, number>, y: Map<string, number>) => [...x].flatMap(([k, n]) => Array<string>(Math.max(0, n - (y.get(k) ?? 0))).fill(k));
  const onlyLive = minus(a, b);
  const onlyFresh = minus(b, a);
  return {
    liveFacts: live.length,
    freshFacts: fresh.length,
    onlyLive: onlyLive.length,
    onlyFresh: onlyFresh.length,
    examplesOnlyLive: onlyLive.slice(0, 5),
    examplesOnlyFresh: onlyFresh.slice(0, 5),
    ok: onlyLive.length === 0 && onlyFresh.length === 0 && live.length > 0,
  };
}

export interface SurvivingEvent {
  namespace: string;
  source: string;
  source_event_id: string;
  kind: string;
  role: string | null;
  actor: string | null;
  conversation_id: string | null;
  sequence_num: number | null;
  content: string;
  occurred_at: Date;
  /** Its ingest transaction (when it began): events of one request share it. */
  enqueued_at: Date;
}

/**
 * The Bronze events that survived (not erased, not retained away), in the order derivation takes
 * them (docs/silver.md "Order"): by ingest transaction, within one in time order.
 */
export async function survivingEvents(pg: Client, namespaces: readonly string[]): Promise<SurvivingEvent[]> {
  const { rows } = await pg.query<SurvivingEvent>(
    `SELECT e.namespace, e.source, e.source_event_id, e.kind, e.role, e.actor, e.conversation_id, e.sequence_num, e.content, e.occurred_at, q.enqueued_at
       FROM bronze.events e JOIN ops.derivation_queue q ON q.event_id = e.id
      WHERE e.namespace = ANY($1) AND NOT EXISTS (SELECT 1 FROM bronze.event_tombstones t WHERE t.event_id = e.id)
      ORDER BY q.enqueued_at, e.occurred_at, e.conversation_id, e.sequence_num, e.id`,
    [namespaces],
  );
  return rows;
}

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { index status code } }`;

/**
 * Ingests the surviving events into a fresh service (namespaces renamed by `to`) as they reached
 * Bronze: one request per ingest transaction of the run, in their order, so the fresh service
 * derives them in the order the live one did (docs/silver.md "Order"). Feeding them 25 a request
 * by `ingested_at` put a late event and the newer ones ingested before it into one request, derived
 * in time order: another order than the live one, so another outcome.
 */
export async function ingestFresh(urls: () => string[], token: string, events: readonly SurvivingEvent[], to: (ns: string) => string): Promise<number> {
  const stats = { transportRetries: 0 };
  let stored = 0;
  const requests: SurvivingEvent[][] = [];
  for (const e of events) {
    const last = requests.at(-1);
    const head = last?.[0];
    if (last && head && head.enqueued_at.getTime() === e.enqueued_at.getTime() && head.namespace === e.namespace && last.length < 25) last.push(e);
    else requests.push([e]);
  }
  for (const request of requests) {
    const input = request.map((e) => ({
      namespace: to(e.namespace),
      source: e.source,
      sourceEventId: e.source_event_id,
      kind: e.kind.toUpperCase(),
      ...(e.role ? { role: e.role.toUpperCase() } : {}),
      ...(e.actor ? { actor: e.actor } : {}),
      ...(e.conversation_id ? { conversationId: e.conversation_id } : {}),
      ...(e.sequence_num !== null ? { sequenceNum: e.sequence_num } : {}),
      content: e.content,
      occurredAt: e.occurred_at.toISOString(),
    }));
    const r = await gqlAny<{ ingestEvents: Array<{ status: string; code: string | null }> }>(urls, token, INGEST, { input }, stats);
    if (!r.data) throw new Error(`fresh ingest: ${JSON.stringify(r.errors).slice(0, 400)}`);
    const bad = r.data.ingestEvents.filter((x) => x.status !== 'CREATED' && x.status !== 'DUPLICATE');
    if (bad.length > 0) throw new Error(`fresh ingest refused: ${JSON.stringify(bad[0])}`);
    stored += r.data.ingestEvents.length;
  }
  return stored;
}
