import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Stores } from '../src/app/app';
import { freePort } from '../src/platform/local-services/free-port';
import { parseExposition, Scrape } from '../test/support/prometheus';

/**
 * The compiled service as a person runs it (`node dist/src/app/main.js serve`, `serve --no-worker`,
 * `worker`), in its own OS process, on stores a benchmark started: what a client meets, not an app
 * inside the benchmark's own event loop. `BENCH_SERVICE_ROOT` runs another built checkout (an A/B
 * against an older tree, e.g. a `git worktree` of main built with `npm run build`).
 */
export interface ServiceProcess {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:<port>` for `serve`; empty for `worker`. */
  readonly url: string;
  stop(): Promise<void>;
}

export function serviceRoot(): string {
  const here = __dirname.includes(`${path.sep}dist${path.sep}`) ? path.join(__dirname, '..', '..') : path.join(__dirname, '..');
  return path.resolve(process.env.BENCH_SERVICE_ROOT ?? here);
}

/** The environment a service process needs on the benchmark's stores (its own DATA_DIR, no local stores of its own). */
export function serviceEnv(stores: Stores, dataDir: string, adminToken: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: stores.postgresUrl,
    DATABASE_RUNTIME_URL: stores.postgresRuntimeUrl,
    NEO4J_URI: stores.neo4j.uri,
    NEO4J_USER: stores.neo4j.user,
    NEO4J_PASSWORD: stores.neo4j.password,
    ADMIN_TOKEN: adminToken,
    DATA_DIR: dataDir,
    CACHE_DIR: path.resolve(process.env.CACHE_DIR ?? path.join(serviceRoot(), '.cache')),
    LOG_LEVEL: process.env.BENCH_SERVICE_LOG_LEVEL ?? 'warn',
    ...extra,
  };
  if (!stores.postgresRuntimeUrl) delete env.DATABASE_RUNTIME_URL;
  return env;
}

/**
 * Starts `command` and resolves once its `/health` answers 200 (a worker's on METRICS_PORT; the
 * log level may hide the line that says its workers run). Its output goes to `logFile`.
 */
export async function startService(command: 'serve' | 'worker', args: readonly string[], env: NodeJS.ProcessEnv, logFile: string): Promise<ServiceProcess> {
  const root = serviceRoot();
  // A worker serves /health on METRICS_PORT: readiness does not depend on the log level.
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const log = fs.openSync(logFile, 'a');
  // BENCH_API_NODE_ARGS: Node flags for `serve` alone (e.g. --cpu-prof --cpu-prof-dir=DIR, which NODE_OPTIONS refuses),
  // not for the bench or a separate worker; serve's own worker process inherits them.
  const nodeArgs = command === 'serve' ? (process.env.BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean) : [];
  const child = spawn(process.execPath, [...nodeArgs, path.join(root, 'dist', 'src', 'app', 'main.js'), command, ...args], {
    cwd: root,
    env: command === 'serve' ? { ...env, PORT: String(port) } : { ...env, METRICS_PORT: String(port) },
    stdio: ['ignore', log, log],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 600_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command} exited (${child.exitCode}) during its start: see ${logFile}`);
    if (Date.now() > deadline) throw new Error(`${command} did not start within 10 minutes: see ${logFile}`);
    const up = (await fetch(`${url}/health`).catch(() => null))?.status === 200;
    if (up) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  return {
    child,
    url,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      fs.closeSync(log);
    },
  };
}

/** Processes whose parent is `pid` (a service's worker process). */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat && stat.ppid === pid) out.push(Number(entry));
  }
  return out;
}

/** A process's CPU seconds (user + system) from /proc, 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  const stat = readStat(pid);
  return stat ? stat.cpuTicks / 100 : 0;
}

function readStat(pid: number): { ppid: number; cpuTicks: number } | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), cpuTicks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return null;
  }
}

/** One scrape of `/metrics`, and how long it took to answer. */
export async function scrapeTimed(url: string): Promise<{ scrape: Scrape; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`${url}/metrics`);
  const text = await res.text();
  return { scrape: parseExposition(text), ms: performance.now() - t0 };
}
