import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { freePort } from './free-port';
import { processAlive } from '../process-tree';

/**
 * What a process that runs an instance of DATA_DIR writes to `DATA_DIR/instance.json`, so that a
 * CLI command of the same DATA_DIR finds the running service and its stores instead of starting
 * a second embedded PostgreSQL and Neo4j on the same folders. It holds addresses and the paths of
 * the secret files, never a secret: the passwords stay in their 0600 files. On a clean stop the
 * file is kept with `stoppedAt` set, so the next start reuses the same ports.
 */
export interface InstanceState {
  readonly version: 1;
  readonly pid: number;
  /** `serve`, `worker`, or the CLI command that started the stores for itself (`export`, …). */
  readonly command: string;
  readonly startedAt: string;
  /** Set by a clean stop; absent while it runs (or when it was killed: then its pid is gone). */
  readonly stoppedAt?: string;
  /** The HTTP base URL (`http://127.0.0.1:4000`) when this process serves the API. */
  readonly api?: string;
  readonly postgres?: EmbeddedPostgresAddress | ExternalStore;
  readonly neo4j?: EmbeddedNeo4jAddress | ExternalStore;
  /** The ports the embedded stores had most recently, this process's or an earlier one's (a command that started PostgreSQL alone keeps Neo4j's). */
  readonly ports?: StorePorts;
}

export interface StorePorts {
  readonly postgres?: number;
  readonly neo4j?: number;
}

export interface EmbeddedPostgresAddress {
  readonly embedded: true;
  readonly port: number;
  readonly user: string;
  readonly runtimeUser: string;
  readonly database: string;
  /** The owner's (cluster superuser's) password file, 0600. */
  readonly passwordFile: string;
  readonly runtimePasswordFile: string;
}

export interface EmbeddedNeo4jAddress {
  readonly embedded: true;
  readonly uri: string;
  readonly user: string;
  readonly passwordFile: string;
}

/** A store given by DATABASE_URL or NEO4J_URI: its address is in the configuration, not here. */
export interface ExternalStore {
  readonly embedded: false;
}

export const INSTANCE_FILE = 'instance.json';

export function instanceFile(dataDir: string): string {
  return path.join(dataDir, INSTANCE_FILE);
}

/** The last state written for DATA_DIR (running or stopped), or undefined when there is none or it is unreadable. */
export function readInstanceState(dataDir: string): InstanceState | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(instanceFile(dataDir), 'utf8')) as InstanceState;
    return parsed && parsed.version === 1 && Number.isInteger(parsed.pid) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Written whole to a temporary file and renamed over the old one: a reader never sees half of it. */
export function writeInstanceState(dataDir: string, state: InstanceState): void {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = instanceFile(dataDir);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/** A clean stop: the state stays (its ports are reused by the next start) with `stoppedAt`, if it is still this process's. */
export function markInstanceStopped(dataDir: string, pid = process.pid): void {
  const state = readInstanceState(dataDir);
  if (!state || state.pid !== pid || state.stoppedAt) return;
  writeInstanceState(dataDir, { ...state, stoppedAt: new Date().toISOString() });
}

/** The state of a process that runs DATA_DIR's instance now (not stopped, its pid alive), else undefined. */
export function liveInstance(dataDir: string): InstanceState | undefined {
  const state = readInstanceState(dataDir);
  if (!state || state.stoppedAt || state.pid === process.pid || !processAlive(state.pid)) return undefined;
  return state;
}

/** The ports the embedded stores had last time (running or not), to start on them again. */
export function previousPorts(dataDir: string): StorePorts {
  const state = readInstanceState(dataDir);
  return { ...state?.ports, ...portsOf(state) };
}

/** The ports of the embedded stores a state names. */
export function portsOf(state: Pick<InstanceState, 'postgres' | 'neo4j'> | undefined): StorePorts {
  const pg = state?.postgres?.embedded ? state.postgres.port : undefined;
  const bolt = state?.neo4j?.embedded ? Number(/:(\d+)$/.exec(state.neo4j.uri)?.[1]) : undefined;
  return { ...(pg ? { postgres: pg } : {}), ...(bolt && Number.isInteger(bolt) ? { neo4j: bolt } : {}) };
}

/** Whether 127.0.0.1:port can be listened on now. */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** `preferred` when it is free (the port a store had last time), else one the OS picks. */
export async function reusablePort(preferred: number | undefined): Promise<number> {
  if (preferred && (await portIsFree(preferred))) return preferred;
  return freePort();
}
