import { randomBytes } from 'node:crypto';
import { searchLoaders } from '../src/graph/evidence';
import { Client } from 'pg';
import os from 'node:os';
import type { Driver, ManagedTransaction, Session } from 'neo4j-driver';
import { createLoaders } from '../src/scope/request-scope';
import { DEFAULT_SEARCH_SETTINGS, SearchService } from '../src/graph/search.service';
import { entityNameSearch, FactSearchScope, factVectorSearch } from '../src/graph/cypher/search-facts';
import { eventVectorSearch } from '../src/graph/cypher/search-events';
import { loadEmbedder } from '../src/app/models';
import type { Embedder } from '../src/silver/model-ports';
import fs from 'node:fs';
import { nowMs, percentile, report, round, withBenchApp, withBenchStores } from './harness';
import { childrenOf, cpuSeconds } from './service-process';
import { printTable } from './memory-fixture';
import { fusedCandidates, rankingPriors, rankMemoryHits, toLuceneQuery } from '../src/graph/search-ranking';
import { ATTR, traced } from '../src/platform/telemetry/tracing';
import { pipelineMetrics } from '../src/platform/telemetry/metrics';
import { loadLocomo, locomoFile } from './locomo';
import { ingestTurns, Post, poster, promoteAll, SEARCH, turnEvents, waitSettled } from './recall';

type Parts = Record<string, number[]>;

/** A statement as sent: its channel label, text and parameters (search-tail re-runs it under PROFILE). */
interface SentStatement {
  label: string;
  query: string;
  params: Record<string, unknown>;
}

/**
 * A driver whose read transactions and statements are timed, each statement under its channel's
 * name (from its text), so a search's Neo4j time splits by channel. A statement's time runs from
 * sending it to its last record: statements pipelined in one transaction include their wait.
 */
function timedDriver(driver: Driver, parts: Parts, counts: { tx: number; statements: number }, sent?: SentStatement[]): Driver {
  return new Proxy(driver, {
    get(target, prop, receiver) {
      if (prop !== 'session') return Reflect.get(target, prop, receiver) as unknown;
      return (...args: Parameters<Driver['session']>): Session => {
        const session = target.session(...args);
        const executeRead = session.executeRead.bind(session);
        session.executeRead = (async <T>(work: (tx: ManagedTransaction) => Promise<T>) => {
          const t0 = nowMs();
          counts.tx += 1;
          try {
            return await executeRead((tx) =>
              work(
                new Proxy(tx, {
                  get(t, p, r) {
                    if (p !== 'run') return Reflect.get(t, p, r) as unknown;
                    return (query: string, params?: Record<string, unknown>) => {
                      const label = labelOf(query);
                      const started = nowMs();
                      counts.statements += 1;
                      sent?.push({ label, query, params: params ?? {} });
                      const result = t.run(query, params);
                      result.then(
                        () => (parts[`neo4j statement: ${label}`] ??= []).push(nowMs() - started),
                        () => undefined,
                      );
                      return result;
                    };
                  },
                }),
              ),
            );
          } finally {
            (parts['neo4j read transaction'] ??= []).push(nowMs() - t0);
          }
        }) as Session['executeRead'];
        return session;
      };
    },
  });
}

