import perfHooks from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Registry } from 'prom-client';
import { collectProcessMetrics } from './process-metrics';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** One sample's value out of a scrape (every collector runs, as on /metrics). */
async function scraped(register: Registry, metric: string, sample = metric): Promise<number> {
  const all = await register.getMetricsAsJSON();
  const values = all.find((m) => m.name === metric)?.values ?? [];
  return values.filter((v) => ((v as { metricName?: string }).metricName ?? metric) === sample).reduce((n, v) => n + v.value, 0);
}

/** Holds the event loop for `ms`: the event-loop-delay histogram, while it runs, records it. */
function block(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    /* busy */
  }
}

describe('collectProcessMetrics', () => {
  it("renders prom-client's default metrics and leaves perf_hooks as it found it", async () => {
    const { monitorEventLoopDelay, PerformanceObserver } = perfHooks;
    const register = new Registry();
    const stop = collectProcessMetrics(register, 't_');
    try {
      expect(perfHooks.monitorEventLoopDelay).toBe(monitorEventLoopDelay);
      expect(perfHooks.PerformanceObserver).toBe(PerformanceObserver);
      const text = await register.metrics();
      for (const name of [
        't_process_cpu_seconds_total',
        't_nodejs_heap_size_used_bytes',
        't_nodejs_eventloop_lag_max_seconds',
        't_nodejs_gc_duration_seconds',
      ]) {
        expect(text).toContain(name);
      }
    } finally {
      stop();
    }
  });

  it('stops the GC observer and the event-loop histogram it started (prom-client cannot)', async () => {
    const register = new Registry();
    const stop = collectProcessMetrics(register, 't_');
    const gcs = (): Promise<number> => scraped(register, 't_nodejs_gc_duration_seconds', 't_nodejs_gc_duration_seconds_count');
    const maxLag = (): Promise<number> => scraped(register, 't_nodejs_eventloop_lag_max_seconds');

    // Running: a collection is observed, a held event loop is measured.
    const before = await gcs();
    gc();
    await sleep(50);
    expect(await gcs()).toBeGreaterThan(before);
    await maxLag();
    block(40);
    await sleep(30);
    expect(await maxLag()).toBeGreaterThan(0);

    stop();
    await maxLag(); // the samples taken before the stop
    const stopped = await gcs();
    gc();
    block(40);
    await sleep(50);
    expect(await gcs()).toBe(stopped);
    expect(await maxLag()).toBe(0);
  });
});
