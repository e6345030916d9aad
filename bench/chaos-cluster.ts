import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../src/platform/local-services/free-port';
import { LocalNeo4j, startLocalNeo4j } from '../src/platform/local-services/local-neo4j';

/** The compiled service (`npm run build`): the chaos run kills real OS processes. */
export const MAIN = path.resolve(
  __dirname.includes(`${path.sep}dist${path.sep}`) ? path.join(__dirname, '..') : path.join(__dirname, '..', 'dist'),
  'src',
  'app',
  'main.js',
);

export type ProcessKind = 'api' | 'worker';

export interface ClusterOptions {
  postgresUrl: string;
  runtimeUrl: string;
  adminToken: string;
  dataDir: string;
  /** Environment every service process gets on top of the stores' (timings, embedder). */
  env: Record<string, string>;
  log: (msg: string) => void;
}

/**
 * One service process under a supervisor, as systemd `Restart=always` would keep it: whenever it
 * exits (killed, or failed to start because Neo4j is down) it is started again after a pause.
 */
export class Supervised {
  private child: ChildProcess | undefined;
  private stopped = false;
  /** Exits the chaos run did not cause (a start that failed, a crash). */
  unexpectedExits = 0;
  starts = 0;
  private failedStarts = 0;
  readonly tail: string[] = [];

  constructor(
    readonly name: string,
    readonly kind: ProcessKind,
    readonly port: number | undefined,
    private readonly env: Record<string, string>,
    private readonly log: (msg: string) => void,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port ?? 0}`;
  }

  get pid(): number | undefined {
    return this.child?.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
  }

  start(): void {
    if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first`);
    const args = this.kind === 'api' ? [MAIN, 'serve', '--no-worker'] : [MAIN, 'worker'];
    const child = spawn(process.execPath, args, {
      env: { ...this.env, ...(this.port ? { PORT: String(this.port) } : {}), WORKER_ID: `${this.name}-${this.starts}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.starts += 1;
    this.child = child;
    const keep = (d: Buffer) => {
      this.tail.push(...d.toString().split('\n').filter(Boolean));
      if (this.tail.length > 200) this.tail.splice(0, this.tail.length - 200);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const startedAt = Date.now();
    child.on('exit', (code, signal) => {
      if (this.child !== child) return;
      this.child = undefined;
      if (this.stopped) return;
      // A start that fails at once (Neo4j down) is retried with backoff, up to 5 s apart.
      this.failedStarts = signal !== 'SIGKILL' && Date.now() - startedAt < 30_000 ? this.failedStarts + 1 : 0;
      if (signal !== 'SIGKILL') {
        this.unexpectedExits += 1;
        this.log(`${this.name} exited (${code ?? signal}); restarting`);
      }
      setTimeout(
        () => {
          if (!this.stopped && !this.child) this.start();
        },
        Math.min(5000, 500 * 2 ** this.failedStarts),
      ).unref();
    });
  }

  /** kill -9; the supervisor starts it again. */
  kill9(): number | undefined {
    const pid = this.pid;
    if (pid) process.kill(pid, 'SIGKILL');
    return pid;
  }

  /** Waits until the process answers: an API its /health (any status), a worker is simply running. */
  async ready(timeoutMs = 600_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.kind === 'worker' ? this.pid !== undefined : await this.answers()) return;
      if (Date.now() > deadline) throw new Error(`${this.name} not ready in ${timeoutMs} ms; last output:\n${this.tail.slice(-20).join('\n')}`);
      await sleep(200);
    }
  }

  private async answers(): Promise<boolean> {
    if (!this.pid) return false;
    try {
      const res = await fetch(`${this.url}/health`, { signal: AbortSignal.timeout(2000) });
      await res.body?.cancel();
      return true;
    } catch {
      return false;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
}

/** The local Neo4j on a fixed port and data folder, so a restart after kill -9 is the same store. */
export class ChaosNeo4j {
  private handle: LocalNeo4j | undefined;
  private constructor(
    private readonly dataDir: string,
    readonly port: number,
    readonly password: string,
    private readonly log: (msg: string) => void,
  ) {}

  static async start(dataDir: string, log: (msg: string) => void): Promise<ChaosNeo4j> {
    const n = new ChaosNeo4j(dataDir, await freePort(), 'chaos-neo4j-password', log);
    await n.restart();
    return n;
  }

  get uri(): string {
    return `bolt://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.handle?.pid;
  }

  /** Starts it (again); resolves when Bolt answers. */
  async restart(): Promise<void> {
    this.handle = await startLocalNeo4j({
      dataDir: this.dataDir,
      cacheDir: path.resolve(process.env.CACHE_DIR ?? '.cache'),
      javaHome: process.env.JAVA_HOME || undefined,
      password: this.password,
      port: this.port,
      heapMb: 512,
      log: (m) => this.log(m),
    });
  }

  /** kill -9 the JVM; returns its pid. */
  async kill9(): Promise<number | undefined> {
    const pid = this.handle?.pid;
    this.handle = undefined;
    if (!pid || pid < 0) return undefined;
    process.kill(pid, 'SIGKILL');
    // Wait for the process to be gone, so the restart does not race its store lock.
    for (let i = 0; i < 100; i += 1) {
      try {
        process.kill(pid, 0);
      } catch {
        return pid;
      }
      await sleep(50);
    }
    return pid;
  }

  async stop(): Promise<void> {
    await this.handle?.stop();
    this.handle = undefined;
  }
}

/** The environment of a service process of the run (stores, admin token, timings). */
export function serviceEnv(opts: Omit<ClusterOptions, 'log'>, neo4j: ChaosNeo4j): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    ...(process.env.JAVA_HOME ? { JAVA_HOME: process.env.JAVA_HOME } : {}),
    CACHE_DIR: path.resolve(process.env.CACHE_DIR ?? '.cache'),
    DATABASE_URL: opts.postgresUrl,
    DATABASE_RUNTIME_URL: opts.runtimeUrl,
    NEO4J_URI: neo4j.uri,
    NEO4J_USER: 'neo4j',
    NEO4J_PASSWORD: neo4j.password,
    ADMIN_TOKEN: opts.adminToken,
    DATA_DIR: path.join(opts.dataDir, 'service'),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ...opts.env,
  };
}

