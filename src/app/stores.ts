import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { AppConfig } from '../common/config';
import { AppLogger } from '../common/logger';
import { runShutdown, ShutdownStep } from '../common/shutdown';
import { EmbeddedPostgresHandle, startEmbeddedPostgres } from '../platform/local-services/embedded-postgres';
import { EmbeddedNeo4jAddress, EmbeddedPostgresAddress, ExternalStore, previousPorts, reusablePort } from '../platform/local-services/instance-state';
import { LocalNeo4j, startLocalNeo4j } from '../platform/local-services/local-neo4j';
import type { Neo4jConnection } from '../platform/neo4j/neo4j-client';

export interface Stores {
  /** The owner's connection: migrations and grants, at start only. */
  readonly postgresUrl: string;
  /** The runtime role's connection (owns nothing in Bronze); unset: the service runs as the owner. */
  readonly postgresRuntimeUrl?: string;
  readonly neo4j: Neo4jConnection;
  /** What a CLI command of the same DATA_DIR needs to find these stores (written to DATA_DIR/instance.json). */
  readonly addresses: StoreAddresses;
  stop(): Promise<void>;
}

export interface StoreAddresses {
  readonly postgres: EmbeddedPostgresAddress | ExternalStore;
  readonly neo4j?: EmbeddedNeo4jAddress | ExternalStore;
}

export interface StoreNeeds {
  /** Start (or connect to) Neo4j too; default true. `export` and `verify` need PostgreSQL alone. */
  readonly neo4j?: boolean;
  /**
   * Runs once the local Neo4j's JVM is spawned (at once when none is started): a start loads the
   * service's modules there, while the DBMS boots, rather than before it.
   */
  readonly whileStarting?: () => void;
}

/**
 * Connects to the configured stores, or starts the embedded defaults under DATA_DIR: each on the
 * port it had at its last start when that port is free (DATA_DIR/instance.json), both at once.
 */
export async function startStores(config: AppConfig, log: AppLogger, needs?: StoreNeeds & { neo4j?: true }): Promise<Stores>;
export async function startStores(config: AppConfig, log: AppLogger, needs: StoreNeeds): Promise<Omit<Stores, 'neo4j'> & { neo4j?: Neo4jConnection }>;
export async function startStores(config: AppConfig, log: AppLogger, needs: StoreNeeds = {}): Promise<Omit<Stores, 'neo4j'> & { neo4j?: Neo4jConnection }> {
  fs.mkdirSync(config.dataDir, { recursive: true });
  const ports = previousPorts(config.dataDir);
  const wantNeo4j = needs.neo4j ?? true;
  const pg = config.databaseUrl ? undefined : startPostgres(config, log, ports.postgres);
  const neo4j = !wantNeo4j || config.neo4j ? undefined : startNeo4j(config, log, ports.neo4j, needs.whileStarting);
  if (!neo4j) needs.whileStarting?.();
  // Both at once: a failure of one still stops the other before the error is thrown.
  const [pgResult, neo4jResult] = await Promise.allSettled([pg ?? Promise.resolve(undefined), neo4j ?? Promise.resolve(undefined)]);
  const stops: ShutdownStep[] = [];
  if (pgResult.status === 'fulfilled' && pgResult.value)
    stops.push({ what: 'embedded PostgreSQL', run: () => (pgResult.value as EmbeddedPostgresHandle).stop() });
  if (neo4jResult.status === 'fulfilled' && neo4jResult.value) stops.push({ what: 'local Neo4j', run: () => (neo4jResult.value as LocalNeo4j).stop() });
  const failed = [pgResult, neo4jResult].find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await Promise.all(stops.map((s) => s.run().catch(() => undefined)));
    throw failed.reason;
  }
  const embeddedPg = pgResult.status === 'fulfilled' ? pgResult.value : undefined;
  const local = neo4jResult.status === 'fulfilled' ? neo4jResult.value : undefined;
  const neo4jConnection = local ? { uri: local.uri, user: local.user, password: local.password } : wantNeo4j ? config.neo4j : undefined;
  return {
    postgresUrl: embeddedPg?.url ?? (config.databaseUrl as string),
    postgresRuntimeUrl: embeddedPg?.runtimeUrl ?? config.databaseRuntimeUrl,
    neo4j: neo4jConnection,
    addresses: {
      postgres: embeddedPg ? embeddedPg.address : { embedded: false },
      neo4j: local
        ? { embedded: true, uri: local.uri, user: local.user, passwordFile: neo4jPasswordFile(config) }
        : wantNeo4j
          ? { embedded: false }
          : undefined,
    },
    // Both at once: each stops on its own (PostgreSQL's fast shutdown, the DBMS's checkpoint),
    // nothing of the service uses them any more, and an idle stop took their sum.
    stop: () => runShutdown([stops], log),
  };
}

async function startPostgres(config: AppConfig, log: AppLogger, previousPort: number | undefined): Promise<EmbeddedPostgresHandle> {
  const t0 = Date.now();
  const pg = await startEmbeddedPostgres({
    dataDir: path.join(config.dataDir, 'pg'),
    port: await reusablePort(previousPort),
    log: (m) => log.debug({ pg: m }),
    notice: (m) => log.info({ pg: m }),
  });
  log.info({ ms: Date.now() - t0, dataDir: pg.dataDir, port: pg.port }, 'embedded PostgreSQL started');
  return pg;
}

async function startNeo4j(config: AppConfig, log: AppLogger, previousPort: number | undefined, onSpawn?: () => void): Promise<LocalNeo4j> {
  const t0 = Date.now();
  const local = await startLocalNeo4j({
    dataDir: path.join(config.dataDir, 'neo4j'),
    cacheDir: config.cacheDir,
    javaHome: config.javaHome,
    password: readOrCreateSecret(neo4jPasswordFile(config)),
    pageCacheMb: config.neo4jPageCacheMb,
    port: await reusablePort(previousPort),
    log: (m) => log.info({ neo4j: m }),
    onSpawn,
  });
  log.info({ ms: Date.now() - t0, uri: local.uri }, 'local Neo4j started');
  return local;
}

export function neo4jPasswordFile(config: Pick<AppConfig, 'dataDir'>): string {
  return path.join(config.dataDir, 'neo4j.password');
}

function readOrCreateSecret(file: string): string {
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const secret = randomBytes(24).toString('base64url');
  fs.writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}
