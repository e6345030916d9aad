import { ChildProcess, fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { AppLogger } from '../common/logger';
import { METRIC_PREFIX } from '../api/metrics';
import { retryDelaySeconds } from '../platform/backoff';
import { forwardedMetrics, MetricFamily } from '../platform/telemetry/worker-metrics';

/**
 * The background workers of `serve` in a child process (docs/architecture.md "Processes"): the
 * rule extractor, the judge, the embedder's calls and the projector's bookkeeping run on the
 * child's event loop, never on the one that answers requests. The child is `medallion worker
 * --supervised` on the same stores and configuration, so derivation has exactly the guarantees
 * of a separate `worker` process (fenced leases, the outbox, the job kernel): it is one.
 *
 * Parent and child talk over the IPC channel `fork` opens: the child says when its workers run
 * (`ready`) and sends its pipeline metrics every `METRICS_EVERY_MS` (the parent's /metrics adds
 * them); the parent asks it to stop (`stop`). The channel closes when either process dies, and a
 * child whose parent is gone stops itself, so no worker outlives the service.
 */

/** What the parent and the child send each other. */
type ToParent = { type: 'ready' } | { type: 'metrics'; families: MetricFamily[] };
type ToChild = { type: 'stop' };

/** How often the child sends its pipeline metrics. */
const METRICS_EVERY_MS = 2_000;
/** A child stopped this long after it was asked to is killed (SIGKILL): its fenced leases lapse and another run redoes its batch. */
export const WORKER_STOP_GRACE_MS = 5_000;
/** A child that ran at least this long before it died is restarted at once; the restarts of one that keeps dying back off up to 30 s. */
const HEALTHY_RUN_MS = 60_000;

export interface WorkerProcessOptions {
  /** The environment the child reads its configuration from (the stores the parent started, as URLs). */
  readonly env: NodeJS.ProcessEnv;
  readonly log: AppLogger;
  /** Niceness of the child (os.setPriority): above 0, the scheduler gives the API's process the CPU first. */
  readonly nice: number;
  /** The compiled entry point; default: `main.js` beside this file (`dist/src/app/`). */
  readonly main?: string;
  readonly stopGraceMs?: number;
  /**
   * Whether the graph's schema is in place (the parent applied it): the child then skips the
   * schema step, which re-reads every node of the labels it backfills. Asked at each spawn.
   */
  readonly graphSchemaApplied?: () => boolean;
}

/** The running child (a new one after a crash), as the service that started it sees it. */
export interface WorkerProcess {
  /** The current child's process id (undefined between a crash and its restart). */
  readonly pid: number | undefined;
  /** Resolves once the first child's workers run; rejects with its output when it exits before (the start fails). */
  readonly ready: Promise<void>;
  /** The latest pipeline metrics the child sent (empty before the first). */
  metrics(): readonly MetricFamily[];
  /** Asks the child to stop (its stages finish their step), kills it after the grace period; no restart after this. */
  stop(): Promise<void>;
}

/** Starts the child worker process and keeps one running (restarted after a crash) until `stop`. */
export function startWorkerProcess(opts: WorkerProcessOptions): WorkerProcess {
  const main = opts.main ?? path.join(__dirname, 'main.js');
  if (!fs.existsSync(main)) throw new Error(`the worker process runs the compiled service, and ${main} is missing: run \`npm run build\``);
  let child: ChildProcess | undefined;
  let stopping: Promise<void> | undefined;
  let families: readonly MetricFamily[] = [];
  let crashes = 0;
  let restart: NodeJS.Timeout | undefined;
  let settleReady: { resolve(): void; reject(err: Error): void } | undefined;
  const ready = new Promise<void>((resolve, reject) => (settleReady = { resolve, reject }));
  // A failed start is reported by `ready`; no one may be waiting on it yet.
  ready.catch(() => undefined);

  const spawnChild = (): void => {
    const started = Date.now();
    // The service's Node flags (heap size, profiling) apply to its worker too; a debugger's port would be taken twice.
    const execArgv = process.execArgv.filter((a) => !a.startsWith('--inspect'));
    const args = ['worker', '--supervised', ...(opts.graphSchemaApplied?.() ? ['--graph-schema-applied'] : [])];
    const c = fork(main, args, { env: opts.env, execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child = c;
    if (c.pid !== undefined && opts.nice !== 0) {
      try {
        os.setPriority(c.pid, opts.nice);
      } catch (err) {
        opts.log.warn(
          `worker process: cannot set its niceness to ${opts.nice} (${err instanceof Error ? err.message : String(err)}); it runs at the service's priority`,
        );
      }
    }
    let running = false;
    c.on('message', (m: ToParent) => {
      if (m.type === 'metrics') families = m.families;
      if (m.type === 'ready') {
        running = true;
        crashes = 0;
        opts.log.info({ pid: c.pid }, 'worker process running (projector, derivation, jobs)');
        settleReady?.resolve();
        settleReady = undefined;
      }
    });
    c.on('exit', (code, signal) => {
      if (child === c) child = undefined;
      if (stopping) return;
      if (!running && settleReady) {
        settleReady.reject(new Error(`the worker process exited during its start (code ${code}, signal ${signal}); its log is above`));
        settleReady = undefined;
        return;
      }
      crashes = Date.now() - started >= HEALTHY_RUN_MS ? 0 : crashes + 1;
      const delay = crashes === 0 ? 0 : retryDelaySeconds(crashes - 1, 1, 30) * 1000;
      opts.log.error({ code, signal, restartInMs: delay }, 'worker process exited: derivation and projection pause until it is restarted');
      restart = setTimeout(spawnChild, delay);
    });
  };
  spawnChild();

  return {
    get pid() {
      return child?.pid;
    },
    ready,
    metrics: () => families,
    stop(): Promise<void> {
      stopping ??= (async () => {
        clearTimeout(restart);
        const c = child;
        if (!c || c.exitCode !== null || c.signalCode !== null) return;
        const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
        const kill = setTimeout(() => {
          opts.log.warn(`worker process did not stop within ${opts.stopGraceMs ?? WORKER_STOP_GRACE_MS} ms: killed`);
          c.kill('SIGKILL');
        }, opts.stopGraceMs ?? WORKER_STOP_GRACE_MS);
        if (c.connected) c.send({ type: 'stop' } satisfies ToChild, (err) => err && c.kill('SIGTERM'));
        else c.kill('SIGTERM');
        await exited;
        clearTimeout(kill);
      })();
      return stopping;
    },
  };
}

/**
 * The child's side (`medallion worker --supervised`): stops (`stop`) when the parent asks or when
 * the parent is gone (the IPC channel closed: it died, even by SIGKILL), from the start on; once
 * its workers run (`ready`), says so and sends its pipeline metrics every `METRICS_EVERY_MS`.
 */
export function superviseFromParent(stop: (why: string) => void): { ready(metrics: Registry): void } {
  if (!process.send) throw new Error('worker --supervised is started by `serve` (it needs the IPC channel serve opens)');
  const send = (m: ToParent): void => {
    if (process.connected) process.send?.(m);
  };
  process.on('disconnect', () => stop('the service that started this worker process is gone'));
  process.on('message', (m: ToChild) => {
    if (m.type === 'stop') stop('asked by the service');
  });
  return {
    ready(metrics: Registry): void {
      send({ type: 'ready' });
      const timer = setInterval(() => {
        forwardedMetrics(metrics, METRIC_PREFIX).then(
          (families) => send({ type: 'metrics', families }),
          () => undefined,
        );
      }, METRICS_EVERY_MS);
      timer.unref();
    },
  };
}
