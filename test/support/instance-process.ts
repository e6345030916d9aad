import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { InstanceState, readInstanceState } from '../../src/platform/local-services/instance-state';
import { descendants, processAlive, ProcessInfo } from '../../src/platform/process-tree';

export const REPO = path.resolve(__dirname, '..', '..');
export const MAIN = path.join(REPO, 'dist', 'src', 'app', 'main.js');

/**
 * The environment a person has when running the README's commands in the checkout: nothing but
 * DATA_DIR (which instance) on top of the shell's basics. No store URL, port or secret: the
 * embedded defaults, found through DATA_DIR/instance.json. PORT=0 only keeps a test service off
 * the ports of services already running on this machine.
 */
export function personEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', DATA_DIR: dataDir, LOG_LEVEL: 'info', ...extra };
  if (process.env.JAVA_HOME) env.JAVA_HOME = process.env.JAVA_HOME;
  if (process.env.CACHE_DIR) env.CACHE_DIR = path.resolve(process.env.CACHE_DIR);
  return env;
}

export interface Spawned {
  readonly child: ChildProcess;
  readonly output: string[];
  readonly exited: Promise<number | null>;
}

export function spawnMain(args: readonly string[], env: NodeJS.ProcessEnv): Spawned {
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm test does)`);
  const child = spawn(process.execPath, [MAIN, ...args], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  child.stdout?.on('data', (d: Buffer) => output.push(d.toString()));
  child.stderr?.on('data', (d: Buffer) => output.push(d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output, exited };
}

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** Runs one CLI command to its end (`medallion <args>`), as a person would in the checkout. */
export async function runCli(args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs = 600_000): Promise<CliRun> {
  const t0 = Date.now();
  const child = spawn(process.execPath, [MAIN, ...args], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stdout, stderr, ms: Date.now() - t0 };
}

/** Waits until the `serve` of DATA_DIR has written its API URL and its /health answers 200. */
export async function untilServing(dataDir: string, p: Spawned, timeoutMs = 600_000): Promise<InstanceState & { api: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = readInstanceState(dataDir);
    if (state?.api && state.pid === p.child.pid && !state.stoppedAt) {
      const res = await fetch(`${state.api}/health`).catch(() => null);
      if (res?.status === 200) return state as InstanceState & { api: string };
    }
    if (p.child.exitCode !== null) throw new Error(`the service exited (${p.child.exitCode}):\n${p.output.join('').slice(-5000)}`);
    if (Date.now() > deadline) throw new Error(`the service did not serve within ${timeoutMs} ms:\n${p.output.join('').slice(-5000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Sends `signal` to the process and measures how long until it and every process below it are gone. */
export async function stopAndCount(
  p: Spawned,
  signal: NodeJS.Signals,
  timeoutMs = 60_000,
): Promise<{ code: number | null; children: ProcessInfo[]; goneMs: number }> {
  const pid = p.child.pid as number;
  const children = await descendants(pid);
  const t0 = Date.now();
  p.child.kill(signal);
  const code = await p.exited;
  while (children.some((c) => processAlive(c.pid)) && Date.now() - t0 < timeoutMs) await new Promise((r) => setTimeout(r, 50));
  const goneMs = Date.now() - t0;
  for (const c of children) if (processAlive(c.pid)) process.kill(c.pid, 'SIGKILL');
  return { code, children, goneMs };
}
