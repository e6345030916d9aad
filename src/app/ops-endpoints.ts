import { createHash, timingSafeEqual } from 'node:crypto';
import http, { IncomingMessage, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { HealthSection, readHealth } from './health';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/**
 * Whether a request may read /metrics: always when no METRICS_TOKEN is set, else only with
 * `Authorization: Bearer <METRICS_TOKEN>` (compared as SHA-256 digests in constant time).
 */
export function metricsAccess(token: string | undefined): (authorization: string | undefined) => boolean {
  if (!token) return () => true;
  const expected = digest(token);
  return (authorization) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    return m !== null && timingSafeEqual(digest(m[1] as string), expected);
  };
}

/** `GET /metrics`: the registry in Prometheus text format, 401 without the token when one is set. */
export function metricsEndpoint(registry: Registry, token: string | undefined): Handler {
  const allowed = metricsAccess(token);
  return (req, res) => {
    if (!allowed(req.headers.authorization)) {
      res.writeHead(401, { 'content-type': 'text/plain; charset=utf-8', 'www-authenticate': 'Bearer realm="metrics"' });
      res.end('/metrics needs "Authorization: Bearer <METRICS_TOKEN>" (Prometheus: authorization.credentials_file in the scrape config)\n');
      return;
    }
    registry.metrics().then(
      (body) => {
        res.writeHead(200, { 'content-type': registry.contentType });
        res.end(body);
      },
      (err: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`metrics failed: ${err instanceof Error ? err.message : String(err)}\n`);
      },
    );
  };
}

/** `GET /health`: every section (health.ts), 200 or 503. */
export function healthEndpoint(sections: readonly HealthSection[]): Handler {
  return (_req, res) => {
    void readHealth(sections).then((answer) => {
      res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
      res.end(JSON.stringify(answer.body));
    });
  };
}

/**
 * /metrics and /health for a process that serves no API (`medallion worker` with METRICS_PORT), on
 * its own small HTTP server: the same registry and the same kinds of sections the API serves.
 */
export async function serveOpsEndpoints(opts: {
  registry: Registry;
  health: readonly HealthSection[];
  metricsToken: string | undefined;
  host: string;
  port: number;
}): Promise<{ url: string; close(): Promise<void> }> {
  const metrics = metricsEndpoint(opts.registry, opts.metricsToken);
  const health = healthEndpoint(opts.health);
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/metrics') return metrics(req, res);
    if (req.method === 'GET' && path === '/health') return health(req, res);
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('only /metrics and /health are served here\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${opts.host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
