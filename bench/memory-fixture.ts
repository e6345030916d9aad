import { execSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Driver, ManagedTransaction } from 'neo4j-driver';
import { Client } from 'pg';
import { AuthContext } from '../src/access/auth-context';
import { mergeEntityNodes } from '../src/graph/cypher/entity-nodes';
import { mergeEventNodes } from '../src/graph/cypher/event-nodes';
import { syncFactEdges } from '../src/graph/cypher/fact-edges';
import { FactNodeRow, mergeFactNodes } from '../src/graph/cypher/fact-nodes';
import { mergeRelationshipEdges } from '../src/graph/cypher/relationship-edges';
import { createNeo4jDriver, Neo4jConnection } from '../src/platform/neo4j/neo4j-client';
import { HashingEmbedder } from '../src/models/offline/hashing-embedder';
import { BenchEnv, nowMs, report, round, summarize, withBenchStores } from './harness';
import { Chunk, generateChunk, GenFact, searchQueries, Vocabulary, vocabulary } from './memory-data';

/**
 * The data and the run loop the `search` and `provenance` benchmarks share: per scale, fresh
 * stores, one target namespace and BENCH_NOISE_NAMESPACES noise namespaces of the same size,
 * loaded set-based (unnest INSERTs into Bronze/Silver; the projector's own Cypher functions into
 * Neo4j, UNWIND batches), then each requested benchmark measures on the same data.
 */

export const TARGET = 'bench-mem/target';
const CHUNK = 5_000;
const NEO4J_BATCH = 2_000;
const EXTRACTION_MODEL = 'bench-synthetic@1';

export interface LoadStats {
  factsPerNamespace: number;
  namespaces: number;
  totals: { facts: number; superseded: number; events: number; factSources: number; entities: number; relationships: number };
  chainLengths: Record<string, number>;
  /** Wall clock; generate/postgres/neo4j are busy time summed over the concurrent namespace loaders. */
  seconds: { total: number; generate: number; postgres: number; neo4j: number; analyze: number; neo4jAwaitIndexes: number };
  factsPerSecond: number;
  sizes: { postgresMiB: number; neo4jDirMiB: number };
  complete: boolean;
  /** Namespaces loaded completely (the target is first), and facts loaded per namespace. */
  namespacesComplete: number;
  factsByNamespace: Record<string, number>;
}

export interface Fixture {
  stats: LoadStats;
  embedder: HashingEmbedder;
  queries: Array<{ text: string; style: 'question' | 'keywords' }>;
  /** Target facts for provenance: members of supersession chains, and facts outside any chain. */
  chainFacts: string[];
  plainFacts: string[];
  /** The target namespace's current facts and their embeddings (row-major), for exact ground truth in JS. */
  current: { ids: string[]; vectors: Float32Array };
}

export interface ScaleContext {
  label: string;
  env: BenchEnv;
  auth: AuthContext;
  /** A driver of our own for the raw Cypher (the service's driver stays untouched). */
  raw: Driver;
  fixture: Fixture;
}

type Row = Record<string, unknown>;

async function insertEntities(pg: Client, ns: string, runId: string, v: Vocabulary, at: Date): Promise<void> {
  const rows = v.all.map((e) => ({ id: e.id, type: e.type, name: e.name, aliases: e.aliases }));
  await pg.query(
    `INSERT INTO silver.entities (id, namespace, type, name, name_key, aliases, alias_keys, recorded_at, derivation_run_id)
     SELECT t.id, $1, t.type, t.name, lower(t.name), ARRAY(SELECT jsonb_array_elements_text(t.aliases)),
            ARRAY(SELECT lower(jsonb_array_elements_text(t.aliases))), $2, $3
       FROM jsonb_to_recordset($4::jsonb) AS t(id uuid, type text, name text, aliases jsonb)`,
    [ns, at, runId, JSON.stringify(rows)],
  );
}

