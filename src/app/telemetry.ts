import http from 'node:http';
import { AddressInfo } from 'node:net';
import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { Registry } from 'prom-client';
import { AppConfig } from '../common/config';
import { setTracingEnabled, tracingEnabled } from '../platform/telemetry/tracing';

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
export function startTracing(config: AppConfig, role: string): TracingHandle | undefined {
  const url = config.tracing.tracesUrl;
  if (!url || tracingEnabled()) return undefined;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.tracing.serviceName, 'medallion.process': role, 'process.pid': process.pid }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }), { scheduledDelayMillis: 500 })],
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

/**
 * /metrics for a process that serves no API (`medallion worker` with METRICS_PORT): the same
 * registry the API would serve, on its own small HTTP server.
 */
export async function serveMetrics(registry: Registry, host: string, port: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && (req.url === '/metrics' || req.url?.startsWith('/metrics?'))) {
      registry.metrics().then(
        (body) => {
          res.writeHead(200, { 'content-type': registry.contentType });
          res.end(body);
        },
        (err: unknown) => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(`metrics failed: ${err instanceof Error ? err.message : String(err)}`);
        },
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('only /metrics is served here');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host}:${address.port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
