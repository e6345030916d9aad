import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '../src/platform/local-services/embedded-postgres';
import { ChaosCluster, sleep, Supervised } from './chaos-cluster';
import { ChaosChecks, goldCounts, runChecks, settle } from './chaos-checks';
import { gqlAny, pick, seeded, startLoad } from './chaos-load';
import { report } from './harness';

export type KillTarget = 'api' | 'worker' | 'neo4j';

export interface ChaosOptions {
  /** kill -9s in all (each kind at least once when ≥ 3). */
  kills: number;
  seed: number;
  postgresUrl: string;
  runtimeUrl: string;
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
  kills: { total: number; api: number; worker: number; neo4j: number; log: KillRecord[] };
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
  ok: boolean;
}

/** The order of kill targets: one of each kind first (shuffled), then API and workers twice as often as Neo4j. */
export function killPlan(kills: number, rnd: () => number): KillTarget[] {
  const first: KillTarget[] = ['api', 'worker', 'neo4j'].sort(() => rnd() - 0.5) as KillTarget[];
  const rest: KillTarget[] = Array.from({ length: Math.max(0, kills - 3) }, () => pick(rnd, ['api', 'api', 'worker', 'worker', 'neo4j'] as KillTarget[]));
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
    f.load.duplicateResendsWithOtherId === 0
  );
}

/**
 * Issue 24 item 6: two API and two worker processes on one Postgres and one local Neo4j, under
 * ingest, derivation, overlays, approvals, promotion and projection, while `kills` kill -9s hit
 * an API, a worker or Neo4j at random points (each restarted: the processes by their supervisor,
 * Neo4j on the same store). Then everything settles and the stores are checked.
 */
export async function runChaos(opts: ChaosOptions): Promise<ChaosFigures> {
  const log = opts.log ?? ((m: string) => process.stdout.write(`[chaos] ${m}\n`));
  const rnd = seeded(opts.seed);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-chaos-'));
  fs.chmodSync(dataDir, 0o755);
  const adminToken = `chaos-admin-${randomBytes(16).toString('hex')}`;
  const namespaces = ['a', 'b', 'c'].map((x) => `chaos-${opts.seed}-${x}`);
  const cluster = await ChaosCluster.start({
    postgresUrl: opts.postgresUrl,
    runtimeUrl: opts.runtimeUrl,
    adminToken,
    dataDir,
    log,
    env: {
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
    },
  });
  const pg = new Client({ connectionString: opts.postgresUrl });
  await pg.connect();
  try {
    const urls = () => cluster.apis.map((a) => a.url);
    const stats = { transportRetries: 0 };
    const token = async (name: string, capabilities: string[]): Promise<string> => {
      const r = await gqlAny<{ createToken: { token: string } }>(
        urls,
        adminToken,
        `mutation($input: TokenInput!) { createToken(input: $input) { token } }`,
        { input: { name, grants: namespaces.map((namespacePattern) => ({ namespacePattern, capabilities })) } },
        stats,
      );
      if (!r.data) throw new Error(`createToken: ${JSON.stringify(r.errors)}`);
      return r.data.createToken.token;
    };
    const requesterToken = await token('chaos-requester', ['ADMIN', 'READ']);
    const approverToken = await token('chaos-approver', ['APPROVE', 'READ']);
    const load = startLoad({ urls, adminToken, requesterToken, approverToken, namespaces, seed: opts.seed, log: (m) => log(`load: ${m}`) });
    const t0 = Date.now();
    await sleep(5000);

    const kills: KillRecord[] = [];
    const comebacks: Array<Promise<void>> = [];
    for (const [i, target] of killPlan(opts.kills, rnd).entries()) {
      await sleep(opts.gapMs[0] + rnd() * (opts.gapMs[1] - opts.gapMs[0]));
      const at = Date.now();
      const record: KillRecord = { n: i + 1, atSeconds: Math.round((at - t0) / 100) / 10, target, pid: undefined, backAfterMs: -1 };
      kills.push(record);
      if (target === 'neo4j') {
        record.pid = await cluster.neo4j.kill9();
        log(`kill ${record.n}: neo4j (pid ${record.pid ?? '?'})`);
        await cluster.neo4j.restart();
        record.backAfterMs = Date.now() - at;
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
    await sleep(3000);
    await load.stop();
    const loadSeconds = Math.round((Date.now() - t0) / 100) / 10;
    await Promise.all(comebacks);
    await cluster.ready();
    const goldBefore = await goldCounts(pg, namespaces);
    log(`load stopped after ${loadSeconds} s: ${load.acks.events.size} events acknowledged; settling`);
    const settled = await settle(pg, namespaces, opts.settleTimeoutMs ?? 600_000, log);
    log(`settled: ${JSON.stringify(settled)}; checking`);
    const checks = await runChecks(pg, { uri: cluster.neo4j.uri, password: cluster.neo4j.password }, urls, adminToken, namespaces, load.acks);
    const goldAfter = await goldCounts(pg, namespaces);
    const a = load.acks;
    const figures: Omit<ChaosFigures, 'ok'> = {
      seed: opts.seed,
      kills: {
        total: kills.length,
        api: kills.filter((k) => k.target.startsWith('api')).length,
        worker: kills.filter((k) => k.target.startsWith('worker')).length,
        neo4j: kills.filter((k) => k.target === 'neo4j').length,
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
    };
    return { ...figures, ok: chaosOk(figures) };
  } finally {
    await pg.end().catch(() => undefined);
    await cluster.stop().catch((err: unknown) => log(`stopping the cluster: ${String(err)}`));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** `npm run bench -- chaos` (CHAOS_KILLS, CHAOS_SEED): the full run, 20 kills, on an embedded Postgres. */
export async function chaosBench(): Promise<void> {
  const kills = Number(process.env.CHAOS_KILLS ?? 20);
  const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 100_000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-chaos-pg-'));
  fs.chmodSync(dataDir, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'pg') });
  try {
    const figures = await runChaos({ kills, seed, postgresUrl: pg.url, runtimeUrl: pg.runtimeUrl, gapMs: [2000, 8000] });
    report(kills === 20 ? 'chaos' : `chaos-${kills}`, { ...figures });
    if (!figures.ok) process.exitCode = 1;
  } finally {
    await pg.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
