import { freePort } from '../src/platform/local-services/free-port';
import { descendants, processAlive } from '../src/platform/process-tree';
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nowMs, report, round } from './harness';

/**
 * What a person sees on the README's `npm start` (issue 25 item 5: "fast first answers and
 * stops"; issue 41 item 2: starts that do not rebuild, stops that leave no child): the service on
 * the defaults (embedded PostgreSQL, local Neo4j, the offline e5 embedder), started from an empty
 * DATA_DIR and an install without the Neo4j class-data-sharing archive, then started again on the
 * same folders, by `node dist/src/app/main.js serve` and by `npm start` (whose prestart finds the
 * build up to date), each stopped by SIGTERM or SIGINT to the process started. Per start: spawn →
 * /health 200, one ingestEvent acknowledged → the first searchMemory that returns it as an EVENT
 * hit (the search is asked every 20 ms), the signal → the started process's exit and → every
 * process below it gone (PostgreSQL, the Neo4j JVM, an archive dump, any worker).
 *
 * The jars and the model are the checkout's `.cache` (or CACHE_DIR), linked into a throwaway cache
 * folder so that this run's archive is its own and the shared one is not touched.
 * `BENCH_STARTS` (default 4: node/SIGTERM from nothing, node/SIGINT, npm/SIGTERM, npm/SIGINT) starts per run; `BENCH_NAME` names the result file (default start-stop);
 * `BENCH_SERVICE_ROOT` runs another built checkout's `dist/src/app/main.js` (an A/B against an older tree);
 * `BENCH_FIRST_MESSAGE_DELAY_MS` waits that long after /health before the first message.
 */
