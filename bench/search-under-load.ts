import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Scrape, total } from '../test/support/prometheus';
import { percentile, report, round, withBenchStores } from './harness';
import { LocomoConversation, loadLocomo, locomoFile } from './locomo';
import { ingestTurns, Post, poster, SEARCH, turnEvents, waitSettled } from './recall';
import { childrenOf, cpuSeconds, scrapeTimed, serviceEnv, ServiceProcess, serviceRoot, startService } from './service-process';

/**
 * `npm run bench -- search-under-load` (issue 45 item 2): does a search stay fast while the same
 * service derives a large import? The compiled service in its own process, on fresh stores per
 * mode; a settled LoCoMo conversation (the first of the development split) is searched one
 * request at a time over HTTP, as an agent does:
 *
 * 1. quiet: after `BENCH_WARM_SEARCHES` (200) warm-up searches, each question once;
 * 2. under load: an import of ≥ `BENCH_LOAD_EVENTS` (5,000) events (the development split's turns,
 *    copied into as many namespaces as needed) is sent in `ingestEvents` batches of 500, and the
 *    questions are asked again and again until all of it is derived and projected;
 * 3. quiet again, each question once.
 *
 * Per phase: search p50/p95/max over HTTP, the API process's event-loop delay p99/max (its
 * `medallion_event_loop_delay_seconds`, a cumulative histogram: the difference of the scrapes at
 * the phase's ends; an older build without it: the maximum of prom-client's
 * `nodejs_eventloop_lag_*` gauges over the phase's scrapes), a Prometheus-like scrape every 5 s
 * (its duration), the ingest calls' durations, and the CPU seconds of the API process and of any
 * worker process. Modes (`BENCH_UNDER_LOAD_MODES`, default both): `default` is `serve` (its
 * workers in the child process it starts), `split` is `serve --no-worker` beside `worker`.
 * Targets: p95 under load ≤ 2 × quiet p95, event-loop delay max ≤ 100 ms, no search over 1 s.
 */
export async function searchUnderLoad(): Promise<void> {
  const convs = loadLocomo();
  if (!convs) {
    process.stdout.write(`search-under-load: skipped, no LoCoMo development split at ${locomoFile()}\n`);
    return;
  }
  const modes = (process.env.BENCH_UNDER_LOAD_MODES ?? 'default,split').split(',').map((m) => m.trim()) as Mode[];
  const results: Record<string, unknown> = {};
  for (const mode of modes) {
    process.stdout.write(`search-under-load: mode ${mode}\n`);
    results[mode] = await runMode(mode, convs);
    process.stdout.write(`${JSON.stringify(summaryLine(results[mode] as ModeResult))}\n`);
  }
  report(process.env.BENCH_NAME ?? 'search-under-load', {
    service: process.env.BENCH_SERVICE_ROOT ? `${serviceRoot()} (BENCH_SERVICE_ROOT)` : 'this checkout',
    modes: results,
    targets: { p95UnderLoadOverQuiet: 2, eventLoopDelayMaxMs: 100, slowestSearchMs: 1000 },
    note: 'searches one at a time over HTTP with keep-alive, as a client; event-loop delay of the process that serves HTTP; CPU from /proc. On a machine shared with other work only the same-run ratios mean anything.',
  });
}

type Mode = 'default' | 'split';

interface Phase {
  searches: number;
  searchMs: { p50: number; p95: number; max: number; over1s: number };
  eventLoopDelayMs: { p99: number; max: number; source: string };
  scrapeMs: { n: number; max: number };
  cpuSeconds: { api: number; workers: number };
  /** Mean ms per search of each channel and of the whole search inside the service (its histograms' _sum/_count over the phase). */
  insideMs: Record<string, number>;
  /** Seconds the background stages paused for the searches (BACKGROUND_YIELD) over the phase (serve's /metrics: its own worker process's). */
  backgroundPausedSeconds: number;
  seconds: number;
  slow: Array<{ at: number; ms: number }>;
  loadAverage1m: number;
}

interface ModeResult {
  quiet: Phase;
  underLoad: Phase & { events: number; ingestCallMs: { n: number; p50: number; max: number }; derivedPerSecond: number };
  quietAfter: Phase;
  ratios: { p95UnderLoadOverQuiet: number; p50UnderLoadOverQuiet: number };
  targetsMet: { p95: boolean; eventLoopDelay: boolean; noSearchOver1s: boolean };
}