/** Two API and two worker processes on one Postgres and one local Neo4j. */
export class ChaosCluster {
  readonly apis: Supervised[] = [];
  readonly workers: Supervised[] = [];

  private constructor(readonly neo4j: ChaosNeo4j) {}

  static async start(opts: ClusterOptions): Promise<ChaosCluster> {
    const neo4j = await ChaosNeo4j.start(path.join(opts.dataDir, 'neo4j'), opts.log);
    const cluster = new ChaosCluster(neo4j);
    // Whatever ends this process, none of its children outlives it.
    process.once('exit', () => {
      for (const p of cluster.all) p.kill9();
      const pid = neo4j.pid;
      try {
        if (pid && pid > 0) process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    });
    const env = serviceEnv(opts, neo4j);
    for (const i of [1, 2]) cluster.apis.push(new Supervised(`api-${i}`, 'api', await freePort(), env, opts.log));
    for (const i of [1, 2]) cluster.workers.push(new Supervised(`worker-${i}`, 'worker', undefined, env, opts.log));
    // The first API migrates alone; the others start on a migrated schema.
    const [first, ...rest] = [...cluster.apis, ...cluster.workers] as [Supervised, ...Supervised[]];
    first.start();
    await first.ready();
    for (const p of rest) p.start();
    await Promise.all(rest.map((p) => p.ready()));
    return cluster;
  }

  get all(): Supervised[] {
    return [...this.apis, ...this.workers];
  }

  async ready(): Promise<void> {
    await Promise.all(this.all.map((p) => p.ready()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.all.map((p) => p.stop()));
    await this.neo4j.stop();
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