/** Bronze (keys, events, a done queue row each) and Silver (facts, sources, relationships) for one chunk. */
async function insertChunk(pg: Client, ns: string, runId: string, model: string, c: Chunk, months: Set<string>): Promise<void> {
  for (const e of c.events) {
    const m = `${e.occurredAt.toISOString().slice(0, 7)}-01`;
    if (!months.has(m)) {
      await pg.query(`SELECT bronze.ensure_event_partition($1::date)`, [m]);
      months.add(m);
    }
  }
  const ev = c.events;
  await pg.query(
    `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])
                AS t(id, source_event_id, conversation_id, sequence_num, role, content, checksum, occurred_at)
     ), k AS (
       INSERT INTO bronze.event_keys (namespace, source, source_event_id, event_id, occurred_at, checksum)
       SELECT $9, 'bench-chat', source_event_id, id, occurred_at, checksum FROM input
     ), e AS (
       INSERT INTO bronze.events (id, namespace, source, source_event_id, kind, conversation_id, sequence_num, role, content, checksum, occurred_at, ingested_at)
       SELECT id, $9, 'bench-chat', source_event_id, 'message', conversation_id, sequence_num, role, content, checksum, occurred_at, occurred_at + interval '2 seconds' FROM input
     )
     INSERT INTO ops.derivation_queue (event_id, namespace, occurred_at, conversation_id, sequence_num, status, processed_at)
     SELECT id, $9, occurred_at, conversation_id, sequence_num, 'done', occurred_at + interval '5 seconds' FROM input`,
    [
      ev.map((e) => e.id),
      ev.map((e) => e.sourceEventId),
      ev.map((e) => e.conversationId),
      ev.map((e) => e.sequenceNum),
      ev.map((e) => e.role),
      ev.map((e) => e.content),
      ev.map((e) => e.checksum),
      ev.map((e) => e.occurredAt),
      ns,
    ],
  );
  const f = c.facts;
  await pg.query(
    `INSERT INTO silver.facts (id, namespace, statement, fact_type, subject_entity_id, predicate, object_value, object_entity_id, is_negation, confidence,
                               importance, valid_from, valid_to, recorded_at, superseded_by, extraction_model, derivation_run_id, embedding, embedding_model)
     SELECT t.id, $1, t.statement, t.fact_type, t.subject, t.predicate, t.object_value, t.object_entity, false, t.confidence, t.importance,
            t.valid_from, t.valid_to, t.valid_from + interval '5 seconds', t.superseded_by, $2, $3, t.embedding::real[], $4
       FROM unnest($5::uuid[], $6::text[], $7::text[], $8::uuid[], $9::text[], $10::text[], $11::uuid[], $12::real[], $13::real[], $14::timestamptz[],
                   $15::timestamptz[], $16::uuid[], $17::text[])
            AS t(id, statement, fact_type, subject, predicate, object_value, object_entity, confidence, importance, valid_from, valid_to, superseded_by, embedding)`,
    [
      ns,
      EXTRACTION_MODEL,
      runId,
      model,
      f.map((x) => x.id),
      f.map((x) => x.statement),
      f.map((x) => x.factType),
      f.map((x) => x.subjectEntityId),
      f.map((x) => x.predicate),
      f.map((x) => x.objectValue),
      f.map((x) => x.objectEntityId),
      f.map((x) => x.confidence),
      f.map((x) => x.importance),
      f.map((x) => x.validFrom),
      f.map((x) => x.validTo),
      f.map((x) => x.supersededBy),
      f.map((x) => `{${x.embedding.join(',')}}`),
    ],
  );
  const s = f.flatMap((x) => x.sources.map((src) => ({ ...src, factId: x.id, at: x.validFrom })));
  await pg.query(
    `INSERT INTO silver.fact_sources (fact_id, event_id, span_start, span_end, quote, added_at)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int[], $4::int[], $5::text[], $6::timestamptz[])`,
    [s.map((x) => x.factId), s.map((x) => x.eventId), s.map((x) => x.spanStart), s.map((x) => x.spanEnd), s.map((x) => x.quote), s.map((x) => x.at)],
  );
  const r = c.relationships;
  if (r.length > 0) {
    await pg.query(
      `WITH t AS (SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::timestamptz[], $5::uuid[]) AS t(id, src, dst, valid_from, event_id)),
       ins AS (INSERT INTO silver.relationships (id, namespace, type, source_entity_id, target_entity_id, confidence, valid_from, recorded_at, extraction_model, derivation_run_id)
               SELECT id, $6, 'works_on', src, dst, 0.8, valid_from, valid_from, $7, $8 FROM t)
       INSERT INTO silver.relationship_sources (relationship_id, event_id) SELECT id, event_id FROM t`,
      [
        r.map((x) => x.id),
        r.map((x) => x.sourceEntityId),
        r.map((x) => x.targetEntityId),
        r.map((x) => x.validFrom),
        r.map((x) => x.eventId),
        ns,
        EXTRACTION_MODEL,
        runId,
      ],
    );
  }
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

function factRow(ns: string, model: string, x: GenFact): FactNodeRow {
  return {
    id: x.id,
    namespace: ns,
    statement: x.statement,
    factType: x.factType,
    predicate: x.predicate,
    object: x.objectValue,
    isNegation: false,
    confidence: x.confidence,
    importance: x.importance,
    validFrom: x.validFrom.toISOString(),
    validTo: iso(x.validTo),
    recordedAt: new Date(x.validFrom.getTime() + 5_000).toISOString(),
    retiredAt: null,
    extractionModel: EXTRACTION_MODEL,
    supersededBy: x.supersededBy,
    subjectEntityId: x.subjectEntityId,
    objectEntityId: x.objectEntityId,
    embedding: x.embedding,
    embeddingModel: model,
    sources: x.sources.map((s) => ({ eventId: s.eventId, spanStart: s.spanStart, spanEnd: s.spanEnd, quote: s.quote })),
  };
}

async function write(driver: Driver, work: (tx: ManagedTransaction) => Promise<void>): Promise<void> {
  const session = driver.session();
  try {
    await session.executeWrite(work);
  } finally {
    await session.close();
  }
}

/** The same node and edge shapes the projector writes, with its own functions, in UNWIND batches. */
async function projectChunk(driver: Driver, ns: string, embedder: HashingEmbedder, c: Chunk): Promise<void> {
  const model = embedder.model;
  // Neighbouring turns of a conversation within the chunk, as graph-source.repository.ts finds them.
  const turn = new Map(c.events.map((e) => [`${e.conversationId}\u0000${e.sequenceNum}`, e.id]));
  const neighbour = (e: (typeof c.events)[number], step: number): string | null => turn.get(`${e.conversationId}\u0000${e.sequenceNum + step}`) ?? null;
  for (let i = 0; i < c.events.length; i += NEO4J_BATCH) {
    // Events as the projector writes them: content and the turn before (event_stems_fulltext: stems, context, speaker) and its embedding (event_embedding).
    const rows = c.events.slice(i, i + NEO4J_BATCH).map((e) => ({
      id: e.id,
      namespace: ns,
      source: 'bench-chat',
      kind: 'message',
      conversationId: e.conversationId,
      sessionId: null,
      sequenceNum: e.sequenceNum,
      role: e.role,
      actor: null,
      content: e.content,
      occurredAt: e.occurredAt.toISOString(),
      ingestedAt: new Date(e.occurredAt.getTime() + 2_000).toISOString(),
      embedding: embedder.embedOne(e.content).map(Math.fround),
      embeddingModel: model,
      previousEventId: neighbour(e, -1),
      nextEventId: neighbour(e, 1),
    }));
    await write(driver, (tx) => mergeEventNodes(tx, rows));
  }
  for (let i = 0; i < c.facts.length; i += NEO4J_BATCH) {
    const rows = c.facts.slice(i, i + NEO4J_BATCH).map((x) => factRow(ns, model, x));
    await write(driver, async (tx) => {
      await mergeFactNodes(tx, rows);
      await syncFactEdges(tx, rows);
    });
  }
  const rel = c.relationships.map((r) => ({
    id: r.id,
    namespace: ns,
    type: 'works_on',
    sourceEntityId: r.sourceEntityId,
    targetEntityId: r.targetEntityId,
    confidence: 0.8,
    validFrom: r.validFrom.toISOString(),
    validTo: null,
    retiredAt: null,
    sources: [r.eventId],
  }));
  if (rel.length > 0) await write(driver, (tx) => mergeRelationshipEdges(tx, rel));
}

function dirMiB(dir: string): number {
  let bytes = 0;
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) bytes += fs.statSync(p).size;
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return round(bytes / 2 ** 20, 0);
}

