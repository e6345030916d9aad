import neo4j, { Driver } from 'neo4j-driver';
import { ScoredId } from '../src/graph/cypher/search-channel';
import { namespaceKey } from '../src/platform/neo4j/namespace-key';
import { Fixture, readTx, round, summarize, timed, TARGET } from './memory-fixture';

/**
 * Where a large namespace's vector search could run (issue 45 item 3), measured side by side on
 * the `search` benchmark's data, each against exact cosine over the target's current facts:
 *
 * - `shared`: the one `fact_embedding` index of every namespace (today's index path), asked for
 *   `firstCandidates` neighbours and post-filtered by namespace;
 * - `partition`: an index of the target's namespace partition only (a label on its nodes and on
 *   those of the noise namespaces that hash to the same one of `PARTITIONS` partitions), asked for
 *   as many neighbours as the namespace's share of the partition needs, at several margins;
 * - `in-process exact`: the target's current vectors held in this process, scored in JavaScript
 *   (one core; the API's process would do this per search).
 */
export const PARTITIONS = 16;
/** Neighbours asked per wanted hit, over the namespace's share of the index. */
const MARGINS = [1.5, 2, 3, 5];

interface DesignResult {
  ms: ReturnType<typeof summarize>;
  recallAt10: number;
  candidates?: number;
}

/** The partition of a namespace: the first byte of its key, modulo the partitions. */
export function partitionOf(namespace: string, partitions = PARTITIONS): number {
  return parseInt(namespaceKey(namespace).slice(1, 3), 16) % partitions;
}

const QUERY = `CALL db.index.vector.queryNodes($index, $candidates, $vector) YIELD node AS f, score
  WITH f, score WHERE f.embeddingModel = $model AND f.namespace = $ns AND f.validTo IS NULL AND f.retiredAt IS NULL
  RETURN f.id AS id, score, [(f)-[:DERIVED_FROM]->(ev:Event) | ev.id] AS events ORDER BY score DESC, id LIMIT $k`;

async function indexCall(driver: Driver, index: string, model: string, vector: number[], candidates: number, k: number): Promise<ScoredId[]> {
  return readTx(driver, async (tx) => {
    const res = await tx.run(QUERY, { index, candidates: neo4j.int(candidates), vector, model, ns: TARGET, k: neo4j.int(k) });
    return res.records.map((r) => ({ id: r.get('id') as string, score: Number(r.get('score')) }));
  });
}

/** Exact cosine top k over unit vectors held in memory (one pass, a bounded insertion list). */
export function exactTopK(ids: readonly string[], unit: Float32Array, dims: number, q: number[], k: number): ScoredId[] {
  const qn = Math.hypot(...q) || 1;
  const query = Float32Array.from(q, (x) => x / qn);
  const top: ScoredId[] = [];
  for (let i = 0, o = 0; i < ids.length; i++, o += dims) {
    let dot = 0;
    for (let j = 0; j < dims; j++) dot += (unit[o + j] as number) * (query[j] as number);
    const score = (1 + dot) / 2;
    if (top.length === k && score <= (top[k - 1] as ScoredId).score) continue;
    let at = top.length;
    while (at > 0 && (top[at - 1] as ScoredId).score < score) at--;
    top.splice(at, 0, { id: ids[i] as string, score });
    if (top.length > k) top.pop();
  }
  return top;
}

/**
 * Measures the designs over `queries` (their vectors), with `truth` (exact top 10 per query) and
 * `recall` (tie-aware recall@10 of a list against the truth).
 */
