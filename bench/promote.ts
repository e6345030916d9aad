import { execSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Driver } from 'neo4j-driver';
import { Client } from 'pg';
import { GoldEntityNodeRow } from '../src/graph/cypher/gold-nodes';
import { GoldProjectionJob, toGoldEntityNode } from '../src/gold/promotion/gold-projection.job';
import { PromotionRepository } from '../src/gold/promotion/promotion.repository';
import { PromotionResult, PromotionService } from '../src/gold/promotion/promotion.service';
import { offlineEntityJudge } from '../src/gold/promotion/resolution-rules';
import { HashingEmbedder } from '../src/models/offline/hashing-embedder';
import { prng } from './memory-data';
import { namespaceKey } from '../src/platform/neo4j/namespace-key';
import { Sql } from '../src/platform/postgres/sql';
import { parsePayload } from '../src/platform/jobs/job-kinds';
import { jobHandlers } from '../src/app/job-registry';
import { JobWorker } from '../src/platform/jobs/job-worker';
import { JobRepository } from '../src/platform/jobs/job.repository';
import { ScheduleRepository } from '../src/platform/jobs/schedule.repository';
import { nameKey } from '../src/silver/candidate.repository';
import { countNeo4jRoundTrips } from '../test/support/neo4j-round-trips';
import { BenchEnv, nowMs, report, round, withBenchStores } from './harness';

/**
 * `npm run bench -- promote`: one `promote` job (the real handler through a JobWorker: claim,
 * fence and progress per batch, succeed) over a namespace of N bulk-seeded Silver entities, then
 * the Gold projector drained to Neo4j, then a raw Cypher UNWIND write of the same Gold nodes and
 * MERGED_FROM edges in batches of the same size, on the same stores in the same run. Counts
 * Postgres statements (the app's QueryCounter) and Neo4j transactions and statements per batch.
 *
 * Silver is seeded with plain SQL (jsonb_to_recordset, 5 000 rows a statement), no Bronze rows
 * (the candidate query LEFT JOINs events; every source event is then its own context). Names are
 * random syllable pairs, so most are distinct and dissimilar by trigram; about a quarter of the
 * base names come with a variant that resolution has to decide on: a short form sharing an event
 * with the base (cooccurrence), an initial + surname carrying the base name as alias (alias), a
 * one-letter typo sharing an event (trigram, or kept apart), a near name with no shared event
 * (must stay apart), or the same name under the fallback type `concept` (judge). Every entity has
 * two facts (confidence 0.9) on two distinct events, so every cluster passes the gate.
 *
 * BENCH_PROMOTE_SIZES (default "10000,100000") picks the sizes.
 */
const SYLLABLES =
  'ka vo ru tel mi se dra no fin ga lo pe zu bri ta sho ven ar im ox qua yel cor dun hes ju lam nir pol rik sav tor ul wen xa zor bel cid mor fen gir hol'.split(
    ' ',
  );
const TYPES = ['person', 'person', 'person', 'organization', 'location'];
const CHUNK = 5000;

interface SeedRow {
  id: string;
  type: string;
  name: string;
  key: string;
  aliases: string[];
  aliasKeys: string[];
  i: number;
  events: [string, string];
}

type Variant = 'distinct' | 'short' | 'alias' | 'typo' | 'near' | 'fallbackType';