interface LoadState {
  embedder: HashingEmbedder;
  driver: Driver;
  perNs: number;
  /** Facts in each noise namespace (BENCH_NOISE_FACTS; default: as many as the target). */
  noisePerNs: number;
  deadline: number;
  t: { generate: number; postgres: number; neo4j: number };
  totals: LoadStats['totals'];
  chainLengths: Record<string, number>;
  chainFacts: string[];
  plainFacts: string[];
  current: Array<{ id: string; embedding: number[] }>;
  /** Bronze partitions made by this load (each scale starts on fresh stores). */
  months: Set<string>;
  namespacesComplete: number;
  factsByNamespace: Record<string, number>;
  complete: boolean;
  progress: (ns: number) => void;
}

/** One namespace: its run, entities, then chunks of events and facts into both stores side by side. */
async function loadNamespace(pg: Client, s: LoadState, ns: string, n: number): Promise<Vocabulary> {
  const seed = 1000 + n;
  const size = n === 0 ? s.perNs : s.noisePerNs;
  const v = vocabulary(seed, size);
  const { model } = s.embedder;
  const { rows } = await pg.query<{ id: string }>(
    `INSERT INTO silver.derivation_runs (namespace, kind, extraction_model, judge_model, embedding_model, worker_id, event_count, fact_count)
     VALUES ($1, 'rebuild', $2, $2, $3, 'bench', $4, $4) RETURNING id`,
    [ns, EXTRACTION_MODEL, model, size],
  );
  const runId = rows[0]?.id as string;
  await insertEntities(pg, ns, runId, v, new Date(Date.UTC(2025, 0, 1)));
  const entityRows = v.all.map((e) => ({ id: e.id, namespace: ns, type: e.type, name: e.name, aliases: e.aliases, retiredAt: null }));
  await write(s.driver, (tx) => mergeEntityNodes(tx, entityRows));
  s.totals.entities += v.all.length;
  for (let from = 0; from < size; from += CHUNK) {
    if (nowMs() > s.deadline) {
      s.complete = false;
      return v;
    }
    let t0 = nowMs();
    const chunk = generateChunk(seed, v, size, from, Math.min(CHUNK, size - from), s.embedder);
    s.t.generate += nowMs() - t0;
    t0 = nowMs();
    const busy = async (key: 'postgres' | 'neo4j', p: Promise<void>) => {
      await p;
      s.t[key] += nowMs() - t0;
    };
    await Promise.all([busy('postgres', insertChunk(pg, ns, runId, model, chunk, s.months)), busy('neo4j', projectChunk(s.driver, ns, s.embedder, chunk))]);
    for (const f of chunk.facts) {
      if (f.supersededBy) s.totals.superseded += 1;
      s.totals.factSources += f.sources.length;
      if (f.chainLength > 0 && f.supersededBy === null) s.chainLengths[f.chainLength] = (s.chainLengths[f.chainLength] ?? 0) + 1;
      if (n === 0) (f.chainLength > 0 || f.supersededBy ? s.chainFacts : s.plainFacts).push(f.id);
      if (n === 0 && f.supersededBy === null) s.current.push({ id: f.id, embedding: f.embedding });
    }
    s.totals.facts += chunk.facts.length;
    s.factsByNamespace[ns] = (s.factsByNamespace[ns] ?? 0) + chunk.facts.length;
    s.totals.events += chunk.events.length;
    s.totals.relationships += chunk.relationships.length;
    s.progress(n);
  }
  s.namespacesComplete += 1;
  return v;
}

