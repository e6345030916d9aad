import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-node';
import { AppConfig } from '../common/config';
import { StructuredLog } from '../common/logger';
import { pipelineMetrics } from '../platform/telemetry/metrics';
import { setTracingEnabled, tracingEnabled } from '../platform/telemetry/tracing';

type ExportResult = Parameters<Parameters<SpanExporter['export']>[1]>[0];

/** How often a collector that keeps failing is logged again (each failure is counted). */
export const EXPORT_FAILURE_LOG_EVERY_MS = 60_000;

/**
 * The OTLP exporter, with what it drops made visible: a failed export (the collector refused,
 * timed out or could not be reached) counts `medallion_trace_export_failures_total` and the spans
 * it carried, and is logged at warn: the first failure at once, then at most once a minute with
 * the number of failures since, and once more when exports succeed again. The exporter's own
 * failures were silent (the SDK's diagnostic logger is off by default).
 */
export class CountingSpanExporter implements SpanExporter {
  private failuresSinceLog = 0;
  private lastLogAt = -Infinity;
  private failing = false;

  constructor(
    private readonly inner: SpanExporter,
    private readonly url: string,
    private readonly log: StructuredLog,
    private readonly now: () => number = Date.now,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code === 0) this.succeeded();
      else this.failed(spans.length, result.error);
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }

  private failed(spans: number, error: Error | undefined): void {
    pipelineMetrics.traceExportFailures.inc();
    pipelineMetrics.traceSpansDropped.inc(spans);
    this.failing = true;
    this.failuresSinceLog++;
    if (this.now() - this.lastLogAt < EXPORT_FAILURE_LOG_EVERY_MS) return;
    this.log.warn(
      { url: this.url, failures: this.failuresSinceLog, spans, error: error ? `${error.name}: ${error.message}`.slice(0, 300) : 'unknown' },
      'trace export failed: spans dropped (medallion_trace_export_failures_total)',
    );
    this.failuresSinceLog = 0;
    this.lastLogAt = this.now();
  }

  private succeeded(): void {
    if (!this.failing) return;
    this.failing = false;
    this.log.info({ url: this.url, failuresSinceLog: this.failuresSinceLog }, 'trace export recovered');
    this.failuresSinceLog = 0;
    this.lastLogAt = -Infinity;
  }
}

export interface TracingHandle {
  /** Sends the spans still buffered and switches tracing off (the process, or this app, stops). */
  shutdown(): Promise<void>;
}

/**
 * Switches OpenTelemetry tracing on for this process when an OTLP endpoint is configured
 * (docs/operations.md "Tracing"): a NodeTracerProvider (AsyncLocalStorage context, W3C
 * traceparent propagation) batching spans to the OTLP/HTTP (JSON) exporter. Nothing is registered
 * when it is not configured, or when another app of this process already traces (tests).
 */
export function startTracing(config: AppConfig, role: string, log: StructuredLog): TracingHandle | undefined {
  const url = config.tracing.tracesUrl;
  if (!url || tracingEnabled()) return undefined;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.tracing.serviceName, 'medallion.process': role, 'process.pid': process.pid }),
    spanProcessors: [new BatchSpanProcessor(new CountingSpanExporter(new OTLPTraceExporter({ url }), url, log), { scheduledDelayMillis: 500 })],
  });
  provider.register();
  setTracingEnabled(true);
  return {
    async shutdown() {
      setTracingEnabled(false);
      await provider.shutdown().catch(() => undefined);
      // So a later app of this process (tests) can register its own provider.
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
