import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { runtimeUrlFor, testStores } from './stores';

const MAIN = path.resolve(__dirname, '..', '..', 'dist', 'src', 'app', 'main.js');

export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly output: string[];
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `medallion worker` (owner URL for migrations, runtime role for its queries, as in production) (the compiled service, `npm run build`) as a separate OS process. */
export function spawnWorker(databaseUrl: string, env: Record<string, string>): WorkerProcess {
  return spawnService('worker', databaseUrl, env);
}

/** Starts the compiled service's `worker` or `serve` command (with `args`, e.g. `--no-worker`) as a separate OS process on the test stores. */
export function spawnService(command: 'worker' | 'serve', databaseUrl: string, env: Record<string, string>, args: readonly string[] = []): WorkerProcess {
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm test does)`);
  const stores = testStores();
  const child = spawn(process.execPath, [MAIN, command, ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      DATABASE_URL: databaseUrl,
      DATABASE_RUNTIME_URL: runtimeUrlFor(databaseUrl),
      NEO4J_URI: stores.neo4j.uri,
      NEO4J_USER: stores.neo4j.user,
      NEO4J_PASSWORD: stores.neo4j.password,
      DATA_DIR: '/tmp/medallion-test-worker',
      LOG_LEVEL: 'info',
      OFFLINE_EMBEDDER: 'hashing',
      DERIVE_MAX_WAIT_MS: '0',
      DERIVE_POLL_MS: '50',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (d: Buffer) => output.push(d.toString()));
  child.stderr?.on('data', (d: Buffer) => output.push(d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output,
    exited,
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