/**
 * Loads every namespace, BENCH_LOAD_CONCURRENCY (default 3) at a time; stops early
 * (complete: false) once the load budget is spent.
 */
async function loadFixture(
  env: BenchEnv,
  neo4j: Neo4jConnection,
  neo4jDir: string,
  label: string,
  perNs: number,
  noise: number,
  budgetMs: number,
  noisePerNs: number = perNs,
): Promise<Fixture> {
  const namespaces = [TARGET, ...Array.from({ length: noise }, (_, i) => `bench-mem/noise-${String(i + 1).padStart(2, '0')}`)];
  const all = perNs + noisePerNs * noise;
  const start = nowMs();
  let lastPrint = start;
  const s: LoadState = {
    embedder: new HashingEmbedder(),
    driver: createNeo4jDriver(neo4j, { maxRetryMs: 30_000 }),
    perNs,
    noisePerNs,
    deadline: start + budgetMs,
    t: { generate: 0, postgres: 0, neo4j: 0 },
    totals: { facts: 0, superseded: 0, events: 0, factSources: 0, entities: 0, relationships: 0 },
    chainLengths: {},
    chainFacts: [],
    plainFacts: [],
    current: [],
    months: new Set(),
    namespacesComplete: 0,
    factsByNamespace: {},
    complete: true,
    progress: (ns) => {
      if (nowMs() - lastPrint < 15_000) return;
      lastPrint = nowMs();
      const secs = (lastPrint - start) / 1000;
      const rate = s.totals.facts / secs;
      process.stdout.write(
        `[load ${label}] namespace ${ns + 1}/${namespaces.length}: ${s.totals.facts.toLocaleString('en')}/${all.toLocaleString('en')} facts, ${Math.round(rate)} facts/s, ` +
          `${Math.round(secs)} s, eta ${Math.round((all - s.totals.facts) / rate / 60)} min (busy: generate ${Math.round(s.t.generate / 1000)} s, ` +
          `postgres ${Math.round(s.t.postgres / 1000)} s, neo4j ${Math.round(s.t.neo4j / 1000)} s; load average ${os.loadavg()[0]?.toFixed(1)})\n`,
      );
    },
  };
  const pending = [...namespaces.entries()];
  let target: Vocabulary | undefined;
  const pg = new Client({ connectionString: env.postgresUrl });
  await pg.connect();
  try {
    const concurrency = Number(process.env.BENCH_LOAD_CONCURRENCY ?? 3);
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        const own = new Client({ connectionString: env.postgresUrl });
        await own.connect();
        try {
          for (let next = pending.shift(); next && s.complete; next = pending.shift()) {
            const v = await loadNamespace(own, s, next[1], next[0]);
            if (next[0] === 0) target = v;
          }
        } finally {
          await own.end();
        }
      }),
    );
    const loaded = nowMs();
    await pg.query('ANALYZE');
    const analyze = nowMs() - loaded;
    const session = s.driver.session();
    try {
      await session.run('CALL db.awaitIndexes(3600)');
    } finally {
      await session.close();
    }
    const settle = nowMs() - loaded - analyze;
    const { rows } = await pg.query<{ b: string }>(`SELECT pg_database_size(current_database())::text AS b`);
    const total = (nowMs() - start) / 1000;
    const stats: LoadStats = {
      factsPerNamespace: perNs,
      namespaces: namespaces.length,
      totals: s.totals,
      chainLengths: s.chainLengths,
      seconds: {
        total: round(total, 1),
        generate: round(s.t.generate / 1000, 1),
        postgres: round(s.t.postgres / 1000, 1),
        neo4j: round(s.t.neo4j / 1000, 1),
        analyze: round(analyze / 1000, 1),
        neo4jAwaitIndexes: round(settle / 1000, 1),
      },
      factsPerSecond: round(s.totals.facts / total, 0),
      sizes: { postgresMiB: round(Number(rows[0]?.b ?? 0) / 2 ** 20, 0), neo4jDirMiB: dirMiB(neo4jDir) },
      complete: s.complete,
      namespacesComplete: s.namespacesComplete,
      factsByNamespace: s.factsByNamespace,
    };
    process.stdout.write(`[load ${label}] ${s.complete ? 'done' : 'STOPPED (budget spent)'}: ${JSON.stringify(stats)}\n`);
    const dims = s.embedder.dimensions;
    const vectors = new Float32Array(s.current.length * dims);
    s.current.forEach((c, i) => vectors.set(c.embedding, i * dims));
    return {
      stats,
      embedder: s.embedder,
      queries: searchQueries(42, target as Vocabulary, Number(process.env.BENCH_QUERIES ?? 200) + 30),
      chainFacts: s.chainFacts,
      plainFacts: s.plainFacts,
      current: { ids: s.current.map((c) => c.id), vectors },
    };
  } finally {
    await pg.end();
    await s.driver.close();
  }
}