async function runMode(mode: Mode, convs: LocomoConversation[]): Promise<ModeResult> {
  return withBenchStores(async (b) => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), `medallion-under-load-${mode}-`));
    const env = serviceEnv(b.stores, path.join(work, 'data'), b.adminToken);
    const started: ServiceProcess[] = [];
    let failed = true;
    try {
      const api = await startService('serve', mode === 'split' ? ['--no-worker'] : [], env, path.join(work, 'api.log'));
      started.push(api);
      if (mode === 'split') started.push(await startService('worker', [], env, path.join(work, 'worker.log')));
      const post = poster(api.url, b.adminToken);
      const target = convs[0] as LocomoConversation;
      const ns = `under-load/${target.sampleId}`;
      await ingestTurns(post, turnEvents(ns, target));
      await waitSettled(post, [ns], 1_800_000);
      const questions = target.questions.map((q) => q.question);
      const warm = Number(process.env.BENCH_WARM_SEARCHES ?? 200);
      for (let i = 0; i < warm; i++) await post(SEARCH, { ns, q: questions[i % questions.length], limit: 10 });

      const pids = () => ({
        api: api.child.pid as number,
        workers: [...childrenOf(api.child.pid as number), ...started.slice(1).map((s) => s.child.pid as number)],
      });
      const phase = (work: (search: (q: string) => Promise<void>) => Promise<void>) => measurePhase(api.url, pids, post, ns, work);
      const quiet = await phase(async (search) => {
        for (const q of questions) await search(q);
      });
      const load = loadEvents(convs, Number(process.env.BENCH_LOAD_EVENTS ?? 5_000));
      const ingestCalls: number[] = [];
      let derivedAt = 0;
      const t0 = performance.now();
      const diag = process.env.BENCH_NEO4J_QUERY_STATS ? await startQueryStats(b.stores) : undefined;
      const underLoad = await phase(async (search) => {
        const importing = (async () => {
          for (let i = 0; i < load.events.length; i += 500) {
            const s = performance.now();
            await ingestTurns(post, load.events.slice(i, i + 500), 500);
            ingestCalls.push(performance.now() - s);
          }
          await waitSettled(post, load.namespaces, 3_600_000);
          derivedAt = performance.now();
        })();
        let done = false;
        // Settled either way; a failed import is thrown by the await below, inside the try that stops the services.
        void importing.then(
          () => (done = true),
          () => (done = true),
        );
        for (let i = 0; !done; i++) await search(questions[i % questions.length] as string);
        await importing;
      });
      if (diag) await diag(`${process.env.BENCH_NEO4J_QUERY_STATS}.${mode}.json`, underLoad.slow);
      const quietAfter = await phase(async (search) => {
        for (const q of questions) await search(q);
      });
      failed = false;
      return {
        quiet,
        underLoad: {
          ...underLoad,
          events: load.events.length,
          ingestCallMs: { n: ingestCalls.length, p50: round(percentile(ingestCalls, 50)), max: round(Math.max(...ingestCalls)) },
          derivedPerSecond: round(load.events.length / ((derivedAt - t0) / 1000), 1),
        },
        quietAfter,
        ratios: {
          p95UnderLoadOverQuiet: round(underLoad.searchMs.p95 / quiet.searchMs.p95),
          p50UnderLoadOverQuiet: round(underLoad.searchMs.p50 / quiet.searchMs.p50),
        },
        targetsMet: {
          p95: underLoad.searchMs.p95 <= 2 * quiet.searchMs.p95,
          eventLoopDelay: underLoad.eventLoopDelayMs.max <= 100,
          noSearchOver1s: underLoad.searchMs.over1s === 0,
        },
      };
    } finally {
      for (const s of started.reverse()) await s.stop();
      // The services' logs stay for a run that failed.
      if (failed) process.stderr.write(`search-under-load: ${mode} failed; the services' logs are in ${work}\n`);
      else fs.rmSync(work, { recursive: true, force: true });
    }
  });
}

/** The development split's turns, copied into as many namespaces as it takes to reach `atLeast` events. */
function loadEvents(convs: LocomoConversation[], atLeast: number): { namespaces: string[]; events: Array<Record<string, unknown>> } {
  const namespaces: string[] = [];
  const events: Array<Record<string, unknown>> = [];
  // One namespace per conversation and copy: LoCoMo's turn ids (D1:1, …) repeat across conversations.
  for (let copy = 1; events.length < atLeast; copy++)
    for (const conv of convs) {
      const ns = `under-load/import-${copy}-${conv.sampleId}`;
      namespaces.push(ns);
      events.push(...turnEvents(ns, conv));
    }
  return { namespaces, events };
}

/**
 * Runs `work` (which searches `ns` through the function it is given, one request at a time) while
 * scraping /metrics every 5 s as Prometheus would, and measures the phase.
 */