/** N Silver entities: base names and their variants (see the file comment). */
export function silverNames(n: number, seed = 12): { rows: SeedRow[]; variants: Record<Variant, number> } {
  const rand = prng(seed); // deterministic, so every run seeds the same names
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const word = () => {
    const w = Array.from({ length: 2 + Math.floor(rand() * 2) }, () => pick(SYLLABLES)).join('');
    return w.charAt(0).toUpperCase() + w.slice(1);
  };
  const rows: SeedRow[] = [];
  const taken = new Set<string>();
  const variants: Record<Variant, number> = { distinct: 0, short: 0, alias: 0, typo: 0, near: 0, fallbackType: 0 };
  const add = (type: string, name: string, events: [string, string], aliases: string[] = []): boolean => {
    const key = nameKey(name);
    if (taken.has(`${type}|${key}`) || rows.length >= n) return false;
    taken.add(`${type}|${key}`);
    rows.push({ id: randomUUID(), type, name, key, aliases, aliasKeys: aliases.map(nameKey), i: rows.length, events });
    return true;
  };
  const swap = (w: string) => {
    const at = 1 + Math.floor(rand() * (w.length - 1));
    const c = w[at] === 'e' ? 'a' : 'e';
    return w.slice(0, at) + c + w.slice(at + 1);
  };
  while (rows.length < n) {
    const type = pick(TYPES);
    const first = word();
    const last = word();
    const base = `${first} ${last}`;
    const shared = randomUUID();
    if (!add(type, base, [shared, randomUUID()])) continue;
    const r = rand();
    if (r < 0.08) {
      if (add(type, first, [shared, randomUUID()])) variants.short += 1;
    } else if (r < 0.14) {
      if (add(type, `${first[0]}. ${last}`, [randomUUID(), randomUUID()], [base])) variants.alias += 1;
    } else if (r < 0.19) {
      if (add(type, `${first} ${swap(last)}`, [shared, randomUUID()])) variants.typo += 1;
    } else if (r < 0.23) {
      if (add(type, `${swap(first)} ${last}`, [randomUUID(), randomUUID()])) variants.near += 1;
    } else if (r < 0.26) {
      if (add('concept', base, [shared, randomUUID()])) variants.fallbackType += 1;
    } else variants.distinct += 1;
  }
  return { rows, variants };
}

export async function seedSilver(owner: Client, namespace: string, rows: readonly SeedRow[]): Promise<void> {
  const run = randomUUID();
  await owner.query(
    `INSERT INTO silver.derivation_runs (id, namespace, kind, extraction_model, judge_model, embedding_model, worker_id, event_count)
     VALUES ($1, $2, 'incremental', 'bench', 'bench', 'bench', 'bench', 0)`,
    [run, namespace],
  );
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK);
    await owner.query(
      `INSERT INTO silver.entities (id, namespace, type, name, name_key, aliases, alias_keys, derivation_run_id, recorded_at)
       SELECT x.id, $1, x.type, x.name, x.key, x.aliases, x."aliasKeys", $2, '2026-01-01'::timestamptz + make_interval(secs => x.i)
         FROM jsonb_to_recordset($3::jsonb) AS x(id uuid, type text, name text, key text, aliases text[], "aliasKeys" text[], i int)`,
      [
        namespace,
        run,
        JSON.stringify(
          chunk.map((r) => ({ ...r, aliases: `{${r.aliases.map((a) => `"${a}"`).join(',')}}`, aliasKeys: `{${r.aliasKeys.map((a) => `"${a}"`).join(',')}}` })),
        ),
      ],
    );
    const facts = chunk.flatMap((r) => r.events.map((event, k) => ({ fact: randomUUID(), entity: r.id, event, k })));
    await owner.query(
      `INSERT INTO silver.facts (id, namespace, statement, fact_type, subject_entity_id, confidence, importance, valid_from, extraction_model, derivation_run_id)
       SELECT x.fact, $1, 'fact ' || x.k || ' about ' || x.entity, 'attribute', x.entity, 0.9, 0.5, now(), 'bench', $2
         FROM jsonb_to_recordset($3::jsonb) AS x(fact uuid, entity uuid, k int)`,
      [namespace, run, JSON.stringify(facts)],
    );
    await owner.query(
      `INSERT INTO silver.fact_sources (fact_id, event_id, span_start, span_end, quote)
       SELECT x.fact, x.event, 0, 2, 'ok' FROM jsonb_to_recordset($1::jsonb) AS x(fact uuid, event uuid)`,
      [JSON.stringify(facts)],
    );
  }
  await owner.query('ANALYZE silver.entities');
  await owner.query('ANALYZE silver.facts');
  await owner.query('ANALYZE silver.fact_sources');
}