export type MemoryBenchKind = 'search' | 'provenance' | 'quality';
type Measure = (ctx: ScaleContext) => Promise<Record<string, unknown>>;
const measures = new Map<MemoryBenchKind, Measure>();
const measured = new Set<MemoryBenchKind>();

/** Called at import by search.ts / provenance.ts. */
export function registerMemoryBench(kind: MemoryBenchKind, measure: Measure): void {
  measures.set(kind, measure);
}

/** The memory benchmarks named on the command line (all when none is): they share one load per scale. */
function requestedWith(kind: MemoryBenchKind): MemoryBenchKind[] {
  const names = process.argv.slice(2);
  const all = [...measures.keys()];
  const wanted = names.length === 0 ? all : (names.filter((n) => all.includes(n as MemoryBenchKind)) as MemoryBenchKind[]);
  return (wanted.includes(kind) ? wanted : [kind]).filter((k) => !measured.has(k));
}

/** The commit measured, and any uncommitted change under src/ (other sessions edit the tree while a run goes on). */
function codeVersion(): { commit: string; uncommittedSrc: string[] } {
  try {
    const run = (cmd: string) =>
      execSync(cmd, { cwd: path.resolve(__dirname, __dirname.includes(`${path.sep}dist${path.sep}`) ? '../..' : '..'), encoding: 'utf8' }).trim();
    return { commit: run('git rev-parse --short HEAD'), uncommittedSrc: run('git status --porcelain -- src').split('\n').filter(Boolean) };
  } catch {
    return { commit: 'unknown', uncommittedSrc: [] };
  }
}