export async function startStopBench(): Promise<void> {
  const starts = Number(process.env.BENCH_STARTS ?? PLAN.length);
  const root = path.resolve(process.env.BENCH_SERVICE_ROOT ?? repoRoot());
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-start-stop-'));
  const dataDir = path.join(work, 'data');
  const cacheDir = freshInstallCache(path.resolve(process.env.CACHE_DIR ?? path.join(repoRoot(), '.cache')), path.join(work, 'cache'));
  const runs: StartRun[] = [];
  try {
    for (let i = 0; i < starts; i++) {
      const run = await oneStart(root, dataDir, cacheDir, `ns-${i}`, PLAN[i % PLAN.length] as (typeof PLAN)[number]);
      process.stdout.write(`start ${i + 1}: ${JSON.stringify(run)}\n`);
      runs.push(run);
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  report(process.env.BENCH_NAME ?? 'start-stop', {
    service: process.env.BENCH_SERVICE_ROOT ? `${root} (BENCH_SERVICE_ROOT)` : 'this checkout',
    firstMessageDelayMs: Number(process.env.BENCH_FIRST_MESSAGE_DELAY_MS ?? 0),
    settings: 'defaults: embedded PostgreSQL, local Neo4j, OFFLINE_EMBEDDER=e5-small, PROJECTOR_POLL_MS 250',
    targets: { ingestToFirstEventHitMs: 1000, idleStopMs: 3000, warmRestartToHealthyMs: 30_000, signalToAllChildrenGoneMs: 10_000 },
    loadAverage1m: round(os.loadavg()[0] ?? 0, 2),
    runs,
    note: 'start 1 is a fresh install (empty DATA_DIR, no CDS archive: it records the class list); start 2 dumps the archive beside the service and is stopped once it is written (archiveWrittenMs), as a session of a minute or more is; later starts use it',
  });
}

/** How each start is launched and stopped: the README's `npm start` and the node command it runs, by each signal. */
const PLAN = [
  { launcher: 'node', signal: 'SIGTERM' },
  { launcher: 'node', signal: 'SIGINT' },
  { launcher: 'npm', signal: 'SIGTERM' },
  { launcher: 'npm', signal: 'SIGINT' },
] as const;

interface StartRun {
  launcher: 'node' | 'npm';
  signal: 'SIGTERM' | 'SIGINT';
  /** The local Neo4j's class-data-sharing at this start: recording (no list yet), dumping (in the background), using. */
  cdsMode: string | null;
  /** From spawn to the background class-data-sharing dump's end (a dumping start waits for it), else null. */
  archiveWrittenMs: number | null;
  spawnToHealthyMs: number;
  ingestAckMs: number;
  ingestToFirstEventHitMs: number;
  searchesUntilHit: number;
  /** The same for a second message sent 3 s after the first one's hit. */
  secondIngestToEventHitMs: number;
  /** The machine's 1-minute load average when the ingest was sent (2 cores: above 2, other work competed). */
  loadAverage1m: number;
  /** Where ingest → first EVENT hit went (ms from the ack; the service's debug log and the bench's own clock). */
  firstHitTrace: FirstHitTrace;
  /** The signal → the started process's exit. */
  idleStopMs: number;
  /** The signal → the started process and every process below it gone. */
  stopToAllChildrenGoneMs: number;
  childProcesses: string[];
  /** What the service's shutdown log says each step took (`shutdown: … stopped`), in order. */
  shutdownSteps: Array<{ step: string; ms: number }>;
  exitCode: number | null;
}

function repoRoot(): string {
  // From bench/ (ts-node) or dist/bench/ (the built bench runner).
  return __dirname.includes(`${path.sep}dist${path.sep}`) ? path.join(__dirname, '..', '..') : path.join(__dirname, '..');
}

/** A cache folder with the checkout's jars and models but no CDS archive: what a fresh install has. */
function freshInstallCache(from: string, to: string): string {
  fs.mkdirSync(to, { recursive: true });
  fs.symlinkSync(path.join(from, 'models'), path.join(to, 'models'));
  for (const d of fs.readdirSync(from).filter((f) => f.startsWith('neo4j-'))) {
    fs.mkdirSync(path.join(to, d));
    fs.symlinkSync(path.join(from, d, 'lib'), path.join(to, d, 'lib'));
    for (const f of ['lib.complete', 'pom.xml']) fs.copyFileSync(path.join(from, d, f), path.join(to, d, f));
  }
  return to;
}

/**
 * Stage times, in ms after the ingest's acknowledgement reached the bench (negative: before it):
 * the ingest NOTIFY heard by the service, the projector batch that carried the event (its start,
 * events read and embedded, Neo4j committed, Postgres committed), derivation steps that ran in the
 * window (they share the embedder and the CPU), and each search the bench sent (start, end, hit).
 */
interface FirstHitTrace {
  notifyHeard: number | null;
  projector: { started: number; eventsEmbedded: number; graphCommitted: number; committed: number; rows: number; events: number } | null;
  otherProjectorBatches: Array<{ started: number; committed: number; rows: number; events: number; facts: number }>;
  deriveSteps: Array<{ ended: number; namespace: string; events: number; facts: number }>;
  searches: Array<{ sent: number; answered: number; eventHit: boolean }>;
}

interface LogLine {
  time: number;
  msg: string;
  projector?: { startedAt: number; rows: number; events: number; facts: number; eventsEmbeddedMs: number; graphMs: number; committedMs: number };
  derive?: { namespace: string; events: number; facts: number };
  step?: string;
  ms?: number;
}

/** The trace of one ingest → hit from the service's log lines between `from` and `to` (epoch ms). */
function firstHitTrace(lines: readonly LogLine[], ackAt: number, from: number, to: number, searches: FirstHitTrace['searches']): FirstHitTrace {
  const inWindow = lines.filter((l) => l.time >= from && l.time <= to);
  const rel = (t: number) => round(t - ackAt, 0);
  const notify = inWindow.find((l) => l.msg === 'events ingested (NOTIFY)');
  // A batch is logged after its Postgres commit, which may come after the search that found its event.
  const batches = lines.flatMap((l) => (l.projector && l.projector.startedAt >= from && l.projector.startedAt <= to ? [l.projector] : []));
  const carrier = batches.find((b) => b.events > 0);
  return {
    notifyHeard: notify ? rel(notify.time) : null,
    projector: carrier
      ? {
          started: rel(carrier.startedAt),
          eventsEmbedded: rel(carrier.startedAt + carrier.eventsEmbeddedMs),
          graphCommitted: rel(carrier.startedAt + carrier.graphMs),
          committed: rel(carrier.startedAt + carrier.committedMs),
          rows: carrier.rows,
          events: carrier.events,
        }
      : null,
    otherProjectorBatches: batches
      .filter((b) => b !== carrier)
      .map((b) => ({ started: rel(b.startedAt), committed: rel(b.startedAt + b.committedMs), rows: b.rows, events: b.events, facts: b.facts })),
    deriveSteps: inWindow.flatMap((l) =>
      l.derive ? [{ ended: rel(l.time), namespace: l.derive.namespace, events: l.derive.events, facts: l.derive.facts }] : [],
    ),
    searches: searches.map((s) => ({ sent: rel(s.sent), answered: rel(s.answered), eventHit: s.eventHit })),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function oneStart(root: string, dataDir: string, cacheDir: string, ns: string, how: (typeof PLAN)[number]): Promise<StartRun> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // debug: the projector's and derivation's stage lines make the first-hit trace (info and debug
  // lines cost the service microseconds each; pino writes them synchronously).
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, CACHE_DIR: cacheDir, PORT: String(port), LOG_LEVEL: process.env.LOG_LEVEL ?? 'debug' };
  for (const k of ['DATABASE_URL', 'DATABASE_RUNTIME_URL', 'NEO4J_URI', 'ADMIN_TOKEN']) delete env[k];
  const t0 = nowMs();
  const child =
    how.launcher === 'npm'
      ? spawn('npm', ['start', '--silent'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(process.execPath, [path.join(root, 'dist', 'src', 'app', 'main.js'), 'serve'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  // BENCH_LOG=<prefix>: the service's log of each start goes to <prefix>-<ns>.log too.
  const logFile = process.env.BENCH_LOG ? `${process.env.BENCH_LOG}-${ns}.log` : undefined;
  const lines: LogLine[] = [];
  let partial = '';
  let cdsLine = '';
  const keep = (b: Buffer) => {
    output = (output + b.toString()).slice(-20_000);
    if (logFile) fs.appendFileSync(logFile, b);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', (b: Buffer) => {
    keep(b);
    const text = partial + b.toString();
    cdsLine ||= /class-data-sharing: \w+/.exec(text)?.[0] ?? '';
    const parts = text.split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      if (!line.startsWith('{')) continue;
      try {
        const parsed = JSON.parse(line) as LogLine;
        if (parsed.projector || parsed.derive || parsed.step || parsed.msg === 'events ingested (NOTIFY)') lines.push(parsed);
      } catch {
        // not a log line
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    await until(
      async () => (await fetch(`${url}/health`).catch(() => null))?.status === 200,
      child,
      () => output,
      300_000,
    );
    const spawnToHealthyMs = nowMs() - t0;
    const token = fs.readFileSync(path.join(dataDir, 'admin.token'), 'utf8').trim();
    const gql = async <T>(query: string, variables: Record<string, unknown>): Promise<T> => {
      const res = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await res.json()) as { data?: T; errors?: unknown };
      if (!body.data) throw new Error(`GraphQL error ${JSON.stringify(body.errors)}`);
      return body.data;
    };
    // BENCH_FIRST_MESSAGE_DELAY_MS: the first message comes that long after /health answered (a
    // person pasting the token first); Neo4j replans a cached plan older than min_replan_interval
    // whose statistics moved, which a message sent at once never meets (graph-warm-up.ts).
    await sleep(Number(process.env.BENCH_FIRST_MESSAGE_DELAY_MS ?? 0));
    const load1m = os.loadavg()[0] ?? 0;
    const tIngest = nowMs();
    const sentAt = Date.now();
    await gql(INGEST, {
      input: { namespace: ns, source: 'bench', sourceEventId: 'm-1', kind: 'MESSAGE', role: 'USER', content: 'I switched my editor to helix last week' },
    });
    const acked = nowMs();
    const ackAt = Date.now();
    const sent: FirstHitTrace['searches'] = [];
    await until(
      async () => {
        const at = Date.now();
        const r = await gql<{ searchMemory: Array<{ kind: string }> }>(SEARCH, { ns, q: 'which editor do I use?' });
        const eventHit = r.searchMemory.some((h) => h.kind === 'EVENT');
        sent.push({ sent: at, answered: Date.now(), eventHit });
        return eventHit;
      },
      child,
      () => output,
      30_000,
    );
    const hit = nowMs();
    const hitAt = Date.now();
    // A second message 3 s later: its projection and search meet the statistics the first one
    // moved (a plan made on an empty store is planned again once a count leaves zero).
    await sleep(3_000);
    await gql(INGEST, {
      input: { namespace: ns, source: 'bench', sourceEventId: 'm-2', kind: 'MESSAGE', role: 'USER', content: 'my cat Biscuit wakes me at 5am' },
    });
    const secondAcked = nowMs();
    await until(
      async () => {
        const r = await gql<{ searchMemory: Array<{ kind: string; event: { content: string } | null }> }>(SEARCH2, { ns, q: 'what is my cat called?' });
        return r.searchMemory.some((h) => h.kind === 'EVENT' && /Biscuit/.test(h.event?.content ?? ''));
      },
      child,
      () => output,
      30_000,
    );
    const secondHit = nowMs();
    // Idle: let the derivation of those messages and its projection finish first.
    await sleep(3_000);
    // A session a person runs lasts longer than this bench's seconds: a start that dumps the
    // class-data-sharing archive in the background (start 2) runs until the archive is written, as
    // any session of a minute or more does, so that later starts measure the warm restart a user
    // meets. How long that took is reported (archiveWrittenMs, from spawn).
    let archiveWrittenMs: number | null = null;
    if (/class-data-sharing: dumping/.test(output + cdsLine)) {
      await until(
        async () => /class-data-sharing archive (written|.*failed)/.test(output),
        child,
        () => output,
        300_000,
      );
      archiveWrittenMs = /class-data-sharing archive written/.test(output) ? round(nowMs() - t0, 0) : null;
    }
    const below = await descendants(child.pid as number);
    const tStop = nowMs();
    child.kill(how.signal);
    const exitCode = await exited;
    const idleStopMs = nowMs() - tStop;
    while (below.some((p) => processAlive(p.pid)) && nowMs() - tStop < 120_000) await sleep(20);
    const stopToAllChildrenGoneMs = nowMs() - tStop;
    // The last chunk of the log may lack its newline.
    if (partial.startsWith('{')) {
      try {
        lines.push(JSON.parse(partial) as LogLine);
      } catch {
        // cut short
      }
    }
    return {
      launcher: how.launcher,
      signal: how.signal,
      cdsMode: /class-data-sharing: (\w+)/.exec(output + cdsLine)?.[1] ?? null,
      spawnToHealthyMs: round(spawnToHealthyMs, 0),
      archiveWrittenMs,
      ingestAckMs: round(acked - tIngest, 1),
      ingestToFirstEventHitMs: round(hit - acked, 1),
      searchesUntilHit: sent.length,
      secondIngestToEventHitMs: round(secondHit - secondAcked, 1),
      loadAverage1m: round(load1m, 2),
      firstHitTrace: firstHitTrace(lines, ackAt, sentAt - 1_000, hitAt, sent),
      idleStopMs: round(idleStopMs, 0),
      stopToAllChildrenGoneMs: round(stopToAllChildrenGoneMs, 0),
      childProcesses: below.map((p) => p.command),
      shutdownSteps: lines.flatMap((l) => (l.step && l.ms !== undefined && / stopped$/.test(l.msg) ? [{ step: l.step, ms: l.ms }] : [])),
      exitCode,
    };
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}

async function until(check: () => Promise<boolean>, child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}):\n${output()}`);
    if (Date.now() > deadline) throw new Error(`timed out:\n${output()}`);
    await sleep(20);
  }
}

const INGEST = `mutation($input: EventInput!) { ingestEvent(input: $input) { status } }`;
const SEARCH = `query($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q, limit: 5) { kind } }`;
const SEARCH2 = `query($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q, limit: 5) { kind event { content } } }`;