/** The (:Entity) nodes the Silver projector would have written (not measured). */
async function seedEntityNodes(driver: Driver, namespace: string, rows: readonly SeedRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    await driver.executeQuery(
      `UNWIND $rows AS r MERGE (e:Entity {id: r.id}) SET e.namespace = $ns, e.nsKey = $nsKey, e.type = r.type, e.name = r.name, e.aliases = r.aliases`,
      {
        rows: rows.slice(i, i + CHUNK).map((r) => ({ id: r.id, type: r.type, name: r.name, aliases: r.aliases })),
        ns: namespace,
        nsKey: namespaceKey(namespace),
      },
    );
  }
}

/** The baseline: the same Gold nodes (fresh ids, another namespace) and MERGED_FROM edges, one plain UNWIND per batch. */
async function rawWrite(driver: Driver, nodes: readonly GoldEntityNodeRow[], batchSize: number): Promise<{ ms: number; transactions: number }> {
  const t0 = nowMs();
  let transactions = 0;
  for (let i = 0; i < nodes.length; i += batchSize) {
    const session = driver.session();
    try {
      await session.executeWrite((tx) =>
        tx.run(
          `UNWIND $rows AS r
           MERGE (g:GoldEntity {id: r.id})
           SET g:$(r.label)
           SET g.namespace = r.namespace, g.nsKey = r.nsKey, g.type = r.type, g.name = r.name, g.aliases = r.aliases,
               g.confidence = r.confidence, g.version = toInteger(r.version), g.promotedAt = datetime(r.promotedAt)
           WITH g, r
           UNWIND r.memberIds AS mid
           MATCH (e:Entity {id: mid})
           MERGE (g)-[:MERGED_FROM]->(e)`,
          {
            rows: nodes
              .slice(i, i + batchSize)
              .map((r) => ({ ...r, id: `raw:${r.id}`, namespace: `${r.namespace}-raw`, nsKey: namespaceKey(`${r.namespace}-raw`) })),
          },
        ),
      );
      transactions += 1;
    } finally {
      await session.close();
    }
  }
  return { ms: nowMs() - t0, transactions };
}

const load = (): string =>
  execSync('uptime')
    .toString()
    .trim()
    .replace(/^.*load average: /, '');

/** The promotion service, keeping the result of its last run (its phase timings and pair count). */
class RecordingPromotion extends PromotionService {
  last: PromotionResult | null = null;

  override async promote(...args: Parameters<PromotionService['promote']>): Promise<PromotionResult> {
    this.last = await super.promote(...args);
    return this.last;
  }
}

