import { isDeepStrictEqual } from 'node:util';
import { Client } from 'pg';
import { GOLD_GRAPH_KEY_CYPHER } from '../src/graph/cypher/gold-nodes';
import { GRAPH_KEY_CYPHER } from '../src/graph/cypher/graph-admin';
import { GraphKeyCypher, readKeyDigests } from '../src/graph/cypher/key-digest';
import { GraphSourceRepository } from '../src/graph/graph-source.repository';
import { backwardGraphEdges, duplicateGraphEdges, orphanGoldNodes } from '../src/graph/cypher/quality-reads';
import { ChainVerificationRepository } from '../src/gold/portability/chain-verify.repository';
import { QualityRepository } from '../src/gold/quality/quality.repository';
import { QualityService } from '../src/gold/quality/quality.service';
import { GraphConsistencyAnswers } from '../src/gold/quality/graph-consistency-answers';
import { GraphConsistencyRepository } from '../src/gold/quality/graph-consistency.repository';
import { QUALITY_CHECKS, QualityCheckName } from '../src/gold/quality/quality.types';
import { RowMapper, Sql } from '../src/platform/postgres/sql';
import {
  countCypher,
  graphql,
  printTable,
  profiled,
  registerMemoryBench,
  round,
  runMemoryBench,
  ScaleContext,
  summarize,
  TARGET,
  timed,
} from './memory-fixture';

const REPORT = `query($ns: String!) { qualityReport(namespace: $ns) { ok checks { name value threshold ok detail } } }`;

interface Statement {
  text: string;
  params: readonly unknown[];
  /** Set in the same transaction before the statement (the uniqueness check's trigram threshold). */
  setup: Array<{ text: string; params: readonly unknown[] }>;
}

