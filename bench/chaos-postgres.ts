import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { processAlive } from '../src/platform/process-tree';
import { EmbeddedPostgresHandle, startEmbeddedPostgres } from '../src/platform/local-services/embedded-postgres';
import { sleep } from './chaos-cluster';

/**
 * The embedded PostgreSQL of the chaos run on a fixed port and data folder, so a restart after
 * kill -9 is the same cluster at the same URLs (WAL recovery on start).
 */
export class ChaosPostgres {
  private constructor(
    private handle: EmbeddedPostgresHandle,
    private readonly wantedDir: string,
    private readonly log: (msg: string) => void,
  ) {}

  static async start(dataDir: string, log: (msg: string) => void): Promise<ChaosPostgres> {
    return new ChaosPostgres(await startEmbeddedPostgres({ dataDir }), dataDir, log);
  }

  get url(): string {
    return this.handle.url;
  }

  get runtimeUrl(): string {
    return this.handle.runtimeUrl;
  }

  /** The postmaster's pid (first line of postmaster.pid). */
  get pid(): number | undefined {
    try {
      const pid = Number(fs.readFileSync(path.join(this.handle.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      return Number.isInteger(pid) && pid > 0 ? pid : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * kill -9 of the postmaster and every backend of it at once (what the OOM killer or a lost
   * container does), then waits until none is left; returns the postmaster's pid.
   */
  async kill9(): Promise<number | undefined> {
    const pid = this.pid;
    if (!pid) return undefined;
    let children: number[] = [];
    try {
      children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
        .split('\n')
        .map((s) => Number(s.trim()))
        .filter((n) => n > 0);
    } catch {
      // no children listed
    }
    for (const p of [pid, ...children]) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    for (let i = 0; i < 200; i += 1) {
      if ([pid, ...children].every((p) => !processAlive(p))) break;
      await sleep(50);
    }
    return pid;
  }

  /** Starts it again on the same data folder and port; resolves when it accepts connections. */
  async restart(): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        this.handle = await startEmbeddedPostgres({ dataDir: this.wantedDir, port: this.handle.port });
        return;
      } catch (err) {
        if (attempt >= 5) throw err;
        this.log(`postgres restart attempt ${attempt} failed: ${String(err).slice(0, 200)}; retrying`);
        await sleep(1000 * attempt);
      }
    }
  }

  async stop(): Promise<void> {
    await this.handle.stop();
  }
}
