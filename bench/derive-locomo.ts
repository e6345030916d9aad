import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BenchStores, nowMs, report, round, withBenchStores } from './harness';

const ROOT = path.resolve(__dirname.includes(`${path.sep}dist${path.sep}`) ? path.join(__dirname, '..', '..') : path.join(__dirname, '..'));
// ../shared/eval beside the checkout (a worktree under wt/ looks one level further up); LOCOMO_FILE overrides.
const LOCOMO_CANDIDATES = [
  process.env.LOCOMO_FILE,
  ...['..', '../..'].map((up) => path.resolve(ROOT, up, 'shared', 'eval', 'locomo-dev', 'locomo-dev.json')),
].filter((f): f is string => !!f);
export const LOCOMO = LOCOMO_CANDIDATES.find((f) => fs.existsSync(f)) ?? (LOCOMO_CANDIDATES[0] as string);
const MAIN = path.join(ROOT, 'dist', 'src', 'app', 'main.js');
const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`;
const STATUS = `query($ns: String!) { pipelineStatus(namespace: $ns) { pending deadLetters } }`;
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
}
export interface Sample {
  sample_id: string;
  conversation: Record<string, unknown>;
}

/** "1:56 pm on 8 May, 2023" → that instant (UTC). */
export function sessionDate(s: string): Date {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(s);
  if (!m) throw new Error(`unreadable LoCoMo session date: ${s}`);
  const [, h, min, ampm, day, month, year] = m as unknown as [string, string, string, string, string, string, string];
  const hour = (Number(h) % 12) + (ampm.toLowerCase() === 'pm' ? 12 : 0);
  return new Date(Date.UTC(Number(year), MONTHS.indexOf(month.toLowerCase()), Number(day), hour, Number(min)));
}

/** One event per turn: "Speaker: text", by the speaker, at the session's date; one namespace per conversation. */
export function locomoEvents(samples: readonly Sample[], nsPrefix: string): Map<string, Array<Record<string, unknown>>> {
  const out = new Map<string, Array<Record<string, unknown>>>();
  for (const sample of samples) {
    const ns = `${nsPrefix}-${sample.sample_id}`;
    const events: Array<Record<string, unknown>> = [];
    for (let n = 1; Array.isArray(sample.conversation[`session_${n}`]); n++) {
      const occurredAt = sessionDate(String(sample.conversation[`session_${n}_date_time`])).toISOString();
      for (const turn of sample.conversation[`session_${n}`] as Turn[]) {
        events.push({
          namespace: ns,
          source: 'locomo',
          sourceEventId: `${sample.sample_id}:${turn.dia_id}`,
          kind: 'MESSAGE',
          role: 'USER',
          actor: turn.speaker,
          content: `${turn.speaker}: ${turn.text}`,
          conversationId: sample.sample_id,
          sessionId: `session_${n}`,
          sequenceNum: events.length,
          occurredAt,
        });
      }
    }
    out.set(ns, events);
  }
  return out;
}

interface Worker {
  child: ChildProcess;
  output: string[];
  exited: Promise<number | null>;
}

/** `medallion worker` as its own OS process on the bench's stores (BENCH_WORKER_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"). */
function spawnWorker(b: BenchStores, env: Record<string, string>): Worker {
  const nodeArgs = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, MAIN, 'worker'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      DATABASE_URL: b.stores.postgresUrl,
      ...(b.stores.postgresRuntimeUrl ? { DATABASE_RUNTIME_URL: b.stores.postgresRuntimeUrl } : { ALLOW_OWNER_RUNTIME: 'true' }),
      NEO4J_URI: b.stores.neo4j.uri,
      NEO4J_USER: b.stores.neo4j.user,
      NEO4J_PASSWORD: b.stores.neo4j.password,
      DATA_DIR: b.dataDir,
      CACHE_DIR: path.join(ROOT, '.cache'),
      ADMIN_TOKEN: b.adminToken,
      LOG_LEVEL: 'info',
      DERIVE_MAX_WAIT_MS: '0',
      DERIVE_POLL_MS: '50',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (d: Buffer) => output.push(d.toString()));
  child.stderr?.on('data', (d: Buffer) => output.push(d.toString()));
  return { child, output, exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
}

/**
 * CPU seconds (user + system, with reaped children) of every process on the machine, grouped:
 * `postgres` and `neo4j` (java) by command name, the worker and this process by pid, the rest
 * as `other`. Two snapshots give where a run's CPU went (Linux; empty elsewhere).
 */
function cpuByGroup(workerPid: number | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  let dirs: string[];
  try {
    dirs = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return out;
  }
  for (const d of dirs) {
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
      const pid = Number(d);
      const group = pid === workerPid ? 'worker' : pid === process.pid ? 'benchAndApi' : comm === 'postgres' ? 'postgres' : comm === 'java' ? 'neo4j' : 'other';
      out[group] = (out[group] ?? 0) + ticks / 100;
    } catch {
      // the process ended between the listing and the read
    }
  }
  return out;
}

/**
 * How often the bench asks every namespace's pipelineStatus while it waits (BENCH_POLL_MS, 500).
 * The polls run on the machine under test: at 100 ms, three namespaces' status queries cost the
 * API and Postgres about as much CPU as the ingest itself; at 500 ms the end is seen at most
 * half a second late (about 1 % of a run).
 */
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 500);

async function until(what: string, timeoutMs: number, probe: () => Promise<boolean>, pollMs = 100): Promise<void> {
  const deadline = nowMs() + timeoutMs;
  while (!(await probe())) {
    if (nowMs() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/**
 * Derivation throughput on real conversations: the LoCoMo development turns (../shared/eval,
 * never copied here) ingested through the API into a service whose worker runs as its own
 * process with the offline models; events/s from the first ingest until every namespace's
 * pipelineStatus.pending is 0, with batches, fallbacks and dead letters.
 */
export async function deriveLocomo(): Promise<void> {
  if (!fs.existsSync(LOCOMO)) {
    process.stdout.write(`derive-locomo: ${LOCOMO} is absent; skipped\n`);
    return;
  }
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first`);
  const samples = JSON.parse(fs.readFileSync(LOCOMO, 'utf8')) as Sample[];
  const limit = Number(process.env.BENCH_LOCOMO_CONVERSATIONS ?? samples.length);
  const byNs = locomoEvents(samples.slice(0, limit), 'bench-locomo');
  const total = [...byNs.values()].reduce((n, e) => n + e.length, 0);
  // The worker's settings: DERIVE_BATCH_SIZE 100 unless set, and any DERIVE_*, GOLD_*, OFFLINE_* or MODEL_* of this process.
  const passed = Object.entries(process.env).filter((kv): kv is [string, string] => /^(DERIVE|GOLD|OFFLINE|MODEL)_/.test(kv[0]) && kv[1] !== undefined);
  const env: Record<string, string> = { DERIVE_BATCH_SIZE: '100', ...Object.fromEntries(passed) };
  await withBenchStores(async (b) => {
    const api = await b.startApp({}, { api: true, worker: false });
    const worker = spawnWorker(b, env);
    try {
      await until('the worker to load its models', 600_000, async () => worker.output.join('').includes('models: extractor') || worker.child.exitCode !== null);
      if (worker.child.exitCode !== null) throw new Error(`worker exited: ${worker.output.join('').slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 5000)); // let it finish starting (extractor threads load their modules) outside the timed window
      const call = async <T>(query: string, variables: Record<string, unknown>): Promise<T> => {
        const res = await fetch(`${api.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${b.adminToken}` },
          body: JSON.stringify({ query, variables }),
        });
        const body = (await res.json()) as { data?: T; errors?: unknown[] };
        if (body.errors) throw new Error(JSON.stringify(body.errors));
        return body.data as T;
      };
      const start = nowMs();
      const groupsAtStart = cpuByGroup(worker.child.pid);
      const loadAtStart = os.loadavg()[0] as number;
      for (const events of byNs.values()) for (let i = 0; i < events.length; i += 500) await call(INGEST, { input: events.slice(i, i + 500) });
      const ingestSeconds = (nowMs() - start) / 1000;
      let deadLetters = 0;
      await until(
        'derivation to settle',
        1_800_000,
        async () => {
          const s = await Promise.all([...byNs.keys()].map((ns) => call<{ pipelineStatus: { pending: number; deadLetters: number } }>(STATUS, { ns })));
          deadLetters = s.reduce((n, x) => n + x.pipelineStatus.deadLetters, 0);
          return s.every((x) => x.pipelineStatus.pending === 0);
        },
        POLL_MS,
      );
      const seconds = (nowMs() - start) / 1000;
      const groupsAtEnd = cpuByGroup(worker.child.pid);
      const workerCpu = (groupsAtEnd.worker ?? Number.NaN) - (groupsAtStart.worker ?? Number.NaN);
      const cpuMsPerEventByProcess = Object.fromEntries(
        Object.entries(groupsAtEnd).map(([g, s]) => [g, round(((s - (groupsAtStart[g] ?? 0)) * 1000) / total, 1)]),
      );
      const [runs] = (await api.app.ds.query(
        `SELECT count(*)::int AS batches, coalesce(sum(event_count), 0)::int AS events, coalesce(sum(fact_count), 0)::int AS facts, coalesce(sum(model_calls), 0)::int AS model_calls
           FROM silver.derivation_runs WHERE namespace = ANY($1)`,
        [[...byNs.keys()]],
      )) as Array<{ batches: number; events: number; facts: number; model_calls: number }>;
      const log = worker.output.join('');
      report(`derive-locomo${process.env.BENCH_RESULT_SUFFIX ?? ''}`, {
        input: `${LOCOMO} (${byNs.size} conversations, ${total} turns, one event per turn)`,
        embedder: /models: embedder ([^"\s]+)/.exec(log)?.[1] ?? 'unknown',
        batchSize: Number(env.DERIVE_BATCH_SIZE),
        statusPollMs: POLL_MS,
        embedderSessions: Number(env.OFFLINE_EMBEDDER_SESSIONS ?? 2), // the worker-only default
        workerSettings: Object.fromEntries(passed),
        events: total,
        ingestSeconds: round(ingestSeconds),
        secondsUntilSettled: round(seconds),
        eventsPerSec: round(total / seconds, 1),
        workerCpuSeconds: round(workerCpu),
        workerCpuMsPerEvent: round((workerCpu * 1000) / total, 1),
        // Every process's CPU over the run per event (other: anything else on the machine, e.g. another bench).
        cpuMsPerEventByProcess,
        // Other work on the machine shares its cores: the load average says how much.
        loadAverage1m: { atStart: round(loadAtStart), atEnd: round(os.loadavg()[0] as number) },
        derivationRuns: runs,
        fallbacks: (log.match(/retrying event by event/g) ?? []).length,
        deadLetters,
        note: 'worker = `node dist/src/app/main.js worker`, its own OS process (BENCH_WORKER_NODE_ARGS adds node flags, e.g. --cpu-prof); API in the bench process; timed from the first ingest request until pipelineStatus.pending is 0 in every namespace',
      });
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exited;
      await api.app.stop();
    }
  });
}