/** An Sql that records each statement it runs (text and parameters), to EXPLAIN them afterwards. */
function recording(sql: Sql, log: Statement[], setup: Statement['setup'] = []): Sql {
  const note = (text: string, params: readonly unknown[]) => log.push({ text, params, setup: [...setup] });
  const proxy = {
    rows: <T>(text: string, params: readonly unknown[], map: RowMapper<T>) => (note(text, params), sql.rows(text, params, map)),
    one: <T>(text: string, params: readonly unknown[], map: RowMapper<T>) => (note(text, params), sql.one(text, params, map)),
    maybeOne: <T>(text: string, params: readonly unknown[], map: RowMapper<T>) => (note(text, params), sql.maybeOne(text, params, map)),
    returning: <T>(text: string, params: readonly unknown[], map: RowMapper<T>) => (note(text, params), sql.returning(text, params, map)),
    execute: (text: string, params: readonly unknown[] = []) => {
      setup.push({ text, params });
      return sql.execute(text, params);
    },
    transaction: <T>(fn: (tx: Sql) => Promise<T>) => sql.transaction((tx) => fn(recording(tx, log, []))),
  };
  return proxy as unknown as Sql;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** The indexes a plan reads, and the tables it scans whole (`seq:<table>`). */
function accessPaths(p: PlanNode, into = new Set<string>()): Set<string> {
  if (p['Index Name']) into.add(p['Index Name']);
  else if (p['Node Type'] === 'Seq Scan' && p['Relation Name']) into.add(`seq:${p['Relation Name']}`);
  for (const c of p.Plans ?? []) accessPaths(c, into);
  return into;
}

/** The indexes migration 1764400001000 adds for the report: each statement that uses one is EXPLAINed again without it. */
const QUALITY_INDEXES: Record<string, string> = {
  derivation_queue_done_idx: 'ops.derivation_queue_done_idx',
  facts_superseded_still_valid_idx: 'silver.facts_superseded_still_valid_idx',
};

async function explain(pg: Client, s: Statement, drop: string[] = []): Promise<{ ms: number; paths: string[] }> {
  await pg.query('BEGIN');
  try {
    // DROP INDEX is transactional: the ROLLBACK below puts it back.
    for (const index of drop) await pg.query(`DROP INDEX ${index}`);
    for (const x of s.setup) await pg.query(x.text, [...x.params]);
    const { rows } = await pg.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${s.text}`, [...s.params]);
    const plan = (rows[0] as { 'QUERY PLAN': Array<{ Plan: PlanNode; 'Execution Time': number }> })['QUERY PLAN'][0]!;
    return { ms: round(plan['Execution Time']), paths: [...accessPaths(plan.Plan)].sort() };
  } finally {
    await pg.query('ROLLBACK');
  }
}

/**
 * `qualityReport` on the target namespace of the memory fixture (100k facts, with noise
 * namespaces of the same size around it): each check timed alone (median of BENCH_QUALITY_RUNS),
 * the access paths of its SQL (EXPLAIN ANALYZE) and Cypher (PROFILE), against a baseline measured
 * in the same run: a count(*) of the namespace's facts on its index.
 */
async function measureQuality(ctx: ScaleContext): Promise<Record<string, unknown>> {
  const { env } = ctx;
  const runs = Number(process.env.BENCH_QUALITY_RUNS ?? 3);
  const service = env.app.services.quality;
  const sql = Sql.of(env.app.ds);
  const pg = new Client({ connectionString: env.postgresUrl });
  await pg.connect();
  try {
    const baseline = await timed(runs, () => sql.one(`SELECT count(*)::int AS n FROM silver.facts WHERE namespace = $1`, [TARGET], (r) => r.n));
    const perCheck: Record<string, unknown> = {};
    const rows: Array<[string, { p50: number; p95: number; mean: number } | string]> = [['baseline: count(*) of the facts', baseline.ms]];
    for (const name of QUALITY_CHECKS) {
      // consistency_graph reads the stored answer that a first report, or the worker's refresh
      // stage, leaves behind: store one first, so every timed run is the read a user waits for
      // (computing it is timed in measureGraphConsistency, "computeAndStore").
      if (name === 'consistency_graph') await service.checks[name](TARGET);
      const t = await timed(runs, () => service.checks[name](TARGET));
      const result = await service.checks[name](TARGET);
      // The statements of this check, recorded on a second repository, then EXPLAINed one by one.
      const log: Statement[] = [];
      const recorded = recording(sql, log);
      const answers = new GraphConsistencyAnswers(new GraphConsistencyRepository(recorded), env.app.services.graph, {
        maxAgeSeconds: env.app.config.quality.consistencyMaxAgeSeconds,
        refreshSeconds: env.app.config.quality.consistencyRefreshSeconds,
      });
      const recorder = new QualityService(
        new QualityRepository(recorded),
        env.app.neo4j,
        answers,
        env.app.config.quality,
        new ChainVerificationRepository(recorded),
      );
      await recorder.checks[name](TARGET);
      const plans = [];
      for (const s of log) {
        const plan = await explain(pg, s);
        const ours = plan.paths.filter((p) => QUALITY_INDEXES[p]);
        const without =
          ours.length > 0
            ? await explain(
                pg,
                s,
                ours.map((p) => QUALITY_INDEXES[p] as string),
              )
            : undefined;
        plans.push({ ...plan, ...(without ? { withoutMigrationIndexes: without } : {}) });
      }
      const cypher = await cypherProfile(ctx, name);
      perCheck[name] = {
        ms: t.ms,
        overBaselineP50: round(t.ms.p50 / Math.max(0.01, baseline.ms.p50), 1),
        value: result.value,
        ok: result.ok,
        sql: plans.map((p) => ({
          executionMs: p.ms,
          accessPaths: p.paths,
          ...(p.withoutMigrationIndexes ? { withoutMigrationIndexes: p.withoutMigrationIndexes } : {}),
        })),
        ...(cypher ? { cypher } : {}),
      };
      const paths = [
        ...plans.flatMap((p) => [
          ...p.paths,
          ...(p.withoutMigrationIndexes ? [`(without them: ${p.withoutMigrationIndexes.ms} ms, ${p.withoutMigrationIndexes.paths.join(' ')})`] : []),
        ]),
        ...(cypher ? [`cypher ${cypher.dbHits} db hits`] : []),
      ];
      rows.push([name, `${t.ms.p50} ms p50 (${round(t.ms.p50 / Math.max(0.01, baseline.ms.p50), 1)}× baseline)  ${paths.join(', ')}`]);
    }
    const consistencyGraph = await measureGraphConsistency(ctx, runs);
    rows.push(['graphConsistency: bucket digests', consistencyGraph.bucketed.ms]);
    rows.push(['graphConsistency: full read (before)', consistencyGraph.fullRead.ms]);
    rows.push(['consistency_graph: compute and store (reader without a fresh answer; the refresh stage)', consistencyGraph.computeAndStore.ms]);
    rows.push(['consistency_graph: stored answer (the report)', consistencyGraph.storedAnswer.ms]);
    const overHttp = await timed(runs, () => graphql(env, REPORT, { ns: TARGET }));
    rows.push(['qualityReport over HTTP (all checks)', overHttp.ms]);
    printTable(`qualityReport, ${ctx.label} facts/namespace (median of ${runs} runs per check)`, rows);
    const slowest = Object.entries(perCheck).sort((a, b) => (b[1] as { ms: { p50: number } }).ms.p50 - (a[1] as { ms: { p50: number } }).ms.p50)[0];
    return {
      runs,
      gold: 'the fixture has no Gold rows (no promotion at this scale): the Gold checks read empty Gold tables; their Neo4j reads scan the namespace',
      baselineCountFactsMs: baseline.ms,
      qualityReportOverHttp: { ms: overHttp.ms, overBaselineP50: round(overHttp.ms.p50 / Math.max(0.01, baseline.ms.p50), 1) },
      checks: perCheck,
      consistencyGraph,
      slowest: slowest?.[0],
      totals: summarize(Object.values(perCheck).map((c) => (c as { ms: { p50: number } }).ms.p50)),
    };
  } finally {
    await pg.end();
  }
}

/**
 * `consistency_graph` two ways on the same data: the bucket digests it runs now, and the full read
 * of every key it ran before (`checkConsistencyByFullRead`), with the round trips of each (Cypher
 * statements; SQL statements on the app's pool, the fewest of the runs: a background loop may add some).
 */
async function measureGraphConsistency(ctx: ScaleContext, runs: number) {
  const { env } = ctx;
  const graph = env.app.services.graph;
  const cypherCount = countCypher(env.app.neo4j);
  const roundTrips = async (fn: () => Promise<unknown>) => {
    const seen = { cypher: Number.POSITIVE_INFINITY, sql: Number.POSITIVE_INFINITY };
    for (let i = 0; i < runs; i++) {
      cypherCount.reset();
      env.app.queryCounter.reset();
      await fn();
      seen.cypher = Math.min(seen.cypher, cypherCount.count);
      seen.sql = Math.min(seen.sql, env.app.queryCounter.count);
    }
    return seen;
  };
  const bucketed = await timed(runs, () => graph.checkConsistency(TARGET));
  const fullRead = await timed(runs, () => graph.checkConsistencyByFullRead(TARGET));
  const [a, b] = [await graph.checkConsistency(TARGET), await graph.checkConsistencyByFullRead(TARGET)];
  // Its two halves alone (they run concurrently in checkConsistency).
  const keys = { ...GRAPH_KEY_CYPHER, ...GOLD_GRAPH_KEY_CYPHER };
  const neo4jDigests = await timed(runs, () => readDigestsRaw(ctx, keys));
  const postgresDigests = await timed(runs, () => new GraphSourceRepository(env.app.ds).keyDigests(TARGET));
  // What the report does now (graph-consistency-answers.ts): compute and store an answer (a reader
  // with no answer younger than QUALITY_CONSISTENCY_MAX_AGE_SECONDS, or the worker's refresh), and
  // read the stored one with its age (every other report).
  const answers = new GraphConsistencyAnswers(new GraphConsistencyRepository(Sql.of(env.app.ds)), graph, {
    maxAgeSeconds: env.app.config.quality.consistencyMaxAgeSeconds,
    refreshSeconds: env.app.config.quality.consistencyRefreshSeconds,
  });
  const computeAndStore = await timed(runs, () => answers.compute(TARGET));
  const storedAnswer = await timed(runs, () => answers.forReport(TARGET));
  const read = await answers.forReport(TARGET);
  return {
    computeAndStore: { ms: computeAndStore.ms },
    storedAnswer: { ms: storedAnswer.ms, computedNow: read.computedNow, sameResult: isDeepStrictEqual(read.result, a) },
    bucketed: { ms: bucketed.ms, roundTrips: await roundTrips(() => graph.checkConsistency(TARGET)) },
    fullRead: { ms: fullRead.ms, roundTrips: await roundTrips(() => graph.checkConsistencyByFullRead(TARGET)) },
    neo4jDigestsAlone: neo4jDigests.ms,
    postgresSilverDigestsAlone: postgresDigests.ms,
    sameResult: JSON.stringify(a) === JSON.stringify(b),
    ok: a.ok,
    counts: a.postgres,
  };
}

async function readDigestsRaw(ctx: ScaleContext, keys: Record<string, GraphKeyCypher>) {
  const session = ctx.raw.session({ defaultAccessMode: 'READ' });
  try {
    return await session.executeRead((tx) => readKeyDigests(tx, TARGET, keys));
  } finally {
    await session.close();
  }
}

/** PROFILE of the Cypher a check runs (db hits and operators), or undefined for a check without Cypher. */
async function cypherProfile(ctx: ScaleContext, name: QualityCheckName) {
  const limit = 10;
  switch (name) {
    case 'orphan_gold_nodes':
      return profiled(ctx.raw, (tx) => orphanGoldNodes(tx, TARGET, limit));
    case 'duplicate_edges':
      return profiled(ctx.raw, (tx) => duplicateGraphEdges(tx, TARGET, limit));
    case 'temporal_consistency':
      return profiled(ctx.raw, (tx) => backwardGraphEdges(tx, TARGET, limit));
    default:
      return undefined;
  }
}

registerMemoryBench('quality', measureQuality);

/** `npm run bench -- quality`: same data as `search` and `provenance` (BENCH_FACTS=100000 for the 100k figures). */
export const qualityBench = (): Promise<void> => runMemoryBench('quality');