const scaleLabel = (n: number): string => (n % 1000 === 0 ? `${n / 1000}k` : String(n));
const loadavg = (): number[] => os.loadavg().map((x) => round(x, 2));

/**
 * Runs `kind` (and the other memory benchmarks requested in this process, on the same data) at
 * each scale of BENCH_FACTS (facts per namespace, default 10000,100000); writes `<kind>-<scale>.json`.
 */
export async function runMemoryBench(kind: MemoryBenchKind): Promise<void> {
  if (measured.has(kind)) {
    process.stdout.write(`${kind}: already measured on the same data as the benchmark before it\n`);
    return;
  }
  const kinds = requestedWith(kind);
  const scales = (process.env.BENCH_FACTS ?? '10000,100000').split(',').map((s) => Number(s.trim()));
  const noise = Number(process.env.BENCH_NOISE_NAMESPACES ?? 10);
  const noiseFacts = process.env.BENCH_NOISE_FACTS ? Number(process.env.BENCH_NOISE_FACTS) : undefined;
  const budgetMs = Number(process.env.BENCH_LOAD_BUDGET_MIN ?? 40) * 60_000;
  const code = codeVersion();
  for (const perNs of scales) {
    const label = scaleLabel(perNs);
    await withBenchStores(async (b) => {
      const env = await b.startApp({ OFFLINE_EMBEDDER: 'hashing' }, { api: true, worker: false });
      const raw = createNeo4jDriver(b.stores.neo4j);
      try {
        const before = loadavg();
        const fixture = await loadFixture(env, b.stores.neo4j, path.join(b.dataDir, 'neo4j'), label, perNs, noise, budgetMs, noiseFacts ?? perNs);
        const common = {
          scale: label,
          code,
          namespaces: { target: TARGET, noise, factsEach: perNs, noiseFactsEach: noiseFacts ?? perNs },
          stores: { neo4jPageCacheMb: env.app.config.neo4jPageCacheMb, neo4jHeapMb: 1024, embedder: 'hashing (OFFLINE_EMBEDDER=hashing), 384 dimensions' },
          load: { ...fixture.stats, loadavgBefore: before, loadavgAfter: loadavg() },
        };
        const targetLoaded = (fixture.stats.factsByNamespace[TARGET] ?? 0) === perNs;
        const partial = fixture.stats.complete
          ? undefined
          : `load stopped after ${budgetMs / 60_000} min (BENCH_LOAD_BUDGET_MIN) with ${fixture.stats.totals.facts} of ${perNs + (noiseFacts ?? perNs) * noise} facts: ` +
            (targetLoaded
              ? `measured on the full target and ${fixture.stats.namespacesComplete - 1} complete noise namespaces (+ the part of the ones in progress)`
              : 'the target namespace is incomplete, nothing measured');
        if (!targetLoaded) {
          for (const k of kinds) report(`${k}-${label}`, { ...common, unfinished: partial });
          return;
        }
        const auth = await env.app.services.tokens.authenticate(`Bearer ${env.adminToken}`);
        for (const k of kinds) {
          const result = await (measures.get(k) as Measure)({ label, env, auth, raw, fixture });
          report(`${k}-${label}`, { ...common, ...(partial ? { partial } : {}), ...result });
        }
      } finally {
        await raw.close();
        await env.app.stop();
      }
    });
  }
  for (const k of kinds) measured.add(k);
}

