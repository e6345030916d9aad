import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { readInstanceState } from '../src/platform/local-services/instance-state';
import { nowMs, report, round } from './harness';

/**
 * Issue 41 item 1: a CLI command against a running instance answers in ≤ 2 s plus its own work.
 * Starts `serve` on the embedded defaults in a fresh DATA_DIR (PORT=0), ingests a small chat, then
 * times each command as a person runs it (`node dist/src/app/main.js <command>`, nothing but
 * DATA_DIR set), `BENCH_REPEATS` (default 3) times each, beside two floors measured in the same run:
 * a bare `node -e 0` and `main.js --help` (Node plus the CLI's own start). `mcp` is timed from the
 * spawn to the first answer (initialize + tools/list through the official SDK's stdio client).
 * Then the service is stopped and the PostgreSQL-only commands are timed with no service running.
 */
export async function cliBench(): Promise<void> {
  const repeats = Number(process.env.BENCH_REPEATS ?? 3);
  const root = repoRoot();
  const main = path.join(root, 'dist', 'src', 'app', 'main.js');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-cli-bench-'));
  fs.chmodSync(work, 0o755);
  const dataDir = path.join(work, 'data');
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  if (process.env.CACHE_DIR) env.CACHE_DIR = path.resolve(process.env.CACHE_DIR);
  const ns = 'bench/cli';
  const jsonl = path.join(work, 'events.jsonl');
  fs.writeFileSync(
    jsonl,
    ['Bob Smith is my manager', 'Bob lives in Berlin', 'Bob plays the cello', 'I use vim for everything']
      .map((content, i) => JSON.stringify({ namespace: ns, source: 'chat', sourceEventId: `m-${i}`, kind: 'MESSAGE', role: 'USER', content }))
      .join('\n') + '\n',
  );
  const one = path.join(work, 'one.jsonl');
  // `args` as a function: a command that must differ per run (a new backup file each time).
  const time = async (label: string, args: string[] | ((i: number) => string[])): Promise<{ label: string; ms: number[]; medianMs: number }> => {
    const ms: number[] = [];
    for (let i = 0; i < repeats; i++) {
      const t0 = nowMs();
      const code = await new Promise<number | null>((resolve) => {
        const c = spawn(process.execPath, typeof args === 'function' ? args(i) : args, { cwd: root, env, stdio: ['ignore', 'ignore', 'ignore'] });
        c.once('exit', resolve);
      });
      if (code !== 0 && code !== 2) throw new Error(`${label} exited with ${code}`);
      ms.push(round(nowMs() - t0, 0));
    }
    return { label, ms, medianMs: [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)] ?? 0 };
  };
  const service = spawn(process.execPath, [main, 'serve'], { cwd: root, env: { ...env, PORT: '0' }, stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise((resolve) => service.once('exit', resolve));
  try {
    let api: string | undefined;
    while (!api) {
      if (service.exitCode !== null) throw new Error('the service exited');
      const s = readInstanceState(dataDir);
      if (s?.api && s.pid === service.pid && (await fetch(`${s.api}/health`).catch(() => null))?.status === 200) api = s.api;
      else await new Promise((r) => setTimeout(r, 250));
    }
    const token = fs.readFileSync(path.join(dataDir, 'admin.token'), 'utf8').trim();
    await time('ingest (setup)', [main, 'ingest', jsonl]);
    const floors = [await time('node -e 0', ['-e', '0']), await time('medallion --help', [main, '--help'])];
    let n = 0;
    const running = [
      await time('verify --namespace', [main, 'verify', '--namespace', ns]),
      await time('export --out', [main, 'export', '--namespace', ns, '--out', path.join(work, 'export.jsonl')]),
      await time('quality --namespace', [main, 'quality', '--namespace', ns]),
      await (async () => {
        const r = { label: 'ingest (one line)', ms: [] as number[], medianMs: 0 };
        for (let i = 0; i < repeats; i++) {
          fs.writeFileSync(
            one,
            JSON.stringify({ namespace: ns, source: 'chat', sourceEventId: `one-${n++}`, kind: 'MESSAGE', role: 'USER', content: 'ping' }) + '\n',
          );
          r.ms.push((await time('ingest', [main, 'ingest', one])).ms[0] ?? 0);
        }
        r.medianMs = [...r.ms].sort((a, b) => a - b)[Math.floor(r.ms.length / 2)] ?? 0;
        return r;
      })(),
      await time('backup --out', (i) => [main, 'backup', '--out', path.join(work, `backup-${i}.gz`)]),
      await mcpFirstAnswer(main, root, { ...env, MEDALLION_TOKEN: token }, repeats),
    ];
    service.kill('SIGTERM');
    await exited;
    const stopped = [await time('verify --namespace (no service: starts PostgreSQL)', [main, 'verify', '--namespace', ns])];
    report('cli', {
      settings: 'embedded PostgreSQL and local Neo4j, defaults; commands run with DATA_DIR alone',
      loadAverage1m: round(os.loadavg()[0] ?? 0, 2),
      target: 'a command against a running instance: ≤ 2000 ms plus its own work',
      floors,
      againstRunningService: running.map((r) => ({ ...r, aboveHelpMs: r.medianMs - (floors[1]?.medianMs ?? 0) })),
      withoutService: stopped,
    });
  } finally {
    if (service.exitCode === null) service.kill('SIGKILL');
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** `medallion mcp` from spawn to its first answers (initialize, then tools/list) through the official SDK. */
async function mcpFirstAnswer(main: string, root: string, env: NodeJS.ProcessEnv, repeats: number) {
  const ms: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const t0 = nowMs();
    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [main, 'mcp'], env: env as Record<string, string>, cwd: root, stderr: 'ignore' }),
    );
    await client.listTools();
    ms.push(round(nowMs() - t0, 0));
    await client.close();
  }
  return { label: 'mcp: spawn → tools/list answered', ms, medianMs: [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)] ?? 0 };
}

function repoRoot(): string {
  return __dirname.includes(`${path.sep}dist${path.sep}`) ? path.join(__dirname, '..', '..') : path.join(__dirname, '..');
}
