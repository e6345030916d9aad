import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execSync } from 'node:child_process';
import { Client } from 'pg';
import { resolveEntities } from '../src/gold/promotion/entity-resolver';
import { PromotionRepository } from '../src/gold/promotion/promotion.repository';
import { offlineEntityJudge } from '../src/gold/promotion/resolution-rules';
import { HashingEmbedder } from '../src/models/offline/hashing-embedder';
import { startEmbeddedPostgres } from '../src/platform/local-services/embedded-postgres';
import { openDatabase } from '../src/platform/postgres/database';
import { Sql } from '../src/platform/postgres/sql';
import { nowMs, report, round } from './harness';
import { seedSilver, silverNames } from './promote';

/**
 * `npm run bench -- promote-pairs`: the reads and the resolver of a promotion run, alone, on an
 * embedded PostgreSQL (no Neo4j): N Silver entities seeded as in `promote`, then the candidates
 * query, the candidate-pairs query (once) with its EXPLAIN (ANALYZE, BUFFERS) plan at the first
 * size (every size with BENCH_PROMOTE_EXPLAIN=all), and the resolver in process.
 * BENCH_PROMOTE_SIZES (default "10000") picks the sizes; the plans go to
 * bench/results/promote-pairs-plan-<N>.txt.
 */
const load = (): string =>
  execSync('uptime')
    .toString()
    .trim()
    .replace(/^.*load average: /, '');

export async function promotePairsBench(): Promise<void> {
  const sizes = (process.env.BENCH_PROMOTE_SIZES ?? '10000').split(',').map((s) => Number(s.trim()));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-pairs-'));
  fs.chmodSync(dataDir, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'pg') });
  const quiet = { info: () => undefined, warn: () => undefined, debug: () => undefined };
  const db = await openDatabase({ ownerUrl: pg.url, runtimeUrl: pg.runtimeUrl, window: { maxPastDays: 3650, maxFutureDays: 30 }, log: quiet });
  const owner = new Client({ connectionString: pg.url });
  await owner.connect();
  try {
    const sql = Sql.of(db.ds);
    const repo = new PromotionRepository(sql);
    const settings = { candidateTrigram: 0.3, mergeTrigram: 0.6, mergeCosine: 0.85, fallbackType: 'concept' };
    // BENCH_PROMOTE_PER_ENTITY: the cap on trigram candidates per entity (default 25, as GOLD_CANDIDATES_PER_ENTITY; 0: none).
    const perEntityEnv = Number(process.env.BENCH_PROMOTE_PER_ENTITY ?? 25);
    const pairOptions = {
      threshold: settings.candidateTrigram,
      perEntity: perEntityEnv === 0 ? null : perEntityEnv,
      concurrency: Number(process.env.BENCH_PROMOTE_PAIR_CONCURRENCY ?? 2),
    };
    const results: Record<string, unknown> = {};
    for (const n of sizes) {
      const namespace = `promote-pairs-${n}`;
      const { rows } = silverNames(n);
      await seedSilver(owner, namespace, rows);
      const loadBefore = load();
      let t = nowMs();
      const candidates = await repo.candidates(namespace);
      const candidatesMs = nowMs() - t;
      t = nowMs();
      const pairs = await repo.pairs(namespace, pairOptions);
      const pairsMs = nowMs() - t;
      // EXPLAIN ANALYZE runs the query again: only at the first size (every size with BENCH_PROMOTE_EXPLAIN=all).
      if (n === sizes[0] || process.env.BENCH_PROMOTE_EXPLAIN === 'all') {
        const plan = await repo.explainPairs(namespace, pairOptions);
        fs.writeFileSync(path.join('bench', 'results', `promote-pairs-plan-${n}.txt`), `${plan}\n`);
      }
      t = nowMs();
      const resolution = await resolveEntities({ entities: candidates, pairs, separations: new Set() }, settings, offlineEntityJudge, new HashingEmbedder());
      const resolveMs = nowMs() - t;
      const steps: Record<string, number> = {};
      for (const a of resolution.assignments) steps[a.step] = (steps[a.step] ?? 0) + 1;
      results[String(n)] = {
        silverEntities: rows.length,
        candidatePairs: pairs.length,
        pairOptions,
        candidatesQueryMs: round(candidatesMs),
        pairsQueryMs: round(pairsMs),
        resolveMs: round(resolveMs),
        clusters: resolution.clusters.size,
        steps,
        load: { before: loadBefore, after: load() },
      };
      process.stdout.write(`  ${n}: ${JSON.stringify(results[String(n)])}\n`);
    }
    report('promote-pairs', { sizes: results });
  } finally {
    await owner.end();
    await db.close();
    await pg.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