export interface Timed {
  ms: ReturnType<typeof summarize>;
  loadavg: { start: number[]; end: number[] };
}

/** Runs `fn(i)` for i in [0, n) one after another: the latencies (`samples`, in i order) and their summary. */
export async function timed(n: number, fn: (i: number) => Promise<unknown>): Promise<Timed & { samples: number[] }> {
  const start = loadavg();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = nowMs();
    await fn(i);
    samples.push(nowMs() - t0);
  }
  return { ms: summarize(samples), loadavg: { start, end: loadavg() }, samples };
}

/** A Timed without its samples, for the result file. */
export const published = ({ ms, loadavg: l }: Timed): Timed => ({ ms, loadavg: l });

/** A readable table of latency summaries on stdout. */
export function printTable(title: string, rows: Array<[string, { p50: number; p95: number; mean: number } | string]>): void {
  const w = Math.max(...rows.map(([name]) => name.length), 10);
  const num = (n: number) => n.toFixed(2).padStart(9);
  const lines = rows.map(([name, s]) => `  ${name.padEnd(w)} ${typeof s === 'string' ? s : `${num(s.p50)} ${num(s.p95)} ${num(s.mean)}`}`);
  process.stdout.write(`\n${title}\n  ${''.padEnd(w)} ${'p50 ms'.padStart(9)} ${'p95 ms'.padStart(9)} ${'mean ms'.padStart(9)}\n${lines.join('\n')}\n`);
}