async function measurePhase(
  url: string,
  pids: () => { api: number; workers: number[] },
  post: Post,
  ns: string,
  work: (search: (q: string) => Promise<void>) => Promise<void>,
): Promise<Phase> {
  const before = await scrapeTimed(url);
  const cpu0 = cpuOf(pids());
  const scrapes: Array<{ scrape: Scrape; ms: number }> = [];
  let running = true;
  const scraper = (async () => {
    while (running) {
      await new Promise((r) => setTimeout(r, 5_000));
      if (running) scrapes.push(await scrapeTimed(url));
    }
  })();
  const ms: number[] = [];
  const t0 = performance.now();
  /** Searches over 500 ms: when each began (unix ms) and how long it took. */
  const slow: Array<{ at: number; ms: number }> = [];
  const search = async (q: string): Promise<void> => {
    const s = performance.now();
    await post(SEARCH, { ns, q, limit: 10 });
    ms.push(performance.now() - s);
    if (performance.now() - s > 500) slow.push({ at: Date.now() - Math.round(performance.now() - s), ms: Math.round(performance.now() - s) });
  };
  await work(search);
  const seconds = (performance.now() - t0) / 1000;
  running = false;
  await scraper;
  const after = await scrapeTimed(url);
  const cpu1 = cpuOf(pids());
  return {
    searches: ms.length,
    searchMs: { p50: round(percentile(ms, 50)), p95: round(percentile(ms, 95)), max: round(Math.max(...ms)), over1s: ms.filter((x) => x > 1000).length },
    eventLoopDelayMs: eventLoopDelay(before.scrape, [...scrapes.map((s) => s.scrape), after.scrape]),
    scrapeMs: { n: scrapes.length, max: round(Math.max(0, ...scrapes.map((s) => s.ms))) },
    cpuSeconds: { api: round(cpu1.api - cpu0.api), workers: round(cpu1.workers - cpu0.workers) },
    insideMs: insideMeans(before.scrape, after.scrape),
    backgroundPausedSeconds: round(total(after.scrape, PAUSED) - total(before.scrape, PAUSED)),
    seconds: round(seconds, 1),
    loadAverage1m: round(os.loadavg()[0] as number),
    slow,
  };
}

/**
 * `BENCH_NEO4J_QUERY_STATS=<file prefix>`: Neo4j's query collection (`db.stats.collect('QUERIES')`)
 * over the phase under load, written to `<prefix>.<mode>.json` beside the searches over 500 ms
 * (their start, unix ms): each statement's invocations with their compile and execution times, to
 * tell a search that waited for a plan (compile) from one that waited for rows (execution); and
 * PostgreSQL's lock waits, sampled every 100 ms, each with the sessions it waited behind.
 */
async function startQueryStats(stores: { postgresUrl: string; neo4j: { uri: string; user: string; password: string } }) {
  const neo4j = await import('neo4j-driver');
  // PostgreSQL's lock waits over the phase, sampled every 100 ms: who waited on a lock, for what, behind whom.
  const { Client } = await import('pg');
  const pg = new Client({ connectionString: stores.postgresUrl });
  await pg.connect();
  const waits: Array<Record<string, unknown>> = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const { rows } = await pg.query(
        `SELECT (extract(epoch FROM now()) * 1000)::bigint AS at, a.pid, a.wait_event, left(a.query, 120) AS query,
                (extract(epoch FROM now() - a.query_start) * 1000)::int AS waited_ms,
                (SELECT json_agg(json_build_object('pid', b.pid, 'query', left(b.query, 120), 'state', b.state,
                                                   'xact_ms', (extract(epoch FROM now() - b.xact_start) * 1000)::int))
                   FROM pg_stat_activity b WHERE b.pid = ANY(pg_blocking_pids(a.pid))) AS blockers
           FROM pg_stat_activity a WHERE a.wait_event_type = 'Lock'`,
      );
      waits.push(...rows);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const driver = neo4j.default.driver(stores.neo4j.uri, neo4j.default.auth.basic(stores.neo4j.user, stores.neo4j.password));
  const s = driver.session();
  await s.run(`CALL db.stats.clear('QUERIES')`);
  await s.run(`CALL db.stats.collect('QUERIES', {durationSeconds: 3600})`);
  await s.close();
  return async (file: string, slow: unknown) => {
    const s2 = driver.session();
    const r = await s2.run(`CALL db.stats.retrieve('QUERIES') YIELD data RETURN data`);
    const rows = r.records.map((x) => {
      const d = x.get('data') as { query: string; invocations: Array<Record<string, unknown>> };
      return {
        query: d.query.slice(0, 200),
        invocations: d.invocations.map((i) =>
          Object.fromEntries(
            Object.entries(i)
              .filter(([k]) => k !== 'params')
              .map(([k, v]) => [k, neo4j.default.isInt(v) ? (v as { toNumber(): number }).toNumber() : v]),
          ),
        ),
      };
    });
    sampling = false;
    await sampler;
    await pg.end();
    fs.writeFileSync(file, JSON.stringify({ slow, pgLockWaits: waits, rows }, null, 1));
    await s2.close();
    await driver.close();
  };
}

