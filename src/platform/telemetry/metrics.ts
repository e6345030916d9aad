import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Prometheus metrics observed below the API floor (models, jobs, search, projection, MCP tools):
 * one registry per process, like prom-client's own default, that `api/metrics.ts` serves with the
 * API's per-app metrics at /metrics (and `app/` at METRICS_PORT in a `worker`). Every label set is
 * bounded: kinds, channels, tools and models are fixed by the code or the configuration, never
 * by a caller (GraphQL operations are labelled by `api/operation-label.ts`). docs/operations.md
 * "Metrics" lists them all; ops/grafana/medallion.json is built on exactly these names.
 */
export const telemetryRegistry = new Registry();

/** Request and call latency buckets, to 60 s: a 5.4 s request is counted above 5 s, not at the last bucket's edge. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export const pipelineMetrics = {
  /** Model calls by model name and operation (extract, judge, embed, embed_query, judge_entities). */
  modelSeconds: new Histogram({
    name: 'medallion_model_call_seconds',
    help: 'Model call latency by model and operation (extract, judge, embed, embed_query, judge_entities)',
    labelNames: ['model', 'operation'],
    buckets: LATENCY_BUCKETS,
    registers: [telemetryRegistry],
  }),
  modelErrors: new Counter({
    name: 'medallion_model_call_errors_total',
    help: 'Model calls that threw, by model and operation',
    labelNames: ['model', 'operation'],
    registers: [telemetryRegistry],
  }),
  /** Runs of ops.jobs by kind (rebuilds, promotion, re-embedding, and any kind registered later) and outcome. */
  jobRuns: new Counter({
    name: 'medallion_job_runs_total',
    help: 'Job runs by kind and outcome (success, failed, skipped, waiting); promotion is kind "promote"',
    labelNames: ['kind', 'outcome'],
    registers: [telemetryRegistry],
  }),
  jobSeconds: new Histogram({
    name: 'medallion_job_run_seconds',
    help: 'Job run duration by kind',
    labelNames: ['kind'],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800],
    registers: [telemetryRegistry],
  }),
  /** Each search channel's statement time (vector channels from the query's embedding on). */
  searchChannelSeconds: new Histogram({
    name: 'medallion_search_channel_seconds',
    help: 'Search latency per channel (embed, vector, keyword, graph, graph_names, event_vector, event_keyword)',
    labelNames: ['channel'],
    buckets: LATENCY_BUCKETS,
    registers: [telemetryRegistry],
  }),
  searchSeconds: new Histogram({
    name: 'medallion_search_seconds',
    help: 'Whole searchMemory latency inside the service (channels, fusion, Postgres hydration)',
    buckets: LATENCY_BUCKETS,
    registers: [telemetryRegistry],
  }),
  /** Time from an outbox row's write to its projection into Neo4j, observed per row at commit. */
  projectionLagSeconds: new Histogram({
    name: 'medallion_projection_lag_seconds',
    help: 'Seconds from an outbox row being written to its projection into Neo4j committing',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [telemetryRegistry],
  }),
  /** Seconds background stages paused for searches being served (platform/foreground.ts), by stage. */
  searchReplans: new Counter({
    name: 'medallion_search_replans_total',
    help: 'Times the API planned the search statements again in the background because the graph had grown or shrunk (SEARCH_REPLAN_SECONDS)',
    registers: [telemetryRegistry],
  }),
  /** Vectors the API holds for the exact vector channels (graph/held-vectors.ts), and those it read from Neo4j. */
  searchHeldVectorBytes: new Gauge({
    name: 'medallion_search_held_vector_bytes',
    help: "Bytes of small namespaces' vectors held in the API's process for the exact vector channels (SEARCH_HELD_VECTORS_MB)",
    registers: [telemetryRegistry],
  }),
  searchHeldVectorReads: new Counter({
    name: 'medallion_search_held_vector_reads_total',
    help: 'Vectors the API read from Neo4j because a node was new to it or its text had changed (an overlay, a redaction)',
    registers: [telemetryRegistry],
  }),
  backgroundYieldSeconds: new Counter({
    name: 'medallion_background_yield_seconds_total',
    help: 'Seconds background stages (derivation, projection, jobs) paused after a step because searches were being served',
    labelNames: ['stage'],
    registers: [telemetryRegistry],
  }),
  projectionRows: new Counter({
    name: 'medallion_projection_rows_total',
    help: 'Outbox rows drained by the Silver projector, by outcome (projected, failed)',
    labelNames: ['outcome'],
    registers: [telemetryRegistry],
  }),
  /** Span batches the OTLP exporter could not deliver (the collector refused or was unreachable); their spans are lost. */
  traceExportFailures: new Counter({
    name: 'medallion_trace_export_failures_total',
    help: 'Batches of spans the OTLP exporter failed to deliver (their spans are dropped)',
    registers: [telemetryRegistry],
  }),
  traceSpansDropped: new Counter({
    name: 'medallion_trace_spans_dropped_total',
    help: 'Spans lost in failed OTLP exports',
    registers: [telemetryRegistry],
  }),
  mcpSeconds: new Histogram({
    name: 'medallion_mcp_tool_seconds',
    help: 'MCP tool call latency by tool and outcome (ok; error: refused; internal: a fault of the service)',
    labelNames: ['tool', 'outcome'],
    buckets: LATENCY_BUCKETS,
    registers: [telemetryRegistry],
  }),
} as const;

/** Seconds since `started` (process.hrtime.bigint()). */
export function secondsSince(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e9;
}
