import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import { recordEventLoopDelay } from './event-loop-delay';

/** The histogram's cumulative bucket counts (every collector runs, as on /metrics). */
async function buckets(register: Registry): Promise<Map<number, number>> {
  const [family] = (await register.getMetricsAsJSON()).filter((m) => m.name === 't_event_loop_delay_seconds');
  const out = new Map<number, number>();
  for (const v of family?.values ?? []) {
    const le = (v.labels as { le?: number | string }).le;
    if ((v as { metricName?: string }).metricName === 't_event_loop_delay_seconds_bucket' && le !== '+Inf') out.set(Number(le), v.value);
  }
  return out;
}

function block(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    /* busy */
  }
}

describe('recordEventLoopDelay', () => {
  it('records how long the loop was held, once, whenever it is scraped', async () => {
    const register = new Registry();
    const stop = recordEventLoopDelay(register, 't_');
    try {
      await sleep(100);
      const before = await buckets(register);
      // Nothing held the loop for 100 ms yet: a quiet loop's samples are below it.
      expect(before.get(0.1)).toBe(before.get(10));
      block(250);
      await sleep(50);
      const after = await buckets(register);
      // The held loop is one late sample, between 0.2 and 0.3 s (less the 10 ms sampling period).
      expect((after.get(0.3) ?? 0) - (after.get(0.2) ?? 0)).toBe(1);
      expect((after.get(10) ?? 0) - (after.get(0.3) ?? 0)).toBe(0);
      // A second scrape counts it once still (the histogram is cumulative).
      const again = await buckets(register);
      expect((again.get(0.3) ?? 0) - (again.get(0.2) ?? 0)).toBe(1);
    } finally {
      stop();
    }
  });
});
