import fs from 'node:fs';
import { CliError } from '../common/cli-error';
import { AppConfig } from '../common/config';
import { AppLogger } from '../common/logger';
import { embeddedPostgresUrls } from '../platform/local-services/embedded-postgres';
import { InstanceState, liveInstance, markInstanceStopped, portsOf, previousPorts, writeInstanceState } from '../platform/local-services/instance-state';
import type { Neo4jConnection } from '../platform/neo4j/neo4j-client';
import type { StoreAddresses } from './stores';
import type * as StoresModule from './stores';

/** Commands that run an instance; any other process that writes the state file is a CLI command that started stores for itself. */
const SERVICE_COMMANDS = new Set(['serve', 'worker']);

/** The stores a CLI command works on: a running instance's, or ones it started for itself. */
export interface CommandStores {
  readonly postgresUrl: string;
  readonly postgresRuntimeUrl?: string;
  /** Set when the command asked for Neo4j. */
  readonly neo4j?: Neo4jConnection;
  /** The running service this command attached to (its pid, its API URL when it serves one); undefined when the command started the stores itself. */
  readonly service?: InstanceState;
  /** Stops what the command started (nothing when it attached to a running instance). */
  release(): Promise<void>;
}

/**
 * The stores of DATA_DIR for a CLI command: those of the running service of the same DATA_DIR
 * (found in DATA_DIR/instance.json; passwords from their 0600 files), else the embedded stores
 * started for this command alone (only Neo4j when `neo4j` is asked), else the configured
 * external ones. A second embedded PostgreSQL on the same folder cannot start, so when another
 * CLI command holds the folder, this one says so and stops.
 */
export async function storesForCommand(config: AppConfig, log: AppLogger, command: string, needs: { neo4j: boolean }): Promise<CommandStores> {
  const live = liveInstance(config.dataDir);
  if (live) return attach(config, live, needs);
  // Loaded only to start stores (the Neo4j driver alone took half a second on 2 busy cores).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startStores } = require('./stores') as typeof StoresModule;
  const stores = await startStores(config, log, { neo4j: needs.neo4j });
  const embedded = stores.addresses.postgres.embedded || stores.addresses.neo4j?.embedded === true;
  if (embedded) recordInstance(config.dataDir, command, stores.addresses);
  return {
    postgresUrl: stores.postgresUrl,
    postgresRuntimeUrl: stores.postgresRuntimeUrl,
    neo4j: stores.neo4j,
    async release() {
      await stores.stop();
      if (embedded) markInstanceStopped(config.dataDir);
    },
  };
}

/** Writes DATA_DIR/instance.json for this process: what it runs, its stores, its API once it serves one. */
export function recordInstance(dataDir: string, command: string, addresses: StoreAddresses, api?: string): void {
  writeInstanceState(dataDir, {
    ports: { ...previousPorts(dataDir), ...portsOf(addresses) },
    version: 1,
    pid: process.pid,
    command,
    startedAt: new Date().toISOString(),
    ...(api ? { api } : {}),
    postgres: addresses.postgres,
    ...(addresses.neo4j ? { neo4j: addresses.neo4j } : {}),
  });
}

/**
 * A `serve` or `worker` about to start the embedded stores of DATA_DIR while another process runs
 * them: it could not (the second PostgreSQL fails, then Neo4j's store lock); say who holds them.
 */
export function refuseSecondInstance(config: AppConfig, command: string): void {
  const live = liveInstance(config.dataDir);
  const wouldStartEmbedded = !config.databaseUrl || !config.neo4j;
  if (!live || !wouldStartEmbedded) return;
  const holdsEmbedded = live.postgres?.embedded === true || live.neo4j?.embedded === true;
  if (!holdsEmbedded) return;
  throw new CliError(
    `${config.dataDir} is already in use by \`medallion ${live.command}\` (pid ${live.pid}${live.api ? `, serving ${live.api}` : ''}), which runs its embedded stores: ` +
      `stop it first, or give this \`${command}\` another DATA_DIR`,
  );
}

function attach(config: AppConfig, live: InstanceState, needs: { neo4j: boolean }): CommandStores {
  if (!SERVICE_COMMANDS.has(live.command))
    throw new CliError(
      `${config.dataDir} is in use by \`medallion ${live.command}\` (pid ${live.pid}), which started the stores for itself: wait until it ends, then run this again`,
    );
  const pg = live.postgres;
  let postgresUrl: string;
  let postgresRuntimeUrl: string | undefined;
  if (pg?.embedded) {
    ({ url: postgresUrl, runtimeUrl: postgresRuntimeUrl } = embeddedPostgresUrls(pg));
  } else if (config.databaseUrl) {
    postgresUrl = config.databaseUrl;
    postgresRuntimeUrl = config.databaseRuntimeUrl;
  } else {
    throw new CliError(
      `the service of ${config.dataDir} (pid ${live.pid}) runs on an external PostgreSQL: give this command the same DATABASE_URL and DATABASE_RUNTIME_URL as the service`,
    );
  }
  let neo4j: Neo4jConnection | undefined;
  if (needs.neo4j) {
    const n = live.neo4j;
    if (n?.embedded) neo4j = { uri: n.uri, user: n.user, password: fs.readFileSync(n.passwordFile, 'utf8').trim() };
    else if (config.neo4j) neo4j = config.neo4j;
    else
      throw new CliError(
        `the service of ${config.dataDir} (pid ${live.pid}) runs on an external Neo4j: give this command the same NEO4J_URI, NEO4J_USER and NEO4J_PASSWORD as the service`,
      );
  }
  return { postgresUrl, postgresRuntimeUrl, neo4j, service: live, release: async () => undefined };
}

/** The URL of the running service of DATA_DIR when it serves the API, else http://127.0.0.1:$PORT. */
export function serviceUrl(config: Pick<AppConfig, 'dataDir' | 'port'>): string {
  return liveInstance(config.dataDir)?.api ?? `http://127.0.0.1:${config.port}`;
}
