import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import neo4j from 'neo4j-driver';
import { Client } from 'pg';
import { ChaosCluster, ChaosNeo4j, serviceEnv, sleep, Supervised } from './chaos-cluster';
import { ChaosChecks, goldCounts, runChecks, settle } from './chaos-checks';
import { gqlAny, pick, seeded, startLoad } from './chaos-load';
import { ChaosPostgres } from './chaos-postgres';
import { PlantedResult, selfTest } from './chaos-selftest';
import {
  ChainCheck,
  chainVerify,
  compareSilver,
  factProvenance,
  ingestFresh,
  MarkerCheck,
  markerCheck,
  ownerClient,
  RetentionCheck,
  retentionCheck,
  runTrustOps,
  SilverCheck,
  survivingEvents,
  TrustOpsResult,
} from './chaos-trust';
import { freePort } from '../src/platform/local-services/free-port';
import { report } from './harness';

export type KillTarget = 'api' | 'worker' | 'neo4j' | 'postgres';

export interface ChaosOptions {
  /** kill -9s in all (each kind at least once when ≥ 3). */
  kills: number;
  seed: number;
  postgres: ChaosPostgres;
  /** Plant each check's defect after the run and show the check reports it (chaos-selftest.ts). */
  selfTest?: boolean;
  /** Pause between kills, uniform in [min, max] ms. */
  gapMs: readonly [number, number];
  settleTimeoutMs?: number;
  log?: (msg: string) => void;
}

export interface KillRecord {
  n: number;
  atSeconds: number;
  target: string;
  pid: number | undefined;
  /** Until it answered again (API: /health; worker: running; Neo4j: Bolt). */
  backAfterMs: number;
}

export interface ChaosFigures {
  seed: number;
  kills: { total: number; api: number; worker: number; neo4j: number; postgres: number; log: KillRecord[] };
  load: {
    seconds: number;
    ingestRequests: number;
    transportRetries: number;
    graphqlErrors: number;
    rejected: number;
    duplicateResendsWithOtherId: number;
    overlays: number;
    approvalsRequested: number;
    approvalsApproved: number;
    promotions: number;
  };
  unexpectedExits: number;
  settle: { ms: number; settled: boolean; last: unknown };
  goldBefore: { overlays: number; approvals: number; approved: number };
  goldAfter: { overlays: number; approvals: number; approved: number };
  checks: ChaosChecks;
  /** The erasure and the retention, run through the approval flow while the kills went on. */
  trustOps: (TrustOpsResult & { killsDuring: number[] }) | { error: string };
  /** Whether the erased event's text was derived into Silver before the erasure (so the marker check is not vacuous). */
  markerFactsBeforeErasure: number;
  erasedTextNowhere: MarkerCheck;
  retention: RetentionCheck & { neo4jNodesOfRetainedNamespace: number; liveFactsOfRetainedNamespace: number };
  chain: ChainCheck[];
  silverEqualsFreshDerivation: SilverCheck & { freshEvents: number; freshSettle: unknown };
  selfTest?: PlantedResult[];
  ok: boolean;
}

/** The order of kill targets: one of each kind first (shuffled), then API and workers twice as often as Neo4j and PostgreSQL. */
export function killPlan(kills: number, rnd: () => number): KillTarget[] {
  const first: KillTarget[] = ['api', 'worker', 'neo4j', 'postgres'].sort(() => rnd() - 0.5) as KillTarget[];
  const rest: KillTarget[] = Array.from({ length: Math.max(0, kills - 4) }, () =>
    pick(rnd, ['api', 'api', 'worker', 'worker', 'neo4j', 'postgres'] as KillTarget[]),
  );
  return [...first, ...rest].slice(0, kills);
}

/** Whether every figure is what "faults survived" means. */
export function chaosOk(f: Omit<ChaosFigures, 'ok'>): boolean {
  const c = f.checks;
  return (
    f.settle.settled &&
    c.acknowledgedMissingInBronze === 0 &&
    c.acknowledgedWithOtherIdInBronze === 0 &&
    c.duplicateEventKeys === 0 &&
    c.duplicateFacts === 0 &&
    c.eventsNotDerived === 0 &&
    c.eventsWithoutQueueRow === 0 &&
    c.deadLettersOpen === 0 &&
    c.graph.every((g) => g.consistent && g.equalToRebuild) &&
    c.overlaysLost === 0 &&
    c.approvalsLost === 0 &&
    c.approvedNoLongerApproved === 0 &&
    f.goldBefore.overlays === f.goldAfter.overlays &&
    f.goldBefore.approvals === f.goldAfter.approvals &&
    f.load.duplicateResendsWithOtherId === 0 &&
    c.eventsNotUnderTheirKey === 0 &&
    !('error' in f.trustOps) &&
    f.markerFactsBeforeErasure > 0 &&
    f.erasedTextNowhere.found === 0 &&
    f.retention.ok &&
    f.chain.every((x) => x.ok) &&
    f.silverEqualsFreshDerivation.ok &&
    (f.selfTest ?? []).every((t) => t.detected)
  );
}

