import { AggregatorRegistry, Metric, MetricObjectWithValues, MetricValue, Registry } from 'prom-client';

/** A metric family as a registry renders it to JSON (`getMetricsAsJSON`), e.g. sent by a child process. */
export type MetricFamily = MetricObjectWithValues<MetricValue<string>>;

/** What a registry holds at run time (prom-client's typings give `getMetricsAsArray` a narrower type). */
interface Registered {
  readonly name: string;
  readonly type: string;
  get(): Promise<MetricFamily>;
}

const registered = (registry: Registry): Registered[] => registry.getMetricsAsArray() as unknown as Registered[];

/**
 * Families a worker process hands the process that serves /metrics: what its pipeline counted
 * (derivation, models, jobs, projection: counters and histograms). Not its gauges (the
 * queue and lag gauges read the database, which the serving process does itself) nor its process
 * metrics (CPU, memory, GC, event loop: those of /metrics are the serving process's own).
 */
export async function forwardedMetrics(registry: Registry, prefix: string): Promise<MetricFamily[]> {
  const own = [`${prefix}process_`, `${prefix}nodejs_`, `${prefix}event_loop_`];
  const families = registered(registry).filter((m) => (m.type === 'counter' || m.type === 'histogram') && !own.some((p) => m.name.startsWith(p)));
  return Promise.all(families.map((m) => m.get()));
}

/**
 * A registry that renders its own metrics plus the latest families another process handed it
 * (`forwardedMetrics` of the worker process `serve` starts), summed by name and label set: the
 * worker's derivation counters read as if the serving process had counted them itself. A family
 * the worker counts and this process does not (medallion_derive_*) is rendered from the worker's
 * values alone.
 */
export class MergedRegistry extends Registry {
  private others: () => readonly MetricFamily[] = () => [];

  constructor(registries: readonly Registry[]) {
    super();
    for (const r of registries) for (const m of r.getMetricsAsArray()) this.registerMetric(m as unknown as Metric);
  }

  /** Where the other process's latest families come from (read at each render). */
  mergeFrom(source: () => readonly MetricFamily[]): void {
    this.others = source;
  }

  override getMetricsAsArray(): ReturnType<Registry['getMetricsAsArray']> {
    const others = new Map(this.others().map((f) => [f.name, f]));
    if (others.size === 0) return super.getMetricsAsArray();
    const merged = (super.getMetricsAsArray() as unknown as Registered[]).map((m): Pick<Registered, 'get'> => {
      const theirs = others.get(m.name);
      if (!theirs) return m;
      others.delete(m.name);
      return { get: async () => sum(await m.get(), theirs) };
    });
    for (const theirs of others.values()) merged.push({ get: async () => theirs });
    // A registry renders a family through its `get` alone.
    return merged as unknown as ReturnType<Registry['getMetricsAsArray']>;
  }
}

/** Two processes' values of one family, summed by name and label set (prom-client's cluster aggregation). */
async function sum(mine: MetricFamily, theirs: MetricFamily): Promise<MetricFamily> {
  const [family] = await AggregatorRegistry.aggregate([[mine], [theirs]]).getMetricsAsJSON();
  return family ?? mine;
}
