import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { App, startApp, startStores, Stores } from '../src/app/app';
import { loadConfig } from '../src/common/config';
import { createLogger } from '../src/common/logger';

/** Percentile of sorted-or-not samples (nearest rank). */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;

export function summarize(ms: readonly number[]): { n: number; p50: number; p95: number; mean: number } {
  return { n: ms.length, p50: round(percentile(ms, 50)), p95: round(percentile(ms, 95)), mean: round(ms.reduce((a, b) => a + b, 0) / ms.length) };
}

export const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;

export interface BenchEnv {
  app: App;
  url: string;
  adminToken: string;
  postgresUrl: string;
}

export interface BenchStores {
  stores: Stores;
  dataDir: string;
  adminToken: string;
  /** Starts the service on these stores with extra environment (stop it yourself). */
  startApp(env?: Record<string, string>, opts?: { api: boolean; worker: boolean }): Promise<BenchEnv>;
}

/**
 * Starts the stores a benchmark runs on: DATABASE_URL / NEO4J_URI when set, else the embedded
 * stores under a throwaway DATA_DIR. Apps started through it share them.
 */
export async function withBenchStores<T>(fn: (b: BenchStores) => Promise<T>): Promise<T> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-bench-'));
  fs.chmodSync(dataDir, 0o755);
  const adminToken = `bench-admin-${randomBytes(16).toString('hex')}`;
  const base = { ...process.env, DATA_DIR: dataDir, PORT: '0', ADMIN_TOKEN: adminToken, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' };
  const config = loadConfig(base);
  const log = createLogger(config.logLevel, 'bench');
  const stores: Stores = await startStores(config, log);
  try {
    return await fn({
      stores,
      dataDir,
      adminToken,
      async startApp(env = {}, opts = { api: true, worker: true }) {
        const c = loadConfig({ ...base, ...env });
        const app = await startApp(c, stores, opts, log);
        return { app, url: app.http?.url ?? '', adminToken, postgresUrl: stores.postgresUrl };
      },
    });
  } finally {
    await stores.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The service with its stores, for one benchmark body. */
export async function withBenchApp<T>(fn: (env: BenchEnv) => Promise<T>, opts: { worker: boolean } = { worker: true }): Promise<T> {
  return withBenchStores(async (b) => {
    const env = await b.startApp({}, { api: true, worker: opts.worker });
    try {
      return await fn(env);
    } finally {
      await env.app.stop();
    }
  });
}

/** Prints a result and writes it to bench/results/<name>.json. */
export function report(name: string, result: Record<string, unknown>): void {
  const dir = path.resolve(
    __dirname.includes(`${path.sep}dist${path.sep}`) ? path.join(__dirname, '..', '..', 'bench', 'results') : path.join(__dirname, 'results'),
  );
  fs.mkdirSync(dir, { recursive: true });
  const doc = {
    benchmark: name,
    at: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, memGiB: round(os.totalmem() / 2 ** 30, 1), node: process.version },
    ...result,
  };
  fs.writeFileSync(path.join(dir, `${name}.json`), JSON.stringify(doc, null, 2) + '\n');
  process.stdout.write(`\n== ${name} ==\n${JSON.stringify(result, null, 2)}\n(written to bench/results/${name}.json)\n`);
}
