import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import os from 'node:os';
import type { Driver, ManagedTransaction, Session } from 'neo4j-driver';
import { createLoaders } from '../src/scope/request-scope';
import { DEFAULT_SEARCH_SETTINGS, SearchService } from '../src/graph/search.service';
import { entityNameSearch, FactSearchScope, factVectorSearch } from '../src/graph/cypher/search-facts';
import { toLuceneQuery } from '../src/graph/search-ranking';
import { loadEmbedder } from '../src/app/models';
import type { Embedder } from '../src/silver/model-ports';
import { nowMs, percentile, report, round, withBenchApp, withBenchStores } from './harness';
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
  if (/queryNodes\('fact_statement/.test(q)) return 'fact keyword';
  if (/queryNodes\('entity_name/.test(q)) return 'entity names';
  if (/queryNodes\('event_(text|body)/.test(q)) return 'event keyword';
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

/**
 * `npm run bench -- search-profile`: where a searchMemory call's time goes on a LoCoMo namespace
 * (the first development conversation, derived by the offline models): the query embedding, each
 * Neo4j read transaction (by channel), the Postgres hydration, the whole call in process and over
 * HTTP. Every question is asked once; the embedding is timed on its own before the call, on a
 * separate embedder whose cache does not serve the call.
 */
export async function searchProfile(): Promise<void> {
  const convs = loadLocomo();
  if (!convs) {
    process.stdout.write(`search-profile: skipped, no LoCoMo development split at ${locomoFile()}\n`);
    return;
  }
  const conv = convs[0] as (typeof convs)[number];
  await withBenchApp(async ({ app, url, adminToken }) => {
    const post = poster(url, adminToken);
    const ns = `profile-${conv.sampleId}-${randomBytes(3).toString('hex')}`;
    await ingestTurns(post, turnEvents(ns, conv));
    await waitSettled(post, [ns], 1_800_000);
    const embedder = await loadEmbedder(app.config, () => undefined);
    const parts: Parts = {};
    const counts = { tx: 0, statements: 0 };
    const search = new SearchService(timedDriver(app.neo4j, parts, counts), async () => embedder);
    const auth = await app.services.tokens.authenticate(`Bearer ${app.config.adminToken}`);
    const questions = conv.questions.slice(0, Number(process.env.BENCH_PROFILE_QUESTIONS ?? 150));
    for (const q of questions.slice(0, 5)) await post(SEARCH, { ns, q: `${q.question} warm`, limit: 10 });
    const loadAtStart = os.loadavg()[0] as number;
    const http: number[] = [];
    const inProcess: number[] = [];
    const embed: number[] = [];
    const hydrate: number[] = [];
    const neo4jTx: number[] = [];
    const neo4jStatements: number[] = [];
    for (const q of questions) {
      // The query's embedding on its own (a fresh text for this embedder: nothing cached).
      let t0 = nowMs();
      await embedder.embedQuery([`${q.question} `]);
      embed.push(nowMs() - t0);
      // The whole call in process, its hydration timed through the loaders.
      const loaders = createLoaders(app.services);
      const timed =
        <A, R>(f: (a: A) => Promise<R>) =>
        async (a: A) => {
          const s = nowMs();
          try {
            return await f(a);
          } finally {
            hydrate.push(nowMs() - s);
          }
        };
      const before = { ...counts };
      t0 = nowMs();
      await search.search(
        auth,
        { namespace: ns, query: q.question, limit: 10 },
        { facts: timed((ids: string[]) => loaders.factById.loadMany(ids)), events: timed((ids: string[]) => loaders.eventById.loadMany(ids)) },
      );
      inProcess.push(nowMs() - t0);
      neo4jTx.push(counts.tx - before.tx);
      neo4jStatements.push(counts.statements - before.statements);
      // Over HTTP through the service's own SearchService (its embedder has not seen this text either).
      t0 = nowMs();
      await post(SEARCH, { ns, q: q.question, limit: 10 });
      http.push(nowMs() - t0);
    }
    const [facts, events] = await Promise.all([
      app.neo4j.executeQuery('MATCH (f:Fact {namespace: $ns}) RETURN count(f) AS n', { ns }),
      app.neo4j.executeQuery('MATCH (e:Event {namespace: $ns}) RETURN count(e) AS n', { ns }),
    ]);
    report(`search-profile${process.env.BENCH_RESULT_SUFFIX ?? ''}`, {
      namespace: { conversation: conv.sampleId, events: Number(events.records[0]?.get('n')), facts: Number(facts.records[0]?.get('n')) },
      questions: questions.length,
      ms: {
        httpSearchMemory: summary(http),
        inProcessSearch: summary(inProcess),
        queryEmbedding: summary(embed),
        hydrationPerLoaderCall: summary(hydrate),
        ...Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, summary(v)])),
      },
      neo4jPerSearch: { transactions: summary(neo4jTx).p50, statements: summary(neo4jStatements).p50 },
      loadAverage1m: { atStart: round(loadAtStart), atEnd: round(os.loadavg()[0] as number) },
      note: "in-process search = SearchService.search with a timed driver (every read transaction timed by channel) and the request loaders; HTTP = the service's own searchMemory with { kind channels evidence }; the embedding timed alone before each call; neo4j parts overlap (channels run concurrently), so they do not add up to the whole",
    });
    if ('close' in embedder && typeof embedder.close === 'function') await (embedder.close as () => Promise<void>)();
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
      await r.search.search(
        auth,
        { namespace: ns, query: question, limit: 10 },
        { facts: (ids) => loaders.factById.loadMany(ids), events: (ids) => loaders.eventById.loadMany(ids) },
      );
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
          if (!q || /SHOW TRANSACTIONS|queryNodes\('(fact_statement|event_body|entity_name)|UNWIND \$seedIds|^ ?MATCH \(n:(Fact|Event)\)/.test(q)) continue;
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