/** Counts Cypher statements run through `driver`'s managed read transactions (the services' only way in). */
export function countCypher(driver: Driver): { count: number; reset(): void } {
  const counter = { count: 0, reset: () => void (counter.count = 0) };
  const open = driver.session.bind(driver);
  Object.assign(driver, {
    session: (...args: Parameters<Driver['session']>) => {
      const session = open(...args);
      const executeRead = session.executeRead.bind(session);
      Object.assign(session, {
        executeRead: <T>(work: (tx: ManagedTransaction) => Promise<T>, config?: Parameters<typeof executeRead>[1]) =>
          executeRead(
            (tx) =>
              work(
                new Proxy(tx, {
                  get(target, prop, receiver) {
                    if (prop !== 'run') return Reflect.get(target, prop, receiver);
                    return (...a: Parameters<ManagedTransaction['run']>) => {
                      counter.count += 1;
                      return target.run(...a);
                    };
                  },
                }),
              ),
            config,
          ),
      });
      return session;
    },
  });
  return counter;
}

/** One GraphQL request over HTTP; throws on errors. */
export async function graphql<T>(env: BenchEnv, query: string, variables: Row): Promise<T> {
  const res = await fetch(`${env.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${env.adminToken}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: unknown[] };
  if (!body.data || body.errors) throw new Error(`GraphQL error: ${JSON.stringify(body).slice(0, 500)}`);
  return body.data;
}

/** A read transaction of its own, like the services open per query. */
export async function readTx<T>(driver: Driver, work: (tx: ManagedTransaction) => Promise<T>): Promise<T> {
  const session = driver.session({ defaultAccessMode: 'READ' });
  try {
    return await session.executeRead(work);
  } finally {
    await session.close();
  }
}

interface PlanNode {
  operatorType: string;
  rows: number;
  dbHits: number;
  pageCacheHits?: number;
  pageCacheMisses?: number;
  arguments: Record<string, unknown>;
  children: PlanNode[];
}

/** One line per operator: `Operator rows=… dbHits=… details`, children indented. */
function planLines(p: PlanNode, depth = 0): string[] {
  const details = String(p.arguments?.Details ?? '')
    .replace(/\s+/g, ' ')
    .slice(0, 160);
  const cache = p.pageCacheHits || p.pageCacheMisses ? ` pageCache=${p.pageCacheHits ?? 0}/${p.pageCacheMisses ?? 0}miss` : '';
  return [
    `${'  '.repeat(depth)}${p.operatorType} rows=${p.rows} dbHits=${p.dbHits}${cache}${details ? ` ${details}` : ''}`,
    ...p.children.flatMap((c) => planLines(c, depth + 1)),
  ];
}

const sumHits = (p: PlanNode): number => p.dbHits + p.children.reduce((a, c) => a + sumHits(c), 0);

/** Runs `work` once with every statement PROFILEd: the operator trees, total db hits and wall time. */
export async function profiled(driver: Driver, work: (tx: ManagedTransaction) => Promise<unknown>): Promise<{ ms: number; dbHits: number; plans: string[][] }> {
  const plans: PlanNode[] = [];
  const t0 = nowMs();
  await readTx(driver, (tx) =>
    work(
      new Proxy(tx, {
        get(target, prop, receiver) {
          if (prop !== 'run') return Reflect.get(target, prop, receiver);
          return async (q: string, params: Record<string, unknown>) => {
            const res = await target.run(`PROFILE ${q}`, params);
            if (res.summary.profile) plans.push(res.summary.profile as unknown as PlanNode);
            return res;
          };
        },
      }),
    ),
  );
  return { ms: round(nowMs() - t0), dbHits: plans.reduce((a, p) => a + sumHits(p), 0), plans: plans.map((p) => planLines(p)) };
}

export { round, summarize, nowMs };