export async function compareVectorDesigns(
  raw: Driver,
  fixture: Fixture,
  queries: ReadonlyArray<{ vector: number[] }>,
  truth: ReadonlyArray<ScoredId[]>,
  recall: (got: ScoredId[], exact: ScoredId[]) => number,
  shared: { candidates: number; k: number },
): Promise<Record<string, unknown>> {
  const model = fixture.embedder.model;
  const k = shared.k;
  const n = queries.length;
  const q = (i: number) => (queries[i] as { vector: number[] }).vector;
  const measure = async (label: string, run: (i: number) => Promise<ScoredId[]>, candidates?: number): Promise<[string, DesignResult]> => {
    const recalls: number[] = [];
    const t = await timed(n, async (i) => recalls.push(recall(await run(i), truth[i] as ScoredId[])));
    return [label, { ms: t.ms, recallAt10: round(recalls.reduce((a, b) => a + b, 0) / n, 3), ...(candidates ? { candidates } : {}) }];
  };
  const results: Array<[string, DesignResult]> = [];
  results.push(
    await measure('shared index (as the service asks it)', (i) => indexCall(raw, 'fact_embedding', model, q(i), shared.candidates, k), shared.candidates),
  );
  const sharedShare = (fixture.stats.factsByNamespace[TARGET] ?? 1) / Object.values(fixture.stats.factsByNamespace).reduce((a, b) => a + b, 0);
  for (const margin of MARGINS) {
    const candidates = Math.ceil((margin * k) / sharedShare);
    results.push(await measure(`shared index, ${margin} × k ÷ share`, (i) => indexCall(raw, 'fact_embedding', model, q(i), candidates, k), candidates));
  }

  // The target's partition: its namespace and the noise namespaces that hash to the same one.
  const part = partitionOf(TARGET);
  const members = Object.keys(fixture.stats.factsByNamespace).filter((ns) => partitionOf(ns) === part);
  const t0 = performance.now();
  const session = raw.session();
  let partitionNodes: number;
  try {
    await session.run(`MATCH (f:Fact) WHERE f.namespace IN $members CALL (f) { SET f:BenchPartitionFact } IN TRANSACTIONS OF 10000 ROWS`, { members });
    await session.run(
      "CREATE VECTOR INDEX bench_partition_fact IF NOT EXISTS FOR (f:BenchPartitionFact) ON (f.embedding) OPTIONS { indexConfig: { `vector.similarity_function`: 'cosine' } }",
    );
    await session.run(`CALL db.awaitIndex('bench_partition_fact', 3600)`);
    partitionNodes = Number((await session.run(`MATCH (f:BenchPartitionFact) RETURN count(f) AS n`)).records[0]?.get('n') ?? 0);
  } finally {
    await session.close();
  }
  const buildSeconds = round((performance.now() - t0) / 1000, 1);
  const targetFacts = fixture.stats.factsByNamespace[TARGET] ?? 1;
  const share = targetFacts / Math.max(partitionNodes, targetFacts);
  for (const margin of MARGINS) {
    const candidates = Math.ceil((margin * k) / share);
    results.push(
      await measure(`partition index, ${margin} × k ÷ share`, (i) => indexCall(raw, 'bench_partition_fact', model, q(i), candidates, k), candidates),
    );
  }

  // In process: unit vectors of the target's current facts, scored in JavaScript.
  const dims = fixture.embedder.dimensions;
  const unit = new Float32Array(fixture.current.vectors.length);
  for (let i = 0, o = 0; i < fixture.current.ids.length; i++, o += dims) {
    let norm = 0;
    for (let j = 0; j < dims; j++) norm += (fixture.current.vectors[o + j] as number) ** 2;
    norm = Math.sqrt(norm) || 1;
    for (let j = 0; j < dims; j++) unit[o + j] = (fixture.current.vectors[o + j] as number) / norm;
  }
  const cpu0 = process.cpuUsage();
  results.push(await measure('in-process exact (JavaScript, one core)', async (i) => exactTopK(fixture.current.ids, unit, dims, q(i), k)));
  const cpu = process.cpuUsage(cpu0);

  const cleanup = raw.session();
  try {
    await cleanup.run('DROP INDEX bench_partition_fact IF EXISTS');
    await cleanup.run(`MATCH (f:BenchPartitionFact) CALL (f) { REMOVE f:BenchPartitionFact } IN TRANSACTIONS OF 10000 ROWS`);
  } finally {
    await cleanup.close();
  }
  return {
    designs: Object.fromEntries(results),
    partition: { partitions: PARTITIONS, members, nodes: partitionNodes, targetShare: round(share, 3), labelAndIndexSeconds: buildSeconds },
    inProcessCpuMsPerQuery: round((cpu.user + cpu.system) / 1000 / n, 1),
    inProcessMemoryMiB: round((unit.byteLength + fixture.current.ids.length * 40) / 2 ** 20, 1),
    note: 'each design answers the same queries (k = the channel depth), timed one after another in its own read transaction; recall@10 tie-aware against exact cosine in JS over the target current facts',
  };
}
