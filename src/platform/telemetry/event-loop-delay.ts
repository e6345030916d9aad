import { IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { Metric, Registry } from 'prom-client';
import type { MetricFamily } from './worker-metrics';

/** How often the event loop is sampled (`monitorEventLoopDelay`'s resolution): a sample is the wait beyond it. */
const RESOLUTION_MS = 10;
/** Fine below 100 ms, the bound a request must never wait behind the event loop (docs/operations.md). */
export const EVENT_LOOP_DELAY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 2, 5, 10];

/**
 * `<prefix>event_loop_delay_seconds`: how late the event loop ran, as a cumulative Prometheus
 * histogram (a p99 or a max over any window is the difference of two scrapes, whoever else
 * scrapes). `perf_hooks.monitorEventLoopDelay` samples the loop every 10 ms in libuv (no
 * JavaScript per sample) into an HDR histogram that is never reset: its `reset()` also drops the
 * interval in progress, so a stall that began right after a reset went unrecorded. At each scrape
 * the count of samples at or below each bucket's bound (plus the 10 ms period) is read off it by
 * bisecting its percentiles, to its precision (3 significant digits). prom-client's default
 * `nodejs_eventloop_lag_*` gauges reset their histogram at every scrape: two scrapers split it.
 *
 * Returns a function that stops the sampling (the app is stopping).
 */
export function recordEventLoopDelay(register: Registry, prefix: string): () => void {
  const sampler = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  sampler.enable();
  const name = `${prefix}event_loop_delay_seconds`;
  const family = {
    name,
    help: `How late the event loop ran, sampled every ${RESOLUTION_MS} ms (perf_hooks.monitorEventLoopDelay): a request waits this long before its handler runs`,
    type: 'histogram',
    aggregator: 'sum',
    get: async (): Promise<MetricFamily> => snapshot(sampler, name, family.help),
  };
  register.registerMetric(family as unknown as Metric);
  return () => sampler.disable();
}

/** The family as prom-client's own histograms render it (`_bucket` per bound, `_sum`, `_count`). */
function snapshot(sampler: IntervalHistogram, name: string, help: string): MetricFamily {
  const n = sampler.count;
  const values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> = EVENT_LOOP_DELAY_BUCKETS.map((le) => ({
    metricName: `${name}_bucket`,
    labels: { le },
    value: n === 0 ? 0 : countAtMost(sampler, n, (le * 1000 + RESOLUTION_MS) * 1e6),
  }));
  values.push({ metricName: `${name}_bucket`, labels: { le: '+Inf' }, value: n });
  values.push({ metricName: `${name}_sum`, labels: {}, value: n === 0 ? 0 : (n * Math.max(0, sampler.mean / 1e6 - RESOLUTION_MS)) / 1000 });
  values.push({ metricName: `${name}_count`, labels: {}, value: n });
  return { name, help, type: 'histogram', aggregator: 'sum', values } as unknown as MetricFamily;
}

/** Samples at or below `ns`: the largest percentile whose value is at most `ns`, by bisection. */
function countAtMost(sampler: IntervalHistogram, n: number, ns: number): number {
  if (sampler.min > ns) return 0;
  if (sampler.max <= ns) return n;
  let [lo, hi] = [0, 100];
  for (let i = 0; i < 40; i++) {
    const mid = (lo + hi) / 2;
    if (sampler.percentile(mid) <= ns) lo = mid;
    else hi = mid;
  }
  return Math.round((lo / 100) * n);
}
