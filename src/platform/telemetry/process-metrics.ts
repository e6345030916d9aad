import perfHooks from 'node:perf_hooks';
import { collectDefaultMetrics, Registry } from 'prom-client';

type PerfHooks = { monitorEventLoopDelay: typeof perfHooks.monitorEventLoopDelay; PerformanceObserver: typeof perfHooks.PerformanceObserver };

/**
 * prom-client's default process metrics (CPU, memory, handles, GC pauses, event-loop delay) in
 * `register`, and a function that stops what they started.
 *
 * prom-client starts an event-loop-delay histogram and a GC PerformanceObserver and offers no way to
 * stop either (prometheus/client_js#494 and #500, open): every app a process started and stopped
 * kept both running, and through them everything the app's code could reach. The test process,
 * which starts and stops an app in every suite, grew by ~50 MB a suite and ran out of its 4 GB heap.
 * The two are caught as collectDefaultMetrics creates them: perf_hooks' two constructors are wrapped
 * for the length of that synchronous call only, so no other code sees the wrappers.
 */
export function collectProcessMetrics(register: Registry, prefix: string): () => void {
  const stops: Array<() => void> = [];
  const hooks = perfHooks as unknown as PerfHooks;
  const { monitorEventLoopDelay, PerformanceObserver } = hooks;
  hooks.monitorEventLoopDelay = (options) => {
    const histogram = monitorEventLoopDelay(options);
    stops.push(() => histogram.disable());
    return histogram;
  };
  hooks.PerformanceObserver = class StoppablePerformanceObserver extends PerformanceObserver {
    constructor(callback: ConstructorParameters<typeof PerformanceObserver>[0]) {
      super(callback);
      stops.push(() => this.disconnect());
    }
  };
  try {
    collectDefaultMetrics({ register, prefix });
  } finally {
    hooks.monitorEventLoopDelay = monitorEventLoopDelay;
    hooks.PerformanceObserver = PerformanceObserver;
  }
  return () => {
    for (const stop of stops.splice(0)) stop();
  };
}
