import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { IngestOutcome } from '../bronze/event.types';
import { DeriveResult } from '../silver/derive.job';
import { BoundedLabel, telemetryRegistry } from '../platform/telemetry/metrics';
import { collectProcessMetrics } from '../platform/telemetry/process-metrics';
import { recordEventLoopDelay } from '../platform/telemetry/event-loop-delay';
import { MergedRegistry } from '../platform/telemetry/worker-metrics';

/** Every metric name of the service starts with it. */
export const METRIC_PREFIX = 'medallion_';

/** Distinct GraphQL operation names labelled before the rest count as `other`. */
export const MAX_OPERATION_LABELS = 100;

/**
 * Prometheus metrics of one process; `/metrics` renders `registry`: these and the pipeline's
 * (`platform/telemetry/metrics.ts`: models, jobs, search channels, projection, MCP tools).
 */
export class AppMetrics {
  private readonly own = new Registry();
  /** What /metrics renders; with the worker process `serve` starts, its pipeline counters too (`mergeFrom`). */
  readonly registry: MergedRegistry;
  /** GraphQL operation names as labels: bounded (`anonymous`, `other` past MAX_OPERATION_LABELS). */
  readonly operationNames = new BoundedLabel(MAX_OPERATION_LABELS);
  readonly httpRequests = new Counter({
    name: 'medallion_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['route', 'status'],
    registers: [this.own],
  });
  readonly graphqlOperations = new Counter({
    name: 'medallion_graphql_operations_total',
    help: 'GraphQL operations by type and outcome',
    labelNames: ['type', 'outcome'],
    registers: [this.own],
  });
  readonly graphqlSeconds = new Histogram({
    name: 'medallion_graphql_operation_seconds',
    help: 'GraphQL operation latency by type and operation name (bounded: anonymous, other)',
    labelNames: ['type', 'operation'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.own],
  });
  readonly exploreQueries = new Counter({
    name: 'medallion_graph_explore_queries_total',
    help: 'Generated graph-exploration root fields run against Neo4j, by field',
    labelNames: ['field'],
    registers: [this.own],
  });
  readonly ingested = new Counter({
    name: 'medallion_ingest_events_total',
    help: 'Submitted events by result',
    labelNames: ['status'],
    registers: [this.own],
  });
  // Derivation, counted by the process whose worker derives (a `worker` process serves no /metrics;
  // medallion_derive_dead_letters_open below reads the database and is right in every process).
  readonly deriveBatches = new Counter({
    name: 'medallion_derive_batches_total',
    help: 'Derivation micro-batches taken (a fallback counts once)',
    registers: [this.own],
  });
  readonly deriveFallbacks = new Counter({
    name: 'medallion_derive_batch_fallbacks_total',
    help: 'Micro-batches that failed as a whole and were retried event by event',
    registers: [this.own],
  });
  readonly deriveEvents = new Counter({ name: 'medallion_derive_events_total', help: 'Events whose derivation committed', registers: [this.own] });
  readonly deriveFacts = new Counter({ name: 'medallion_derive_facts_total', help: 'Facts stored by derivation (SKIPs excluded)', registers: [this.own] });
  readonly deriveDeadLetters = new Counter({
    name: 'medallion_derive_dead_letters_total',
    help: 'Events written to silver.dead_letters (each failed attempt)',
    registers: [this.own],
  });
  readonly deriveFailures = new Counter({
    name: 'medallion_derive_failures_total',
    help: 'Derive steps that failed before writing anything (e.g. a lease taken over)',
    registers: [this.own],
  });

  /** Stops the process metrics' event-loop histograms and GC observer (`close`). */
  private readonly stopProcessMetrics: () => void;

  constructor(ds: DataSource) {
    const stopDefaults = collectProcessMetrics(this.own, METRIC_PREFIX);
    const stopDelay = recordEventLoopDelay(this.own, METRIC_PREFIX);
    this.stopProcessMetrics = () => {
      stopDefaults();
      stopDelay();
    };
    new Gauge({
      name: 'medallion_outbox_pending',
      help: 'Outbox rows not yet projected to Neo4j',
      registers: [this.own],
      async collect() {
        const [row] = (await ds.query(`SELECT count(*)::int AS n FROM ops.outbox WHERE processed_at IS NULL`)) as Array<{ n: number }>;
        this.set(row?.n ?? 0);
      },
    });
    // Projector lag. Its own query (it was set by the pending gauge's, but prom-client collects a
    // scrape's metrics concurrently, so it showed the previous scrape's age).
    new Gauge({
      name: 'medallion_outbox_oldest_pending_seconds',
      help: 'Age of the oldest unprojected outbox row',
      registers: [this.own],
      async collect() {
        const [row] = (await ds.query(
          `SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)::float AS age FROM ops.outbox WHERE processed_at IS NULL`,
        )) as Array<{ age: number }>;
        this.set(row?.age ?? 0);
      },
    });
    new Gauge({
      name: 'medallion_derivation_pending',
      help: 'Events waiting for Silver derivation',
      registers: [this.own],
      async collect() {
        const [row] = (await ds.query(`SELECT count(*)::int AS n FROM ops.derivation_queue WHERE status = 'pending'`)) as Array<{ n: number }>;
        this.set(row?.n ?? 0);
      },
    });
    // Its own query: prom-client collects every metric of a scrape concurrently.
    new Gauge({
      name: 'medallion_derivation_lag_seconds',
      help: 'Derivation lag: age of the oldest event waiting for derivation (0 when none waits)',
      registers: [this.own],
      async collect() {
        const [row] = (await ds.query(
          `SELECT coalesce(extract(epoch FROM now() - min(enqueued_at)), 0)::float AS age FROM ops.derivation_queue WHERE status = 'pending'`,
        )) as Array<{ age: number }>;
        this.set(row?.age ?? 0);
      },
    });
    new Gauge({
      name: 'medallion_derive_dead_letters_open',
      help: 'Events parked in silver.dead_letters, not yet resolved (all workers)',
      registers: [this.own],
      async collect() {
        const [row] = (await ds.query(`SELECT count(*)::int AS n FROM silver.dead_letters WHERE resolved_at IS NULL`)) as Array<{ n: number }>;
        this.set(row?.n ?? 0);
      },
    });
    this.registry = new MergedRegistry([this.own, telemetryRegistry]);
  }

  /** Stops what the process metrics started (the app is shutting down); /metrics still renders. */
  close(): void {
    this.stopProcessMetrics();
  }

  /** Latency of one GraphQL operation; `name` is the client's operation name (bounded). */
  observeGraphql(type: string, name: string | null | undefined, failed: boolean, seconds: number): void {
    this.graphqlOperations.inc({ type, outcome: failed ? 'error' : 'ok' });
    this.graphqlSeconds.observe({ type, operation: this.operationNames.of(name) }, seconds);
  }

  /** Counts one derive step's result (DeriveJob.runNamespace). */
  observeDerive(r: DeriveResult): void {
    if (r.kind === 'failed') this.deriveFailures.inc();
    if (r.kind !== 'success') return;
    this.deriveBatches.inc();
    if (r.fallback) this.deriveFallbacks.inc();
    this.deriveEvents.inc(r.events);
    this.deriveFacts.inc(r.facts);
    this.deriveDeadLetters.inc(r.deadLettered);
  }

  observeIngest(outcomes: readonly IngestOutcome[]): void {
    for (const o of outcomes) this.ingested.inc({ status: o.status });
  }
}