async function measure(env: BenchEnv, owner: Client, n: number): Promise<Record<string, unknown>> {
  const namespace = `promote-bench-${n}`;
  const app = env.app;
  const sql = Sql.of(app.ds);
  const settings = { ...app.config.gold, fallbackType: 'concept' };
  const promotion = new RecordingPromotion(sql, new PromotionRepository(sql), settings, offlineEntityJudge, async () => new HashingEmbedder());
  const jobs = new JobRepository(sql);
  const worker = new JobWorker(
    jobs,
    new ScheduleRepository(sql),
    jobHandlers({
      sql,
      graph: app.services.graph,
      reembed: app.services.reembed,
      promotion,
      lifecycle: app.services.lifecycle,
      pollMs: app.config.derive.pollMs,
    }),
    { workerId: 'bench-promote', parse: parsePayload },
  );

  const { rows, variants } = silverNames(n);
  let t = nowMs();
  await seedSilver(owner, namespace, rows);
  await seedEntityNodes(app.neo4j, namespace, rows);
  const seedMs = nowMs() - t;
  const loadBefore = load();
  process.stdout.write(`  seeded ${rows.length} Silver entities in ${round(seedMs / 1000, 1)} s (load ${loadBefore})\n`);

  // 1. The promote job.
  const neo = countNeo4jRoundTrips(app.neo4j);
  try {
    const { job } = await jobs.enqueue({ kind: 'promote', namespace, params: {}, reason: 'bench', createdBy: null });
    app.queryCounter.reset();
    neo.counter.reset();
    t = nowMs();
    if (!(await worker.runNext())) throw new Error('the promote job was not claimed');
    const promoteMs = nowMs() - t;
    const promoteSql = app.queryCounter.count;
    const promoteNeo = { ...neo.counter };
    const done = await jobs.byId(job.id);
    if (done?.status !== 'succeeded') throw new Error(`promote job ended ${done?.status}: ${JSON.stringify(done)}`);
    const loadAfterPromote = load();
    const { rows: batchRows } = await owner.query<{ batches: number; entities: number }>(
      `SELECT count(DISTINCT payload->>'batch')::int AS batches, count(*)::int AS entities FROM ops.outbox WHERE namespace = $1 AND aggregate_type = 'gold_entity'`,
      [namespace],
    );
    const batches = batchRows[0]?.batches ?? 0;
    const { rows: gold } = await owner.query<{ gold: number; members: number }>(
      `SELECT (SELECT count(*)::int FROM gold.entities WHERE namespace = $1) AS gold, (SELECT count(*)::int FROM gold.entity_members WHERE namespace = $1 AND removed_at IS NULL) AS members`,
      [namespace],
    );
    const { rows: steps } = await owner.query<{ step: string; n: number }>(
      `SELECT action || ':' || step AS step, count(*)::int AS n FROM gold.promotion_log WHERE namespace = $1 GROUP BY 1 ORDER BY 1`,
      [namespace],
    );
    const goldCount = gold[0]?.gold ?? 0;
    const members = gold[0]?.members ?? 0;

    // 2. The Gold projector, drained (one outbox batch per runOnce).
    const projector = new GoldProjectionJob(sql, app.neo4j);
    app.queryCounter.reset();
    neo.counter.reset();
    t = nowMs();
    let projected = 0;
    let runs = 0;
    for (;;) {
      const r = await projector.runOnce();
      if (r.kind === 'skipped') break;
      if (r.kind === 'failed') throw new Error(`gold projection failed: ${r.error}`);
      projected += r.projected;
      runs += 1;
    }
    const drainMs = nowMs() - t;
    const drainSql = app.queryCounter.count;
    const drainNeo = { ...neo.counter };
    const { records } = await app.neo4j.executeQuery(
      `MATCH (g:GoldEntity {namespace: $ns}) OPTIONAL MATCH (g)-[m:MERGED_FROM]->(:Entity) RETURN count(DISTINCT g) AS g, count(m) AS m`,
      { ns: namespace },
    );
    const neoGold = Number(records[0]?.get('g'));
    const neoMembers = Number(records[0]?.get('m'));
    if (neoGold !== goldCount || neoMembers !== members)
      throw new Error(`Neo4j has ${neoGold} Gold nodes / ${neoMembers} MERGED_FROM, Postgres ${goldCount} / ${members}`);
    const loadAfterDrain = load();

    // 3. Raw Cypher: the same nodes and edges, read once from Postgres (not timed), one UNWIND per batch.
    const nodes = (await new PromotionRepository(sql).goldEntities(namespace)).map(toGoldEntityNode);
    neo.counter.reset();
    const raw = await rawWrite(app.neo4j, nodes, settings.batchSize);
    const rawNeo = { ...neo.counter };
    const { records: rawRecords } = await app.neo4j.executeQuery(
      `MATCH (g:GoldEntity {namespace: $ns}) OPTIONAL MATCH (g)-[m:MERGED_FROM]->(:Entity) RETURN count(DISTINCT g) AS g, count(m) AS m`,
      { ns: `${namespace}-raw` },
    );
    if (Number(rawRecords[0]?.get('g')) !== goldCount || Number(rawRecords[0]?.get('m')) !== members)
      throw new Error('the raw write did not write every node and edge');
    const loadAfterRaw = load();

    const perBatch = (x: number) => round(x / Math.max(1, batches), 1);
    const result = {
      silverEntities: rows.length,
      seededVariants: variants,
      goldEntities: goldCount,
      mergedFromEdges: members,
      promotionLog: Object.fromEntries(steps.map((s) => [s.step, s.n])),
      batchSize: settings.batchSize,
      batches,
      seedSeconds: round(seedMs / 1000, 1),
      phasesOfTheJob: { candidatePairs: promotion.last?.candidatePairs ?? null, ...(promotion.last?.timings ?? {}) },
      promoteJob: {
        ms: round(promoteMs),
        silverEntitiesPerSecond: round(rows.length / (promoteMs / 1000), 1),
        goldEntitiesPerSecond: round(goldCount / (promoteMs / 1000), 1),
        postgresStatements: promoteSql,
        postgresStatementsPerBatch: perBatch(promoteSql),
        neo4jTransactions: promoteNeo.transactions,
      },
      projectorDrain: {
        ms: round(drainMs),
        goldEntitiesPerSecond: round(goldCount / (drainMs / 1000), 1),
        runs,
        outboxRows: projected,
        postgresStatements: drainSql,
        postgresStatementsPerBatch: round(drainSql / Math.max(1, runs), 1),
        neo4jTransactions: drainNeo.transactions,
        neo4jTransactionsPerBatch: round(drainNeo.transactions / Math.max(1, runs), 2),
        neo4jStatementsPerBatch: round(drainNeo.statements / Math.max(1, runs), 2),
      },
      rawCypherUnwind: {
        ms: round(raw.ms),
        goldEntitiesPerSecond: round(goldCount / (raw.ms / 1000), 1),
        neo4jTransactions: rawNeo.transactions,
        neo4jStatements: rawNeo.statements,
      },
      ratios: {
        projectorDrainOverRaw: round(drainMs / raw.ms, 2),
        promoteJobPlusDrainOverRaw: round((promoteMs + drainMs) / raw.ms, 2),
      },
      load: { beforePromote: loadBefore, afterPromote: loadAfterPromote, afterDrain: loadAfterDrain, afterRaw: loadAfterRaw },
    };
    process.stdout.write(
      `  ${n}: promote job ${round(promoteMs / 1000, 1)} s (${result.promoteJob.silverEntitiesPerSecond} Silver entities/s, ${goldCount} Gold, ${batches} batches, ` +
        `${result.promoteJob.postgresStatementsPerBatch} pg statements/batch, ${promoteNeo.transactions} Neo4j tx); ` +
        `projector ${round(drainMs / 1000, 1)} s (${result.projectorDrain.neo4jTransactionsPerBatch} Neo4j tx/batch, ${result.projectorDrain.postgresStatementsPerBatch} pg/batch); ` +
        `raw UNWIND ${round(raw.ms / 1000, 1)} s; drain/raw ${result.ratios.projectorDrainOverRaw}; load ${loadAfterRaw}\n`,
    );
    return result;
  } finally {
    neo.restore();
  }
}

export async function promoteBench(): Promise<void> {
  const sizes = (process.env.BENCH_PROMOTE_SIZES ?? '10000,100000').split(',').map((s) => Number(s.trim()));
  await withBenchStores(async (b) => {
    const env = await b.startApp({ GOLD_PROMOTE_EVERY_SECONDS: '0', OFFLINE_EMBEDDER: 'hashing' }, { api: false, worker: false });
    const owner = new Client({ connectionString: b.stores.postgresUrl });
    await owner.connect();
    try {
      const results: Record<string, unknown> = {};
      for (const n of sizes) results[String(n)] = await measure(env, owner, n);
      report('promote', {
        embedder: 'hashing',
        judge: offlineEntityJudge.model,
        settings: { ...env.app.config.gold },
        note: 'promoteJob = the real promote handler through a JobWorker (claim, fence + progress per batch, succeed); projectorDrain = GoldProjectionJob.runOnce until empty; rawCypherUnwind = the same nodes and MERGED_FROM edges (new ids, namespace + "-raw") as one MERGE/SET/UNWIND statement per batch of the same size',
        sizes: results,
      });
    } finally {
      await owner.end();
      await env.app.stop();
    }
  });
}