function labelOf(query: string): string {
  const q = query.replace(/\s+/g, ' ');
  if (/queryNodes\('fact_stems/.test(q)) return 'fact keyword';
  if (/queryNodes\('entity_name/.test(q)) return 'entity names';
  if (/queryNodes\('event_(text|body|stems)/.test(q)) return 'event keyword';
  if (/queryNodes\('fact_embedding/.test(q)) return 'fact vector index';
  if (/queryNodes\('event_embedding/.test(q)) return 'event vector index';
  if (/UNWIND \$seedIds/.test(q)) return 'graph expansion';
  if (/^ ?MATCH \(n:Fact\)/.test(q)) return 'fact count + exact cosine';
  if (/^ ?MATCH \(n:Event\)/.test(q)) return 'event count + exact cosine';
  if (/count\((f|e)\)/.test(q)) return /\(f:Fact\)/.test(q) ? 'fact count' : 'event count';
  if (/^ ?MATCH \(f:Fact\).*similarity\.cosine/.test(q)) return 'fact exact cosine';
  if (/^ ?MATCH \(e:Event\).*similarity\.cosine/.test(q)) return 'event exact cosine';
  return q.slice(0, 40);
}

const summary = (xs: number[]) => ({
  n: xs.length,
  p50: round(percentile(xs, 50)),
  p95: round(percentile(xs, 95)),
  mean: round(xs.reduce((a, b) => a + b, 0) / xs.length),
});

/** Every process below `pid` (a benchmark's stores: the embedded PostgreSQL and its backends, the local Neo4j). */
function descendants(pid: number): number[] {
  const out: number[] = [];
  for (let todo = [pid]; todo.length > 0;) {
    const kids = todo.flatMap((p) => childrenOf(p));
    out.push(...kids);
    todo = kids;
  }
  return out;
}

/** CPU seconds of the processes whose command line matches, among `pids`. */
function cpuOfMatching(pids: readonly number[], pattern: RegExp): number {
  return pids.filter((p) => pattern.test(commandLine(p))).reduce((a, p) => a + cpuSeconds(p), 0);
}

function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

const MINIMAL = `query($ns: String!, $q: String!, $limit: Int) { searchMemory(namespace: $ns, query: $q, limit: $limit) { kind score } }`;

/**
 * `npm run bench -- search-profile`: where the time of one HTTP searchMemory goes, on each LoCoMo
 * development conversation (derived by the offline models; BENCH_PROFILE_CONVS, default all),
 * measured on an API process without workers (what `serve`'s own process is now), every question
 * asked once per stage, in turn:
 *
 * - over HTTP as bench/recall asks (hits with their evidence, statements and contents), and with
 *   the hits alone (`kind score`): the difference is the hits' fields, evidence first;
 * - `{ __typename }` over HTTP: the HTTP layer, authentication and GraphQL's own work;
 * - in process, `SearchService.search` with the request loaders, each Neo4j statement timed by
 *   channel (they overlap: three transactions run at once), the query embedding (its own
 *   embedder, so nothing is cached), the Postgres hydration;
 * - fusion and ranking (`fusedCandidates`, `rankingPriors`, `rankMemoryHits`) over the same
 *   channel lists, use recording (`UsageRecorder.record`), and the metrics and tracing calls of
 *   one search (`traced`, two histogram observations), each on its own;
 * - CPU per HTTP search of each process: this one (the service and its client), Neo4j, PostgreSQL.
 */
export async function searchProfile(): Promise<void> {
  const all = loadLocomo();
  if (!all) {
    process.stdout.write(`search-profile: skipped, no LoCoMo development split at ${locomoFile()}\n`);
    return;
  }
  const convs = all.slice(0, Number(process.env.BENCH_PROFILE_CONVS ?? all.length));
  await withBenchStores(async (b) => {
    const run = randomBytes(3).toString('hex');
    const namespaces = convs.map((c) => `profile-${c.sampleId}-${run}`);
    // Derived by a service with its workers, then measured on one without (as `serve`'s own process).
    const deriving = await b.startApp({}, { api: true, worker: true });
    try {
      const post = poster(deriving.url, deriving.adminToken);
      await Promise.all(convs.map((c, i) => ingestTurns(post, turnEvents(namespaces[i] as string, c))));
      await waitSettled(post, namespaces, 3_600_000);
    } finally {
      await deriving.app.stop();
    }
    const { app, url, adminToken } = await b.startApp({ SEARCH_WARM_UP_SECONDS: '0' }, { api: true, worker: false });
    try {
      const post = poster(url, adminToken);
      const embedder = await loadEmbedder(app.config, () => undefined);
      const parts: Parts = {};
      const counts = { tx: 0, statements: 0 };
      const search = new SearchService(timedDriver(app.neo4j, parts, counts), async () => embedder);
      const auth = await app.services.tokens.authenticate(`Bearer ${adminToken}`);
      const asked = convs.flatMap((c, i) =>
        c.questions
          .slice(0, Number(process.env.BENCH_PROFILE_QUESTIONS ?? 1000))
          .map((q) => ({ ns: namespaces[i] as string, conv: c.sampleId, q: q.question })),
      );
      // Warm: the JVM compiles the search path over the first few hundred searches (docs/search.md "Tail latency").
      for (const a of asked.slice(0, Number(process.env.BENCH_WARM_SEARCHES ?? 300))) await post(SEARCH, { ns: a.ns, q: a.q, limit: 10 });

      const stores = descendants(process.pid);
      const cpu = () => ({ node: process.cpuUsage(), neo4j: cpuOfMatching(stores, /java/), postgres: cpuOfMatching(stores, /postgres/) });
      const c0 = cpu();
      const http: Record<string, number[]> = {};
      const httpAll: number[] = [];
      for (const a of asked) {
        const t0 = nowMs();
        await post(SEARCH, { ns: a.ns, q: a.q, limit: 10 });
        const ms = nowMs() - t0;
        (http[a.conv] ??= []).push(ms);
        httpAll.push(ms);
      }
      const c1 = cpu();
      // Vectors the service read from Neo4j during its warm-up and the HTTP pass (held-vectors.ts): a namespace's, once.
      const heldVectorReads = (await pipelineMetrics.searchHeldVectorReads.get()).values[0]?.value ?? 0;
      const nodeCpu = process.cpuUsage(c0.node);
      const cpuPerSearch = {
        serviceAndClientNode: round((nodeCpu.user + nodeCpu.system) / 1000 / asked.length),
        neo4j: round(((c1.neo4j - c0.neo4j) * 1000) / asked.length),
        postgres: round(((c1.postgres - c0.postgres) * 1000) / asked.length),
      };
      const stage: Record<string, number[]> = {};
      const time = async <T>(name: string, f: () => Promise<T> | T): Promise<T> => {
        const t0 = nowMs();
        const r = await f();
        (stage[name] ??= []).push(nowMs() - t0);
        return r;
      };
      const designCache = new Map<string, Map<string, Float32Array>>();
      for (const a of asked) {
        await time('http: hits alone (kind, score)', () => post(MINIMAL, { ns: a.ns, q: a.q, limit: 10 }));
        await time('http: { __typename }', () => post('{ __typename }', {}));
        await time('embed query (alone)', () => embedder.embedQuery([`${a.q} `]));
        const loaders = createLoaders(app.services);
        const hydrate =
          <A, R>(f: (x: A) => Promise<R>) =>
          (x: A) =>
            time('postgres hydration (per loader call)', () => f(x));
        await time('SearchService.search (in process)', () =>
          search.search(
            auth,
            { namespace: a.ns, query: a.q, limit: 10 },
            {
              facts: hydrate((ids: string[]) => loaders.factById.loadMany(ids)),
              events: hydrate((ids: string[]) => loaders.eventById.loadMany(ids)),
              redactions: hydrate((ids: string[]) => loaders.redactionsByEventId.loadMany(ids)),
            },
          ),
        );
        // Fusion and ranking over this question's lists, every candidate visible.
        const { lists } = await search.channels(auth, { namespace: a.ns, query: a.q, limit: 10 });
        const [facts, events] = await Promise.all([
          loaders.factById.loadMany(lists.vector.map((h) => h.id)),
          loaders.eventById.loadMany(lists.event_vector.map((h) => h.id)),
        ]);
        const factRows = new Map(facts.flatMap((f) => (f && !(f instanceof Error) ? [[f.id, f] as const] : [])));
        const eventRows = new Map(events.flatMap((e) => (e && !(e instanceof Error) ? [[e.id, e] as const] : [])));
        await time('fusion and ranking', () => {
          fusedCandidates(lists, 30, DEFAULT_SEARCH_SETTINGS.channelWeights);
          const priors = rankingPriors(
            a.q,
            (id) => eventRows.get(id),
            (id) => factRows.get(id),
          );
          return rankMemoryHits(lists, () => true, DEFAULT_SEARCH_SETTINGS.channelWeights, priors).slice(0, 10);
        });
        await time('use recording', () => app.usage.record(lists.vector.slice(0, 10).map((h) => h.id)));
        if (process.env.BENCH_PROFILE_DESIGNS) await vectorDesigns(app.neo4j, embedder, a.ns, a.q, time, designCache);
        await time('metrics and tracing', () =>
          traced('search_memory', { [ATTR.operation]: 'search_memory' }, async () => {
            pipelineMetrics.searchChannelSeconds.observe({ channel: 'bench' }, 0);
            pipelineMetrics.searchSeconds.observe(0);
          }),
        );
      }
      await app.usage.flush();
      const [factCount, eventCount] = await Promise.all(
        ['Fact', 'Event'].map((label) =>
          app.neo4j
            .executeQuery(`MATCH (n:${label}) WHERE n.namespace IN $ns RETURN count(n) AS n`, { ns: namespaces })
            .then((r) => Number(r.records[0]?.get('n'))),
        ),
      );
      const ms: Record<string, ReturnType<typeof summary>> = {
        'http: searchMemory as bench/recall asks': summary(httpAll),
        ...Object.fromEntries(Object.entries(stage).map(([k, v]) => [k, summary(v)])),
        ...Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, summary(v)])),
      };
      printTable(`where one HTTP searchMemory's time goes (${asked.length} questions, ${convs.length} conversations)`, Object.entries(ms));
      report(`search-profile${process.env.BENCH_RESULT_SUFFIX ?? ''}`, {
        namespaces: { conversations: convs.map((c) => c.sampleId), facts: factCount, events: eventCount },
        questions: asked.length,
        httpByConversation: Object.fromEntries(Object.entries(http).map(([k, v]) => [k, summary(v)])),
        ms,
        cpuMsPerHttpSearch: cpuPerSearch,
        heldVectorReads,
        neo4jPerSearch: { transactions: round(counts.tx / (2 * asked.length)), statements: round(counts.statements / (2 * asked.length)) },
        loadAverage1m: round(os.loadavg()[0] as number),
        note: 'API process without workers; http rows: one request at a time with keep-alive from this process; the hits-alone request leaves out evidence, statements and contents; neo4j statement rows overlap (three transactions at once); cpuMsPerHttpSearch over the full HTTP pass (node: this process, the service and its client together)',
      });
      if ('close' in embedder && typeof embedder.close === 'function') await (embedder.close as () => Promise<void>)();
    } finally {
      await app.stop();
    }
  });
}

/** One operator of a PROFILE plan, flattened: what it is, the rows it produced, its database hits. */
interface PlanStep {
  op: string;
  rows: number;
  dbHits: number;
  details?: string;
}

interface ProfiledPlan {
  operatorType: string;
  rows: number;
  dbHits: number;
  arguments?: Record<string, unknown>;
  children: ProfiledPlan[];
}

function flattenPlan(plan: ProfiledPlan, out: PlanStep[] = []): PlanStep[] {
  const details = plan.arguments?.Details;
  out.push({
    op: plan.operatorType.replace(/@neo4j$/, ''),
    rows: Number(plan.rows),
    dbHits: Number(plan.dbHits),
    ...(details ? { details: String(details).slice(0, 160) } : {}),
  });
  for (const c of plan.children) flattenPlan(c, out);
  return out;
}

/** Runs a statement as sent, under PROFILE: its total database hits, its rows, and the plan's operators. */
async function profileStatement(driver: Driver, s: SentStatement): Promise<{ dbHits: number; rows: number; plan: PlanStep[] }> {
  const session = driver.session({ defaultAccessMode: 'READ' });
  try {
    const res = await session.run(`PROFILE ${s.query}`, s.params);
    const profile = res.summary.profile as unknown as ProfiledPlan | false;
    const plan = profile ? flattenPlan(profile) : [];
    return { dbHits: plan.reduce((a, p) => a + p.dbHits, 0), rows: res.records.length, plan };
  } finally {
    await session.close();
  }
}

/**
 * `npm run bench -- search-tail`: where the tail of searchMemory is, on the three LoCoMo development
 * conversations promoted to Gold (what bench/recall measures). Two SearchServices in this process on
 * the same stores, the graph channel over Gold (the default) and over Silver, each with its own
 * embedder (so neither answers a query from the other's cache), ask every question in turn,
 * alternating which goes first; every statement is timed by channel. Then the slowest searches are
 * split by channel, and their graph statements re-run under PROFILE (database hits, rows).
 * BENCH_TAIL_CONVS limits the conversations, BENCH_RESULT_SUFFIX names the result file.
 */
export async function searchTail(): Promise<void> {
  const all = loadLocomo();
  if (!all) {
    process.stdout.write(`search-tail: skipped, no LoCoMo development split at ${locomoFile()}\n`);
    return;
  }
  const convs = all.slice(0, Number(process.env.BENCH_TAIL_CONVS ?? all.length));
  await withBenchApp(async ({ app, url, adminToken }) => {
    const post = poster(url, adminToken);
    const run = randomBytes(3).toString('hex');
    const namespaces = convs.map((c) => `tail-${c.sampleId}-${run}`);
    await Promise.all(convs.map((c, i) => ingestTurns(post, turnEvents(namespaces[i] as string, c))));
    await waitSettled(post, namespaces, 1_800_000);
    await promoteAll(post, namespaces, 1_800_000);
    await waitSettled(post, namespaces, 600_000);
    const auth = await app.services.tokens.authenticate(`Bearer ${app.config.adminToken}`);
    type Mode = 'gold' | 'silver';
    const modes: Mode[] = ['gold', 'silver'];
    const rig = Object.fromEntries(
      await Promise.all(
        modes.map(async (mode) => {
          const parts: Parts = {};
          const sent: SentStatement[] = [];
          const counts = { tx: 0, statements: 0 };
          const embedder = await loadEmbedder(app.config, () => undefined);
          const search = new SearchService(timedDriver(app.neo4j, parts, counts, sent), async () => embedder, {
            ...DEFAULT_SEARCH_SETTINGS,
            graphOverGold: mode === 'gold',
          });
          return [mode, { parts, sent, counts, embedder, search }] as const;
        }),
      ),
    ) as Record<Mode, { parts: Parts; sent: SentStatement[]; counts: { tx: number; statements: number }; embedder: Embedder; search: SearchService }>;
    interface Asked {
      ns: string;
      question: string;
      ms: number;
      statements: number;
      byLabel: Record<string, number>;
      sent: SentStatement[];
    }
    const asked: Record<Mode, Asked[]> = { gold: [], silver: [] };
    const ask = async (mode: Mode, ns: string, question: string, record: boolean): Promise<void> => {
      const r = rig[mode];
      for (const k of Object.keys(r.parts)) delete r.parts[k];
      r.sent.length = 0;
      const loaders = createLoaders(app.services);
      const before = r.counts.statements;
      const t0 = nowMs();
      await r.search.search(auth, { namespace: ns, query: question, limit: 10 }, searchLoaders(loaders));
      const ms = nowMs() - t0;
      if (!record) return;
      const byLabel = Object.fromEntries(Object.entries(r.parts).map(([k, v]) => [k.replace(/^neo4j statement: /, ''), round(Math.max(...v))]));
      asked[mode].push({ ns, question, ms, statements: r.counts.statements - before, byLabel, sent: [...r.sent] });
    };
    for (const mode of modes) for (const ns of namespaces) await ask(mode, ns, 'warm up', false);
    const loadAtStart = os.loadavg()[0] as number;
    let i = 0;
    for (let c = 0; c < convs.length; c++) {
      for (const q of (convs[c] as (typeof convs)[number]).questions) {
        const order: Mode[] = i++ % 2 === 0 ? ['gold', 'silver'] : ['silver', 'gold'];
        for (const mode of order) await ask(mode, namespaces[c] as string, q.question, true);
      }
    }
    const loadAtEnd = os.loadavg()[0] as number;
    const labels = [...new Set(modes.flatMap((m) => asked[m].flatMap((a) => Object.keys(a.byLabel))))].sort();
    const byMode = Object.fromEntries(
      modes.map((m) => [
        m,
        {
          searchMs: {
            ...summary(asked[m].map((a) => a.ms)),
            p99: round(
              percentile(
                asked[m].map((a) => a.ms),
                99,
              ),
            ),
          },
          byLabel: Object.fromEntries(labels.map((l) => [l, summary(asked[m].flatMap((a) => (a.byLabel[l] === undefined ? [] : [a.byLabel[l] as number])))])),
          statementsPerSearch: summary(asked[m].map((a) => a.statements)).p50,
        },
      ]),
    );
    // The slowest 5% of each mode, split by channel, and their graph statements under PROFILE.
    const slowest = async (m: Mode) => {
      const sorted = [...asked[m]].sort((a, b) => b.ms - a.ms).slice(0, Math.ceil(asked[m].length * 0.05));
      const out = [];
      for (const a of sorted) {
        const profiled: Record<string, { dbHits: number; rows: number }> = {};
        for (const s of a.sent.filter((x) => x.label === 'graph expansion' || /entity names|^CALL \(\) \{/.test(x.label))) {
          const p = await profileStatement(app.neo4j, s);
          profiled[s.label === 'graph expansion' ? 'graph expansion' : 'entity names'] = { dbHits: p.dbHits, rows: p.rows };
        }
        out.push({ question: a.question, ms: round(a.ms), byLabel: a.byLabel, profiled });
      }
      return out;
    };
    const tails = { gold: await slowest('gold'), silver: await slowest('silver') };
    // Database hits of the graph statements of every search, per mode (deterministic, unlike times).
    const hits = async (m: Mode) => {
      const exp: number[] = [];
      const names: number[] = [];
      let worst: { question: string; label: string; dbHits: number; plan: PlanStep[] } | null = null;
      for (const a of asked[m]) {
        for (const s of a.sent) {
          const label = s.label === 'graph expansion' ? 'graph expansion' : /entity names|^CALL \(\) \{/.test(s.label) ? 'entity names' : null;
          if (!label) continue;
          const p = await profileStatement(app.neo4j, s);
          (label === 'graph expansion' ? exp : names).push(p.dbHits);
          if (!worst || p.dbHits > worst.dbHits) worst = { question: a.question, label, dbHits: p.dbHits, plan: p.plan };
        }
      }
      return { graphExpansionDbHits: summary(exp), entityNamesDbHits: summary(names), worst };
    };
    const dbHits = { gold: await hits('gold'), silver: await hits('silver') };
    // The names ranked by the fact vector channel's scores against the names computing each cosine
    // (as before): the same list, question by question, over Gold and over Silver?
    const sameNames = { questions: 0, identical: 0, differing: [] as string[] };
    for (let c = 0; c < convs.length; c++) {
      for (const q of (convs[c] as (typeof convs)[number]).questions) {
        const scope: FactSearchScope = {
          namespace: namespaces[c] as string,
          factTypes: null,
          entityId: null,
          minImportance: null,
          asOf: null,
          includeSuperseded: false,
        };
        const terms = toLuceneQuery(q.question);
        if (!terms) continue;
        const [vector = []] = await rig.gold.embedder.embedQuery([q.question]);
        const model = rig.gold.embedder.model;
        const session = app.neo4j.session({ defaultAccessMode: 'READ' });
        try {
          const counted = await session.executeRead((tx) => factVectorSearch(scope, model, vector).countedExact(tx, 30, DEFAULT_SEARCH_SETTINGS.exactMaxFacts));
          for (const overGold of [true, false]) {
            const computed = await session.executeRead((tx) => entityNameSearch(tx, scope, terms, 10, 30, overGold, { model, vector }));
            const looked = await session.executeRead((tx) =>
              entityNameSearch(tx, scope, terms, 10, 30, overGold, { model, vector, scores: counted.scores ?? null }),
            );
            sameNames.questions += 1;
            if (JSON.stringify(computed) === JSON.stringify(looked)) sameNames.identical += 1;
            else if (sameNames.differing.length < 5) sameNames.differing.push(`${overGold ? 'gold' : 'silver'}: ${q.question}`);
          }
        } finally {
          await session.close();
        }
      }
    }
    report(`search-tail${process.env.BENCH_RESULT_SUFFIX ?? ''}`, {
      namespaces: convs.map((c) => c.sampleId),
      questions: asked.gold.length,
      byMode,
      dbHits,
      sameNames,
      slowest: tails,
      loadAverage1m: { atStart: round(loadAtStart), atEnd: round(loadAtEnd) },
      note: 'in process, SearchService.search with the request loaders, graph channel over Gold (default) and over Silver alternating per question on the same stores, one embedder each; byLabel: each statement from sending to its last record (pipelined statements include their wait), the max when a label ran twice; dbHits from PROFILE of the statement as sent',
    });
    for (const m of modes) await (rig[m].embedder as Embedder & { close?: () => Promise<void> }).close?.();
  });
}

/** Sum and count of `medallion_search_channel_seconds` per channel, now (process-wide, every app of this process). */
async function channelTotals(): Promise<Record<string, { sum: number; count: number }>> {
  const m = await pipelineMetrics.searchChannelSeconds.get();
  const out: Record<string, { sum: number; count: number }> = {};
  for (const v of m.values) {
    const channel = String(v.labels.channel);
    const o = (out[channel] ??= { sum: 0, count: 0 });
    if (v.metricName?.endsWith('_sum')) o.sum += v.value;
    if (v.metricName?.endsWith('_count')) o.count += v.value;
  }
  return out;
}

/**
 * `npm run bench -- search-passes`: bench/recall's order of passes, and more. The three LoCoMo
 * development conversations are ingested, derived and promoted by the service (API and worker),
 * then every question is asked over HTTP in passes: (1) that service (graph over Gold), as
 * bench/recall's first pass; (2) a second API process with SEARCH_GRAPH_GOLD=false, as its second;
 * then (3) a fresh API process over Gold and (4) one over Silver, both after the first two, so
 * the last two compare Gold and Silver in the same conditions. Each fresh process has its own
 * embedder (no query cached). Per pass: searchMemory p50/p95/p99 and the mean time of each channel
 * (medallion_search_channel_seconds).
 */
export async function searchPasses(): Promise<void> {
  const all = loadLocomo();
  if (!all) {
    process.stdout.write(`search-passes: skipped, no LoCoMo development split at ${locomoFile()}\n`);
    return;
  }
  const convs = all.slice(0, Number(process.env.BENCH_TAIL_CONVS ?? all.length));
  await withBenchStores(async (b) => {
    // BENCH_PASSES_FIRST=silver swaps Gold and Silver in every pass: is a difference the graph channel's, or the order's?
    const firstGold = process.env.BENCH_PASSES_FIRST !== 'silver';
    const main = await b.startApp(firstGold ? {} : { SEARCH_GRAPH_GOLD: 'false' }, { api: true, worker: true });
    try {
      const post = poster(main.url, main.adminToken);
      const run = randomBytes(3).toString('hex');
      const namespaces = convs.map((c) => `passes-${c.sampleId}-${run}`);
      await Promise.all(convs.map((c, i) => ingestTurns(post, turnEvents(namespaces[i] as string, c))));
      await waitSettled(post, namespaces, 1_800_000);
      await promoteAll(post, namespaces, 1_800_000);
      await waitSettled(post, namespaces, 600_000);
      // What else runs meanwhile: every 500 ms, the Neo4j transactions and Postgres statements in flight that are not this pass's searches.
      const others = { neo4j: new Map<string, number>(), postgres: new Map<string, number>() };
      const pg = new Client({ connectionString: main.postgresUrl });
      await pg.connect();
      const sample = async () => {
        const tx = await main.app.neo4j.executeQuery('SHOW TRANSACTIONS YIELD currentQuery, status RETURN currentQuery, status');
        for (const r of tx.records) {
          const q = String(r.get('currentQuery') ?? '')
            .replace(/\s+/g, ' ')
            .slice(0, 90);
          if (!q || /SHOW TRANSACTIONS|queryNodes\('(fact_stems|event_stems|entity_name)|UNWIND \$seedIds|^ ?MATCH \(n:(Fact|Event)\)/.test(q)) continue;
          others.neo4j.set(q, (others.neo4j.get(q) ?? 0) + 1);
        }
        const act = await pg.query<{ q: string }>(
          `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS q FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid()`,
        );
        for (const r of act.rows) others.postgres.set(r.q, (others.postgres.get(r.q) ?? 0) + 1);
      };
      const pass = async (name: string, p: Post) => {
        for (const ns of namespaces) await p(SEARCH, { ns, q: 'warm up', limit: 10 });
        others.neo4j.clear();
        others.postgres.clear();
        let sampling = true;
        const sampler = (async () => {
          while (sampling) {
            await sample().catch(() => undefined);
            await new Promise((r) => setTimeout(r, 500));
          }
        })();
        const before = await channelTotals();
        const load0 = os.loadavg()[0] as number;
        const ms: number[] = [];
        for (let c = 0; c < convs.length; c++) {
          for (const q of (convs[c] as (typeof convs)[number]).questions) {
            const t0 = nowMs();
            await p(SEARCH, { ns: namespaces[c] as string, q: q.question, limit: 10 });
            ms.push(nowMs() - t0);
          }
        }
        const after = await channelTotals();
        sampling = false;
        await sampler;
        const top = (m: Map<string, number>) =>
          [...m.entries()]
            .sort((a, b) => b[1] - a[1])
            .slice(0, 8)
            .map(([q, n]) => ({ samples: n, q }));
        const channelMeanMs = Object.fromEntries(
          Object.entries(after).map(([k, v]) => {
            const b0 = before[k] ?? { sum: 0, count: 0 };
            return [k, round(((v.sum - b0.sum) / Math.max(1, v.count - b0.count)) * 1000)];
          }),
        );
        const r = {
          pass: name,
          searchMemoryMs: { ...summary(ms), p99: round(percentile(ms, 99)) },
          channelMeanMs,
          load1m: [round(load0), round(os.loadavg()[0] as number)],
          inFlightMeanwhile: { neo4j: top(others.neo4j), postgres: top(others.postgres) },
        };
        process.stdout.write(`${JSON.stringify(r)}\n`);
        return r;
      };
      const fresh = async (name: string, gold: boolean) => {
        const api = await b.startApp({ SEARCH_GRAPH_GOLD: gold ? 'true' : 'false' }, { api: true, worker: false });
        try {
          return await pass(name, poster(api.url, api.adminToken));
        } finally {
          await api.app.stop();
        }
      };
      const [a, b2] = firstGold ? ['gold', 'silver'] : ['silver', 'gold'];
      const passes = [await pass(`1 ${a}, the service with its worker (recall pass 1)`, post)];
      const more = Number(process.env.BENCH_PASSES ?? 4);
      if (more >= 2) passes.push(await fresh(`2 ${b2}, a second API process (recall pass 2)`, !firstGold));
      if (more >= 3) passes.push(await fresh(`3 ${a}, a fresh API process`, firstGold));
      if (more >= 4) passes.push(await fresh(`4 ${b2}, a fresh API process`, !firstGold));
      await pg.end();
      report(`search-passes${process.env.BENCH_RESULT_SUFFIX ?? ''}`, {
        namespaces: convs.map((c) => c.sampleId),
        questions: passes[0]?.searchMemoryMs.n,
        passes,
        note: 'over HTTP as bench/recall asks (searchMemory with kind, channels, evidence, statement, content); channelMeanMs: mean of medallion_search_channel_seconds per channel in the pass (embed, keyword, vector, graph, graph_names, event_keyword, event_vector)',
      });
    } finally {
      await main.app.stop();
    }
  });
}

const DESIGN_FACTS = `MATCH (f:Fact) WHERE f.namespace = $ns AND f.embeddingModel = $model AND f.embeddingDims = size($vector)
  AND f.validTo IS NULL AND f.retiredAt IS NULL RETURN f.id AS id, f.statement AS key`;
const DESIGN_EVENTS = `MATCH (e:Event) WHERE e.namespace = $ns AND e.embeddingModel = $model AND e.embeddingDims = size($vector)
  RETURN e.id AS id, e.content AS key`;
const DESIGN_VECTORS = (label: string) => `MATCH (n:${label}) WHERE n.namespace = $ns AND n.embeddingModel = $model RETURN n.id AS id, n.embedding AS v`;

/**
 * `BENCH_PROFILE_DESIGNS=1`: where the exact vector channels could score (docs/search.md, "Held
 * vectors"), each statement alone in its own read transaction per question: Neo4j's counted exact
 * cosine (as with SEARCH_HELD_VECTORS_MB=0) against a scan of the current nodes without their
 * vectors (ids; ids and text; with what a hit carries; a transaction's floor, `RETURN 1`) and the
 * cosine in JavaScript over vectors read once per namespace. The scans use the channels' namespace,
 * model and currency filter only: what the statements cost, not what the service sends.
 */
async function vectorDesigns(
  driver: Driver,
  embedder: Embedder,
  ns: string,
  q: string,
  time: <T>(name: string, f: () => Promise<T> | T) => Promise<T>,
  cache: Map<string, Map<string, Float32Array>>,
): Promise<void> {
  const [vector = []] = await embedder.embedQuery([q]);
  const model = embedder.model;
  const scope: FactSearchScope = { namespace: ns, factTypes: null, entityId: null, minImportance: null, asOf: null, includeSuperseded: false };
  const session = driver.session({ defaultAccessMode: 'READ' });
  try {
    for (const label of ['Fact', 'Event']) {
      const key = `${label}:${ns}`;
      if (!cache.has(key)) {
        const res = await session.executeRead((tx) => tx.run(DESIGN_VECTORS(label), { ns, model }));
        cache.set(key, new Map(res.records.map((r) => [r.get('id') as string, Float32Array.from(r.get('v') as number[])])));
      }
    }
    await time('design A: fact vector, Neo4j counted exact', () =>
      session.executeRead((tx) => factVectorSearch(scope, model, vector).countedExact(tx, 30, DEFAULT_SEARCH_SETTINGS.exactMaxFacts)),
    );
    await time('design A: event vector, Neo4j counted exact', () =>
      session.executeRead((tx) => eventVectorSearch({ namespace: ns, asOf: null }, model, vector).countedExact(tx, 30, DEFAULT_SEARCH_SETTINGS.exactMaxFacts)),
    );
    for (const [name, statement] of [
      ['fact ids only', DESIGN_FACTS.replace(', f.statement AS key', '')],
      ['event ids only', DESIGN_EVENTS.replace(', e.content AS key', '')],
      ['fact ids, text, events', DESIGN_FACTS.replace('f.statement AS key', 'f.statement AS key, [(f)-[:DERIVED_FROM]->(ev:Event) | ev.id] AS events')],
      [
        'event ids, text, supersededBy',
        DESIGN_EVENTS.replace(
          'e.content AS key',
          'e.content AS key, [(old:Fact)-[:DERIVED_FROM]->(e) WHERE old.validTo IS NOT NULL | [(newer:Fact)-[:SUPERSEDES*1..8]->(old) | newer.id]] AS s',
        ),
      ],
      ['RETURN 1', 'RETURN 1 AS id'],
    ] as const)
      await time(`design B: ${name} (Neo4j)`, () => session.executeRead((tx) => tx.run(statement, { ns, model, vector })));
    for (const [label, statement] of [
      ['fact', DESIGN_FACTS],
      ['event', DESIGN_EVENTS],
    ] as const) {
      const rows = await time(`design B: ${label} candidates from Neo4j (id, text)`, async () =>
        (await session.executeRead((tx) => tx.run(statement, { ns, model, vector }))).records.map((r) => r.get('id') as string),
      );
      const vectors = cache.get(`${label === 'fact' ? 'Fact' : 'Event'}:${ns}`) as Map<string, Float32Array>;
      await time(`design B: ${label} cosine in JS over held vectors`, () => {
        const qv = Float32Array.from(vector);
        let qn = 0;
        for (const x of qv) qn += x * x;
        const scored: Array<{ id: string; score: number }> = [];
        for (const id of rows) {
          const v = vectors.get(id);
          if (!v) continue;
          let dot = 0;
          let vn = 0;
          for (let j = 0; j < v.length; j++) {
            dot += (v[j] as number) * (qv[j] as number);
            vn += (v[j] as number) * (v[j] as number);
          }
          scored.push({ id, score: (1 + dot / Math.sqrt(qn * vn)) / 2 });
        }
        return scored.sort((x, y) => y.score - x.score).slice(0, 30);
      });
    }
  } finally {
    await session.close();
  }
}
