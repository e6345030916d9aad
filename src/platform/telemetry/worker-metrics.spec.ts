import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { forwardedMetrics, MergedRegistry } from './worker-metrics';

/** A process's metrics as AppMetrics has them: pipeline counters, a database gauge, a process metric. */
function processMetrics(): { registry: Registry; calls: Counter; derived: Counter; latency: Histogram; pending: Gauge; cpu: Counter } {
  const registry = new Registry();
  return {
    registry,
    calls: new Counter({ name: 't_model_calls_total', help: 'h', labelNames: ['op'], registers: [registry] }),
    derived: new Counter({ name: 't_derive_events_total', help: 'h', registers: [registry] }),
    latency: new Histogram({ name: 't_model_seconds', help: 'h', buckets: [0.1, 1], registers: [registry] }),
    pending: new Gauge({ name: 't_outbox_pending', help: 'h', registers: [registry] }),
    cpu: new Counter({ name: 't_process_cpu_seconds_total', help: 'h', registers: [registry] }),
  };
}

describe('a worker process hands its pipeline metrics to the service that started it', () => {
  it('forwards counters and histograms, not gauges or process metrics, and the service renders both processes summed', async () => {
    const api = processMetrics();
    const worker = processMetrics();
    api.calls.inc({ op: 'embed_query' }, 3);
    api.pending.set(7);
    api.cpu.inc(2);
    worker.calls.inc({ op: 'embed_query' }, 1);
    worker.calls.inc({ op: 'extract' }, 5);
    worker.derived.inc(40);
    worker.latency.observe(0.5);
    worker.pending.set(7);
    worker.cpu.inc(9);

    const sent = await forwardedMetrics(worker.registry, 't_');
    expect(sent.map((f) => f.name).sort()).toEqual(['t_derive_events_total', 't_model_calls_total', 't_model_seconds']);

    const merged = new MergedRegistry([api.registry]);
    merged.mergeFrom(() => sent);
    const text = await merged.metrics();
    expect(text).toContain('t_model_calls_total{op="embed_query"} 4');
    expect(text).toContain('t_model_calls_total{op="extract"} 5');
    expect(text).toContain('t_derive_events_total 40');
    expect(text).toContain('t_model_seconds_bucket{le="1"} 1');
    expect(text).toContain('t_model_seconds_count 1');
    // The service's own: its gauge read once, its process metrics alone.
    expect(text).toContain('t_outbox_pending 7');
    expect(text).toContain('t_process_cpu_seconds_total 2');
    // Each family once (a valid exposition).
    expect(text.match(/# TYPE t_model_calls_total /g)).toHaveLength(1);
  });

  it('renders its own metrics alone while the worker has sent none', async () => {
    const api = processMetrics();
    api.derived.inc(2);
    const merged = new MergedRegistry([api.registry]);
    expect(await merged.metrics()).toContain('t_derive_events_total 2');
  });
});