function cpuOf(p: { api: number; workers: number[] }): { api: number; workers: number } {
  return { api: cpuSeconds(p.api), workers: p.workers.reduce((a, pid) => a + cpuSeconds(pid), 0) };
}

const DELAY = 'medallion_event_loop_delay_seconds';
const PAUSED = 'medallion_background_yield_seconds_total';

/**
 * Where a search's time went inside the service over a phase: the mean of each channel's
 * `medallion_search_channel_seconds` (the channels overlap: their sum exceeds the whole) and of
 * `medallion_search_seconds`, the rest of an HTTP search being the GraphQL and HTTP layers.
 */
function insideMeans(first: Scrape, last: Scrape): Record<string, number> {
  const out: Record<string, number> = {};
  const mean = (name: string, labels: Record<string, string>) => {
    const n = total(last, `${name}_count`, labels) - total(first, `${name}_count`, labels);
    return n > 0 ? round(((total(last, `${name}_sum`, labels) - total(first, `${name}_sum`, labels)) / n) * 1000) : 0;
  };
  out.search = mean('medallion_search_seconds', {});
  const channels = new Set(last.samples.filter((x) => x.name === 'medallion_search_channel_seconds_count').map((x) => x.labels.channel as string));
  for (const c of [...channels].sort()) out[c] = mean('medallion_search_channel_seconds', { channel: c });
  return out;
}

/**
 * p99 and max of the event-loop delay between the first scrape and the last: from the cumulative
 * histogram (p99 interpolated in its bucket as Prometheus' histogram_quantile does; max: the upper
 * bound of the highest bucket that gained a sample), or, from a build without it, the largest of
 * prom-client's per-scrape gauges (each covers the time since the previous scrape).
 */
export function eventLoopDelay(first: Scrape, later: Scrape[]): Phase['eventLoopDelayMs'] {
  const last = later[later.length - 1] as Scrape;
  const buckets = (s: Scrape) =>
    new Map(s.samples.filter((x) => x.name === `${DELAY}_bucket`).map((x) => [x.labels.le === '+Inf' ? Infinity : Number(x.labels.le), x.value]));
  const a = buckets(first);
  const b = buckets(last);
  if (b.size > 0) {
    const bounds = [...b.keys()].sort((x, y) => x - y);
    const delta = bounds.map((le) => ({ le, n: (b.get(le) ?? 0) - (a.get(le) ?? 0) }));
    const total = delta[delta.length - 1]?.n ?? 0;
    let max = 0;
    let previous = 0;
    for (const d of delta) {
      if (d.n > previous) max = d.le;
      previous = d.n;
    }
    const rank = 0.99 * total;
    let p99 = 0;
    for (let i = 0; i < delta.length; i++) {
      const d = delta[i] as { le: number; n: number };
      if (d.n >= rank) {
        const lower = i === 0 ? 0 : (delta[i - 1] as { le: number }).le;
        const below = i === 0 ? 0 : (delta[i - 1] as { n: number }).n;
        p99 = d.le === Infinity ? lower : lower + ((d.le - lower) * (rank - below)) / Math.max(1, d.n - below);
        break;
      }
    }
    return { p99: round(p99 * 1000), max: max === Infinity ? Infinity : round(max * 1000), source: `${DELAY} (max: the upper bound of its bucket)` };
  }
  const gauge = (name: string) => Math.max(0, ...later.flatMap((s) => s.samples.filter((x) => x.name === name).map((x) => x.value)));
  const resolution = 0.01;
  return {
    p99: round(Math.max(0, gauge('medallion_nodejs_eventloop_lag_p99_seconds') - resolution) * 1000),
    max: round(Math.max(0, gauge('medallion_nodejs_eventloop_lag_max_seconds') - resolution) * 1000),
    source: 'medallion_nodejs_eventloop_lag_{p99,max}_seconds, the largest per-scrape value, less the 10 ms sampling period',
  };
}

function summaryLine(r: ModeResult): Record<string, unknown> {
  return {
    quiet: r.quiet.searchMs,
    underLoad: r.underLoad.searchMs,
    eventLoopDelayUnderLoad: r.underLoad.eventLoopDelayMs,
    insideMs: { quiet: r.quiet.insideMs, underLoad: r.underLoad.insideMs },
    ratios: r.ratios,
    targetsMet: r.targetsMet,
  };
}