/** Environment of every service process of the run. */
const SERVICE_ENV: Record<string, string> = {
  OFFLINE_EMBEDDER: 'hashing',
  DERIVE_MAX_WAIT_MS: '0',
  DERIVE_POLL_MS: '100',
  PROJECTOR_POLL_MS: '100',
  // A dead worker's derivation lease is taken over after this long (default 120 s).
  DERIVE_LEASE_SECONDS: '10',
  DERIVE_RETRY_BASE_SECONDS: '1',
  GOLD_PROMOTE_SETTLE_SECONDS: '2',
  GOLD_PROMOTE_MIN_GAP_SECONDS: '5',
  APPROVAL_TTL: '86400',
  // Retention may drop months older than 30 days (the run drops March 2026).
  BRONZE_RETENTION_DAYS: '30',
};

/** The month the run drops: the retained namespace's events are in March 2026, every other event from June 2026 on. */
const RETAIN_BEFORE = '2026-04-01';
const OLD_EVENTS = 30;

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { index status code event { id } } }`;

/**
 * Issue 24 item 6 and issue 43 item 8: two API and two worker processes on one PostgreSQL and one
 * local Neo4j, under ingest, derivation, overlays, approvals, promotion and projection, while
 * `kills` kill -9s hit an API, a worker, Neo4j or PostgreSQL at random points (each restarted: the
 * processes by their supervisor, Neo4j and PostgreSQL on the same data), and an erasure and a
 * Bronze retention go through the approval flow. Then everything settles and the stores are
 * checked: nothing acknowledged lost, the erased text nowhere, the retained month gone, every
 * chain verifies, Silver equals a fresh derivation of the surviving Bronze.
 */
export async function runChaos(opts: ChaosOptions): Promise<ChaosFigures> {
  const log = opts.log ?? ((m: string) => process.stdout.write(`[chaos] ${m}\n`));
  const rnd = seeded(opts.seed);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-chaos-'));
  fs.chmodSync(dataDir, 0o755);
  const adminToken = `chaos-admin-${randomBytes(16).toString('hex')}`;
  const namespaces = ['a', 'b', 'c'].map((x) => `chaos-${opts.seed}-${x}`);
  const oldNs = `chaos-${opts.seed}-old`;
  const marker = `Qzxchaos${opts.seed}`;
  const pgc = opts.postgres;
  const cluster = await ChaosCluster.start({ postgresUrl: pgc.url, runtimeUrl: pgc.runtimeUrl, adminToken, dataDir, log, env: SERVICE_ENV });
  let pg: Client | undefined;
  try {
    const urls = () => cluster.apis.map((a) => a.url);
    const stats = { transportRetries: 0 };
    const token = async (name: string, capabilities: string[], patterns: readonly string[] = namespaces): Promise<string> => {
      const r = await gqlAny<{ createToken: { token: string } }>(
        urls,
        adminToken,
        `mutation($input: TokenInput!) { createToken(input: $input) { token } }`,
        { input: { name, grants: patterns.map((namespacePattern) => ({ namespacePattern, capabilities })) } },
        stats,
      );
      if (!r.data) throw new Error(`createToken: ${JSON.stringify(r.errors)}`);
      return r.data.createToken.token;
    };
    const requesterToken = await token('chaos-requester', ['ADMIN', 'READ']);
    const approverToken = await token('chaos-approver', ['APPROVE', 'READ']);
    // The irreversible operations: requester and approver both created by the bootstrap admin, neither by the other.
    const operatorToken = await token('chaos-operator', ['ADMIN', 'READ'], ['*']);
    const secondPersonToken = await token('chaos-second-person', ['APPROVE', 'READ'], ['*']);

    // Before the kills: a month of events that retention will drop, and the event that will be erased.
    const ingest = async (events: Array<Record<string, unknown>>): Promise<string[]> => {
      const r = await gqlAny<{ ingestEvents: Array<{ status: string; event: { id: string } | null }> }>(urls, adminToken, INGEST, { input: events }, stats);
      if (!r.data || r.data.ingestEvents.some((x) => !x.event)) throw new Error(`seed ingest: ${JSON.stringify(r.errors ?? r.data)}`);
      return r.data.ingestEvents.map((x) => (x.event as { id: string }).id);
    };
    const oldIds = await ingest(
      Array.from({ length: OLD_EVENTS }, (_, i) => ({
        namespace: oldNs,
        source: 'chaos-old',
        sourceEventId: `old-${i}`,
        kind: 'MESSAGE',
        role: 'USER',
        actor: 'Dana',
        conversationId: 'conv-old',
        sequenceNum: i + 1,
        content: [`I work at Acme`, `My manager Ravi works at Globex`, `I use vim for everything`][i % 3] as string,
        occurredAt: new Date(Date.UTC(2026, 2, 2) + i * 3_600_000).toISOString(),
      })),
    );
    const [erasedId] = (await ingest([
      {
        namespace: namespaces[0],
        source: 'chaos-erasure',
        sourceEventId: 'secret-1',
        kind: 'MESSAGE',
        role: 'USER',
        actor: 'Dana',
        conversationId: 'conv-secret',
        sequenceNum: 1,
        content: `My sister Ines lives in ${marker}`,
        occurredAt: new Date(Date.UTC(2026, 5, 1)).toISOString(),
      },
    ])) as [string];
    const pre = await ownerClient(pgc.url);
    let markerFactsBeforeErasure = 0;
    try {
      await settle(pre, [...namespaces, oldNs], 300_000, log);
      markerFactsBeforeErasure = (
        (await pre.query(`SELECT count(*)::int AS n FROM silver.facts WHERE statement ILIKE $1`, [`%${marker}%`])).rows[0] as { n: number }
      ).n;
    } finally {
      await pre.end().catch(() => undefined);
    }
    log(`seeded ${oldIds.length} events of March 2026 in ${oldNs}; the event to erase gave ${markerFactsBeforeErasure} fact(s) holding its text`);

    const load = startLoad({ urls, adminToken, requesterToken, approverToken, namespaces, seed: opts.seed, log: (m) => log(`load: ${m}`) });
    const t0 = Date.now();
    await sleep(5000);

    const kills: KillRecord[] = [];
    const comebacks: Array<Promise<void>> = [];
    const trust = (async () => {
      await sleep(opts.gapMs[0]);
      return runTrustOps(
        {
          urls,
          ownerUrl: () => pgc.url,
          requesterToken: operatorToken,
          approverToken: secondPersonToken,
          erase: { namespace: namespaces[0] as string, eventId: erasedId },
          retainBefore: RETAIN_BEFORE,
          log: (m) => log(`trust: ${m}`),
        },
        t0,
      );
    })().then(
      (r) => r,
      (err: unknown) => ({ error: String(err).slice(0, 500) }),
    );
    for (const [i, target] of killPlan(opts.kills, rnd).entries()) {
      await sleep(opts.gapMs[0] + rnd() * (opts.gapMs[1] - opts.gapMs[0]));
      const at = Date.now();
      const record: KillRecord = { n: i + 1, atSeconds: Math.round((at - t0) / 100) / 10, target, pid: undefined, backAfterMs: -1 };
      kills.push(record);
      if (target === 'neo4j' || target === 'postgres') {
        const store = target === 'neo4j' ? cluster.neo4j : pgc;
        record.pid = await store.kill9();
        log(`kill ${record.n}: ${target} (pid ${record.pid ?? '?'})`);
        await store.restart();
        record.backAfterMs = Date.now() - at;
        log(`${target} back after ${record.backAfterMs} ms`);
        continue;
      }
      const pool = target === 'api' ? cluster.apis : cluster.workers;
      const up = pool.filter((p) => p.pid !== undefined);
      const victim: Supervised = up.length > 0 ? pick(rnd, up) : pick(rnd, pool);
      await victim.ready();
      record.target = victim.name;
      record.pid = victim.kill9();
      log(`kill ${record.n}: ${victim.name} (pid ${record.pid ?? '?'})`);
      comebacks.push(
        (async () => {
          await sleep(100);
          await victim.ready();
          record.backAfterMs = Date.now() - at;
        })().catch((err: unknown) => log(`${victim.name} did not come back: ${String(err).slice(0, 300)}`)),
      );
    }
    const trustOps = await trust;
    await sleep(3000);
    await load.stop();
    const loadSeconds = Math.round((Date.now() - t0) / 100) / 10;
    await Promise.all(comebacks);
    await cluster.ready();
    pg = await ownerClient(pgc.url);
    const goldBefore = await goldCounts(pg, namespaces);
    log(`load stopped after ${loadSeconds} s: ${load.acks.events.size} events acknowledged; settling`);
    const settled = await settle(pg, [...namespaces, oldNs], opts.settleTimeoutMs ?? 600_000, log);
    log(`settled: ${JSON.stringify(settled)}; checking`);
    const checks = await runChecks(pg, { uri: cluster.neo4j.uri, password: cluster.neo4j.password }, urls, adminToken, namespaces, load.acks);
    const goldAfter = await goldCounts(pg, namespaces);

    const driver = neo4j.driver(cluster.neo4j.uri, neo4j.auth.basic('neo4j', cluster.neo4j.password));
    try {
      const erasedTextNowhere = await markerCheck(pg, driver, marker, erasedId);
      const reportedDropped =
        'error' in trustOps ? 0 : trustOps.retention.partitions.flatMap((p) => p.namespaces).reduce((n, x) => n + (x.namespace === oldNs ? x.events : 0), 0);
      const ret = await retentionCheck(pg, oldNs, `${RETAIN_BEFORE}T00:00:00Z`, oldIds.length, reportedDropped);
      const neo4jOld = await driver.executeQuery(`MATCH (n) WHERE n.namespace = $ns RETURN count(n) AS n`, { ns: oldNs });
      const oldFacts = (await pg.query(`SELECT count(*)::int AS n FROM silver.facts WHERE namespace = $1 AND retired_at IS NULL AND valid_to IS NULL`, [oldNs]))
        .rows[0] as { n: number };
      const retention = { ...ret, neo4jNodesOfRetainedNamespace: Number(neo4jOld.records[0]?.get('n') ?? 0), liveFactsOfRetainedNamespace: oldFacts.n };
      const chain: ChainCheck[] = [];
      for (const ns of [...namespaces, oldNs]) chain.push(await chainVerify(pgc.url, pgc.runtimeUrl, ns));
      log(`erased text found ${erasedTextNowhere.found} time(s); retention ok ${retention.ok}; chains ${chain.map((c) => c.exitCode).join(',')}`);

      // A fresh derivation of the surviving Bronze on an empty PostgreSQL, compared with live Silver.
      const fresh = await freshDerivation(cluster.neo4j, pg, namespaces, adminToken, dataDir, log);
      const live = await factProvenance(pg, namespaces);
      const silverEqualsFreshDerivation = { ...compareSilver(live, fresh.lines), freshEvents: fresh.events, freshSettle: fresh.settle };
      log(
        `silver vs fresh derivation: ${live.length} live, ${fresh.lines.length} fresh, ${silverEqualsFreshDerivation.onlyLive} only live, ${silverEqualsFreshDerivation.onlyFresh} only fresh`,
      );

      const planted = opts.selfTest
        ? await selfTest({
            pg,
            driver,
            urls,
            adminToken,
            ownerUrl: pgc.url,
            runtimeUrl: pgc.runtimeUrl,
            namespaces,
            acks: load.acks,
            fresh: fresh.lines,
            marker,
            erasedId,
            retained: { namespace: oldNs, before: `${RETAIN_BEFORE}T00:00:00Z`, acknowledged: oldIds.length, reportedDropped },
            log,
          })
        : undefined;

      const a = load.acks;
      const figures: Omit<ChaosFigures, 'ok'> = {
        seed: opts.seed,
        kills: {
          total: kills.length,
          api: kills.filter((k) => k.target.startsWith('api')).length,
          worker: kills.filter((k) => k.target.startsWith('worker')).length,
          neo4j: kills.filter((k) => k.target === 'neo4j').length,
          postgres: kills.filter((k) => k.target === 'postgres').length,
          log: kills,
        },
        load: {
          seconds: loadSeconds,
          ingestRequests: a.stats.ingestRequests,
          transportRetries: a.stats.transportRetries,
          graphqlErrors: a.stats.graphqlErrors,
          rejected: a.rejected,
          duplicateResendsWithOtherId: a.idMismatches,
          overlays: a.overlays.size,
          approvalsRequested: a.approvalsRequested.size,
          approvalsApproved: a.approvalsApproved.size,
          promotions: a.promotions,
        },
        unexpectedExits: cluster.all.reduce((n, p) => n + p.unexpectedExits, 0),
        settle: settled,
        goldBefore,
        goldAfter,
        checks,
        trustOps:
          'error' in trustOps
            ? trustOps
            : {
                ...trustOps,
                killsDuring: kills.filter((k) => k.atSeconds >= trustOps.erasure.requestedAtS && k.atSeconds <= trustOps.retention.executedAtS).map((k) => k.n),
              },
        markerFactsBeforeErasure,
        erasedTextNowhere,
        retention,
        chain,
        silverEqualsFreshDerivation,
        ...(planted ? { selfTest: planted } : {}),
      };
      return { ...figures, ok: chaosOk(figures) };
    } finally {
      await driver.close();
    }
  } finally {
    await pg?.end().catch(() => undefined);
    await cluster.stop().catch((err: unknown) => log(`stopping the cluster: ${String(err)}`));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Derives the surviving Bronze events of `namespaces` (not erased, not retained away) from
 * scratch: an empty embedded PostgreSQL, one API and one worker process (on the run's Neo4j, the
 * namespaces renamed `fresh-…` so nothing of the run's graph is touched), the events ingested in
 * their original order. Returns the fresh Silver as factProvenance lines, namespaces renamed back.
 */
async function freshDerivation(
  neo4jStore: ChaosNeo4j,
  live: Client,
  namespaces: readonly string[],
  adminToken: string,
  dataDir: string,
  log: (m: string) => void,
): Promise<{ lines: string[]; events: number; settle: unknown }> {
  const pg = await ChaosPostgres.start(path.join(dataDir, 'fresh-pg'), log);
  const to = (ns: string) => `fresh-${ns}`;
  const back = (ns: string) => ns.replace(/^fresh-/, '');
  const env = serviceEnv({ postgresUrl: pg.url, runtimeUrl: pg.runtimeUrl, adminToken, dataDir: path.join(dataDir, 'fresh'), env: SERVICE_ENV }, neo4jStore);
  const api = new Supervised('fresh-api', 'api', await freePort(), env, log);
  const worker = new Supervised('fresh-worker', 'worker', undefined, env, log);
  let client: Client | undefined;
  try {
    api.start();
    await api.ready();
    worker.start();
    await worker.ready();
    const events = await survivingEvents(live, namespaces);
    await ingestFresh(() => [api.url], adminToken, events, to);
    client = await ownerClient(pg.url);
    const settled = await settle(client, namespaces.map(to), 600_000, (m) => log(`fresh: ${m}`));
    return { lines: await factProvenance(client, namespaces.map(to), back), events: events.length, settle: settled };
  } finally {
    await client?.end().catch(() => undefined);
    await api.stop();
    await worker.stop();
    await pg.stop();
  }
}

/**
 * `npm run bench -- chaos` (CHAOS_KILLS, default 20; CHAOS_SEED; CHAOS_SELF_TEST=1 adds the
 * planted-defect self-test): the full run on an embedded PostgreSQL the run kills and restarts.
 */
export async function chaosBench(selfTestToo = process.env.CHAOS_SELF_TEST === '1'): Promise<void> {
  const kills = Number(process.env.CHAOS_KILLS ?? 20);
  const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 100_000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-chaos-pg-'));
  fs.chmodSync(dataDir, 0o755);
  const pg = await ChaosPostgres.start(path.join(dataDir, 'pg'), (m) => process.stdout.write(`[chaos] ${m}\n`));
  // Whatever ends this process, the PostgreSQL it started does not outlive it.
  process.once('exit', () => {
    const pid = pg.pid;
    try {
      if (pid) process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  try {
    const figures = await runChaos({ kills, seed, postgres: pg, gapMs: [2000, 8000], selfTest: selfTestToo });
    report(`chaos${selfTestToo ? '-self-test' : ''}${kills === 20 ? '' : `-${kills}`}`, { ...figures });
    if (!figures.ok) process.exitCode = 1;
  } finally {
    await pg.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** `npm run bench -- chaos-self-test`: the chaos run, then every check against its planted defect. */
export async function chaosSelfTestBench(): Promise<void> {
  await chaosBench(true);
}
