import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Driver } from 'neo4j-driver';
import { DataSource } from 'typeorm';
import { TokenRepository } from './access/token.repository';
import { TokenService } from './access/token.service';
import { Services } from './api/context';
import { AppMetrics } from './api/metrics';
import { buildAppSchema } from './api/schema';
import { HttpServerHandle, startHttpServer } from './api/server';
import { EventQueryRepository } from './bronze/event-query.repository';
import { EventRepository } from './bronze/event.repository';
import { EventService } from './bronze/event.service';
import { IngestService } from './bronze/ingest.service';
import { AppConfig } from './common/config';
import { systemClock } from './common/clock';
import { AppLogger } from './common/logger';
import { EventNodeService } from './graph/event-node.service';
import { ProjectionJob, ProjectorLoop } from './graph/projection.job';
import { startEmbeddedPostgres } from './infra/local-services/embedded-postgres';
import { startLocalNeo4j } from './infra/local-services/local-neo4j';
import { applyNeo4jSchema, createNeo4jDriver, Neo4jConnection, pingNeo4j } from './infra/neo4j/neo4j-client';
import { assertPostgresVersion, connectPostgres, migrate, QueryCounter } from './infra/postgres/data-source';
import { PgListener } from './infra/pubsub/pg-listener';
import { AppPubSub, CHANNELS, createAppPubSub, EventsIngestedNotification } from './infra/pubsub/topics';

export interface Stores {
  readonly postgresUrl: string;
  readonly neo4j: Neo4jConnection;
  stop(): Promise<void>;
}

/** Connects to the configured stores, or starts the embedded defaults under DATA_DIR. */
export async function startStores(config: AppConfig, log: AppLogger): Promise<Stores> {
  fs.mkdirSync(config.dataDir, { recursive: true });
  const stops: Array<() => Promise<void>> = [];
  try {
    let postgresUrl = config.databaseUrl;
    if (!postgresUrl) {
      const t0 = Date.now();
      const pg = await startEmbeddedPostgres({
        dataDir: path.join(config.dataDir, 'pg'),
        log: (m) => log.debug({ pg: m }),
        notice: (m) => log.info({ pg: m }),
      });
      stops.push(() => pg.stop());
      postgresUrl = pg.url;
      log.info({ ms: Date.now() - t0, dataDir: pg.dataDir, port: pg.port }, 'embedded PostgreSQL started');
    }
    let neo4j = config.neo4j;
    if (!neo4j) {
      const t0 = Date.now();
      const local = await startLocalNeo4j({
        dataDir: path.join(config.dataDir, 'neo4j'),
        cacheDir: config.cacheDir,
        password: readOrCreateSecret(path.join(config.dataDir, 'neo4j.password')),
        log: (m) => log.info({ neo4j: m }),
      });
      stops.push(() => local.stop());
      neo4j = { uri: local.uri, user: local.user, password: local.password };
      log.info({ ms: Date.now() - t0, uri: local.uri }, 'local Neo4j started');
    }
    const resolved = neo4j;
    return {
      postgresUrl,
      neo4j: resolved,
      async stop() {
        for (const stop of stops.reverse()) await stop().catch((err) => log.error({ err }, 'stopping a store failed'));
      },
    };
  } catch (err) {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    throw err;
  }
}

