import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { IngestOutcome } from '../bronze/event.types';
import { DeriveResult } from '../silver/derive.job';
import { LATENCY_BUCKETS, telemetryRegistry } from '../platform/telemetry/metrics';
import { collectProcessMetrics } from '../platform/telemetry/process-metrics';
import { recordEventLoopDelay } from '../platform/telemetry/event-loop-delay';
import { MergedRegistry } from '../platform/telemetry/worker-metrics';
import { BacklogMeasure, readBacklogMeasure } from '../platform/backlog';
import { Sql } from '../platform/postgres/sql';
import { registerChainVerifyGauges } from '../gold/portability/chain-verify.repository';

/** Every metric name of the service starts with it. */
export const METRIC_PREFIX = 'medallion_';

/** What a process runs, the `process` label of every series it exports: `api`, `worker` or `api+worker`. */
export type ProcessRole = 'api' | 'worker' | 'api+worker' | 'cli';

/**
 * Prometheus metrics of one process; `/metrics` renders `registry`: these and the pipeline's
 * (`platform/telemetry/metrics.ts`: models, jobs, search channels, projection, MCP tools).
 */
export class AppMetrics {
  private readonly own = new Registry();
  /** What /metrics renders; with the worker process `serve` starts, its pipeline counters too (`mergeFrom`). */
  readonly registry: MergedRegistry;
  readonly httpRequests = new Counter({
    name: 'medallion_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['route', 'status'],
    registers: [this.own],
  });
  readonly graphqlOperations = new Counter({
    name: 'medallion_graphql_operations_total',
    help: 'GraphQL operations by type and outcome (ok, error: the request was refused, internal: a fault of the service)',
    labelNames: ['type', 'outcome'],
    registers: [this.own],
  });
  readonly graphqlSeconds = new Histogram({
    name: 'medallion_graphql_operation_seconds',
    help: 'GraphQL operation latency by type and operation (a client package operation, a root field, or other)',
    labelNames: ['type', 'operation'],
    buckets: LATENCY_BUCKETS,
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
  // Derivation, counted by the process whose worker derives (a `worker` serves them at METRICS_PORT;
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

  constructor(ds: DataSource, role: ProcessRole) {
    const stopDefaults = collectProcessMetrics(this.own, METRIC_PREFIX);
    const stopDelay = recordEventLoopDelay(this.own, METRIC_PREFIX);
    this.stopProcessMetrics = () => {
      stopDefaults();
      stopDelay();
    };
    const gauge = (name: string, help: string, measure: BacklogMeasure) =>
      new Gauge({
        name,
        help,
        registers: [this.own],
        async collect() {
          this.set(await readBacklogMeasure(ds, measure));
        },
      });
    gauge('medallion_outbox_pending', 'Outbox rows not yet projected to Neo4j', 'outboxPending');
    gauge('medallion_outbox_oldest_pending_seconds', 'Age of the oldest unprojected outbox row', 'outboxLagSeconds');
    gauge('medallion_derivation_pending', 'Events waiting for Silver derivation', 'derivationPending');
    gauge('medallion_derivation_lag_seconds', 'Derivation lag: age of the oldest event waiting for derivation (0 when none waits)', 'derivationLagSeconds');
    gauge('medallion_derive_dead_letters_open', 'Events parked in silver.dead_letters, not yet resolved (all workers)', 'deadLettersOpen');
    // The scheduled hash-chain verify's state (gold/portability/chain-verify.repository.ts): read from the database, like the gauges above.
    registerChainVerifyGauges(Sql.of(ds), this.own);
    this.registry = new MergedRegistry([this.own, telemetryRegistry]);
    // An API and a worker scraped side by side: their process metrics (CPU, memory, event loop)
    // are told apart by this label, and the gauges that read the database (the same in every
    // process) are read with max(), not sum() (docs/operations.md "Metrics").
    this.registry.setDefaultLabels({ process: role });
  }

  /** Stops what the process metrics started (the app is shutting down); /metrics still renders. */
  close(): void {
    this.stopProcessMetrics();
  }

  /** Latency of one GraphQL operation; `operation` is its label from the fixed set (`OperationLabels`). */
  observeGraphql(type: string, operation: string, outcome: 'ok' | 'error' | 'internal', seconds: number): void {
    this.graphqlOperations.inc({ type, outcome });
    this.graphqlSeconds.observe({ type, operation }, seconds);
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