function readOrCreateSecret(file: string): string {
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const secret = randomBytes(24).toString('base64url');
  fs.writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

export interface AppOptions {
  /** Serve GraphQL over HTTP. */
  api: boolean;
  /** Run background work (the Neo4j projector). */
  worker: boolean;
}

export interface App {
  readonly config: AppConfig;
  readonly ds: DataSource;
  readonly queryCounter: QueryCounter;
  readonly neo4j: Driver;
  readonly services: Services;
  readonly http: HttpServerHandle | undefined;
  readonly projector: ProjectorLoop;
  stop(): Promise<void>;
}

/** Wires the service on already-running stores: migrations, bootstrap admin, API and workers. */
export async function startApp(config: AppConfig, stores: Pick<Stores, 'postgresUrl' | 'neo4j'>, opts: AppOptions, log: AppLogger): Promise<App> {
  const { ds, counter } = await connectPostgres({ url: stores.postgresUrl, log: (m) => log.debug(m) });
  const cleanups: Array<() => Promise<void>> = [() => ds.destroy()];
  try {
    await assertPostgresVersion(ds);
    const applied = await migrate(ds);
    if (applied.length > 0) log.info({ applied }, 'migrations applied');

    const driver = createNeo4jDriver(stores.neo4j);
    cleanups.push(() => driver.close());
    await applyNeo4jSchema(driver);

    const tokenService = new TokenService(new TokenRepository(ds));
    const { generated } = await tokenService.ensureBootstrapAdmin(config.adminToken);
    if (generated) announceAdminToken(config, generated, log);

    const pubSub: AppPubSub = createAppPubSub();
    const listener = new PgListener(stores.postgresUrl, (m) => log.warn(m));
    await listener.start();
    cleanups.push(() => listener.close());

    const metrics = new AppMetrics(ds);
    const eventRepository = new EventRepository(ds);
    const eventQueries = new EventQueryRepository(ds);
    const services: Services = {
      tokens: tokenService,
      ingest: new IngestService(eventRepository, systemClock, config.limits, (o) => metrics.observeIngest(o)),
      events: new EventService(eventRepository, eventQueries, { maxPageSize: config.limits.maxPageSize, maxConversationEvents: 10_000 }),
      eventNodes: new EventNodeService(driver),
      eventRepository,
      eventQueries,
      pubSub,
    };

    const projector = new ProjectorLoop(new ProjectionJob(ds, driver, config.projector.batchSize), config.projector.pollMs, (m) => log.warn(m));
    await listener.on(CHANNELS.EVENT_INGESTED, (payload) => {
      const { namespace, ids } = JSON.parse(payload) as EventsIngestedNotification;
      for (const id of ids) pubSub.publish('EVENT_INGESTED', { id, namespace });
      if (opts.worker) projector.wake();
    });
    if (opts.worker) {
      projector.start();
      cleanups.push(() => projector.stop());
    }

    let httpHandle: HttpServerHandle | undefined;
    if (opts.api) {
      httpHandle = await startHttpServer({
        host: config.host,
        port: config.port,
        schema: await buildAppSchema(),
        services,
        metrics,
        limits: { maxDepth: config.limits.maxQueryDepth, maxComplexity: config.limits.maxQueryComplexity, maxRequestBytes: config.limits.maxRequestBytes },
        health: [
          { name: 'postgres', check: async () => void (await ds.query('SELECT 1')) },
          { name: 'neo4j', check: () => pingNeo4j(driver) },
        ],
        log: { info: (m) => log.info(m), error: (m, err) => log.error({ err }, m) },
      });
      cleanups.push(() => (httpHandle as HttpServerHandle).close());
      log.info({ url: `${httpHandle.url}/graphql`, graphiql: `${httpHandle.url}/graphiql` }, 'serving GraphQL');
    }

    return {
      config,
      ds,
      queryCounter: counter,
      neo4j: driver,
      services,
      http: httpHandle,
      projector,
      async stop() {
        for (const c of cleanups.reverse()) await c().catch((err) => log.error({ err }, 'shutdown step failed'));
      },
    };
  } catch (err) {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    throw err;
  }
}

function announceAdminToken(config: AppConfig, token: string, log: AppLogger): void {
  const file = path.join(config.dataDir, 'admin.token');
  fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
  // Printed once, on stdout, for the person starting the service; the database keeps only a hash.
  process.stdout.write(`\nBootstrap admin token (shown once, also written to ${file}):\n  ${token}\n\n`);
  log.info({ file }, 'generated the bootstrap admin token');
}
