// Real local Neo4j Community 5.26 for development and tests, without Docker or a Neo4j install:
// Maven fetches the jars (infra/neo4j/pom.xml) into a cache folder once, and
// infra/neo4j/LocalNeo4j.java runs an embedded DBMS with Bolt on 127.0.0.1 (see that file).
// Needs `java` (17 or 21; JAVA_HOME wins over PATH) and, for the first run, `mvn`.
import { freePort } from './free-port';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { auth, driver as createDriver } from 'neo4j-driver';
import { childProcessEnv } from '../../common/config';
import { runCommand, runMaven, tail } from './maven';

export interface LocalNeo4j {
  uri: string;
  user: string;
  password: string;
  pid: number;
  /** SIGTERM, wait for a clean exit (SIGKILL after a grace period). Idempotent. */
  stop(): Promise<void>;
}

export interface EnsureNeo4jJarsOptions {
  cacheDir: string;
  /** The JDK to run (config JAVA_HOME); unset: `java` on the PATH. */
  javaHome?: string;
  log?: (msg: string) => void;
}

export interface StartLocalNeo4jOptions {
  dataDir: string;
  cacheDir: string;
  /** The JDK to run (config JAVA_HOME); unset: `java` on the PATH. */
  javaHome?: string;
  password: string;
  /** Bolt port on 127.0.0.1; a free one is picked when omitted. */
  port?: number;
  /** JVM heap bound in MiB (default 1024). */
  heapMb?: number;
  /** Neo4j page cache in MiB (default 128; NEO4J_PAGECACHE_MB). */
  pageCacheMb?: number;
  log?: (msg: string) => void;
  /** How long to wait for Bolt (default 180 s: a cold start takes ~15-25 s on 2 cores). */
  startTimeoutMs?: number;
  /**
   * Reuse a class-data-sharing archive of the JVM's loaded classes (default true): saves ~5 s per
   * start (alternating runs on a busy 2-core machine: 8.8-21.5 s with it, 12.9-25.2 s without).
   * The first run writes it at exit, after the DBMS has stopped (~10 s on 2 cores): stop() does
   * not wait for that, the exiting JVM finishes it alone.
   */
  classDataSharing?: boolean;
  /** Extra JVM flags, e.g. "-XX:TieredStopAtLevel=1" for faster start-up in short test runs. */
  jvmArgs?: string[];
}

const JAVA_FILE = path.join('infra', 'neo4j', 'LocalNeo4j.java');
const POM_FILE = path.join('infra', 'neo4j', 'pom.xml');
const READY_PREFIX = 'NEO4J_READY ';
const STOP_GRACE_MS = 20_000;
const STOP_GRACE_WHILE_DUMPING_MS = 60_000;
/** What LocalNeo4j.java prints on stderr once `dbms.shutdown()` returned: store closed, Bolt gone. */
const STOPPED_LINE = 'LocalNeo4j: stopped';
/** What LocalNeo4j.java reads on stdin as the request to stop. */
const STOP_LINE = 'stop';
// Flags Neo4j's own launch scripts pass on Java 17, plus a GC that suits a small 2-core machine.
const BASE_JVM_FLAGS = [
  '--add-opens=java.base/java.nio=ALL-UNNAMED',
  '--add-opens=java.base/sun.nio.ch=ALL-UNNAMED',
  '--add-opens=java.base/java.io=ALL-UNNAMED',
  '-Dio.netty.tryReflectionSetAccessible=true',
  '-XX:+UseSerialGC',
  '-XX:+ExitOnOutOfMemoryError',
  // JVM warnings go to stderr (the default is stdout); CDS dumps warn per skipped class: mute them.
  '-Xlog:disable',
  '-Xlog:all=warning:stderr',
  '-Xlog:cds*=off:stderr',
];

const noop = (): void => undefined;

/** Walks up from this file until the folder holding infra/neo4j/LocalNeo4j.java (src/ or dist/src/). */
function findRepoRoot(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, JAVA_FILE))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`local-neo4j: no ${JAVA_FILE} above ${__dirname}`);
  }
}

function javaBin(javaHome: string | undefined): string {
  return javaHome ? path.join(javaHome, 'bin', 'java') : 'java';
}

/** `java -version`: fails clearly when java is missing or older than 17; the text keys the CDS archive. */
async function probeJava(javaHome: string | undefined): Promise<string> {
  const { code, output } = await runCommand('local-neo4j', javaBin(javaHome), ['-version']);
  const m = /version "(\d+)/.exec(output);
  if (code !== 0 || !m) throw new Error(`local-neo4j: \`${javaBin(javaHome)} -version\` failed:\n${tail(output)}`);
  const major = Number(m[1]);
  if (major < 17) throw new Error(`local-neo4j: Neo4j 5.26 needs Java 17 or 21, found:\n${output.trim()}`);
  return output;
}

function jarsLayout(cacheDir: string): { dir: string; lib: string; marker: string; pom: string; key: string } {
  const pom = fs.readFileSync(path.join(findRepoRoot(), POM_FILE), 'utf8');
  const version = /<neo4j\.version>([^<]+)<\/neo4j\.version>/.exec(pom)?.[1];
  if (!version) throw new Error(`local-neo4j: no <neo4j.version> in ${POM_FILE}`);
  const dir = path.resolve(cacheDir, `neo4j-${version}`);
  // The marker holds the pom's hash, so editing the pom (say, the APOC version) re-resolves.
  const key = createHash('sha256').update(pom).digest('hex').slice(0, 16);
  return { dir, lib: path.join(dir, 'lib'), marker: path.join(dir, 'lib.complete'), pom, key };
}

function dirSizeMb(dir: string): number {
  const bytes = fs.readdirSync(dir).reduce((sum, f) => sum + fs.statSync(path.join(dir, f)).size, 0);
  return Math.round(bytes / 1024 / 1024);
}

/** Resolves the Neo4j + APOC jars into <cacheDir>/neo4j-<version>/lib once; returns that folder. */
export async function ensureNeo4jJars(opts: EnsureNeo4jJarsOptions): Promise<string> {
  const log = opts.log ?? noop;
  const { dir, lib, marker, pom, key } = jarsLayout(opts.cacheDir);
  const isComplete = (): boolean => fs.existsSync(marker) && fs.readFileSync(marker, 'utf8').trim() === key;
  if (isComplete()) return lib;

  await probeJava(opts.javaHome);
  fs.mkdirSync(dir, { recursive: true });
  // Maven runs on a copy of the pom in the cache folder, so it never writes into the checkout.
  fs.writeFileSync(path.join(dir, 'pom.xml'), pom);
  // Per-process output folder, renamed into place at the end: concurrent callers cannot mix jars.
  const tmpLib = `${lib}.${process.pid}.tmp`;
  fs.rmSync(tmpLib, { recursive: true, force: true });
  const args = ['-f', path.join(dir, 'pom.xml'), 'dependency:copy-dependencies', `-DoutputDirectory=${tmpLib}`];
  log(`local-neo4j: resolving Neo4j jars with Maven into ${lib} (a cold ~/.m2 downloads ~110 MB)`);
  const started = Date.now();
  try {
    await runMaven(args, { label: 'local-neo4j', log });
  } catch (err) {
    fs.rmSync(tmpLib, { recursive: true, force: true });
    throw err;
  }
  if (isComplete()) {
    fs.rmSync(tmpLib, { recursive: true, force: true }); // another process finished first
  } else {
    fs.rmSync(lib, { recursive: true, force: true }); // stale jars of an older pom
    fs.renameSync(tmpLib, lib);
    fs.writeFileSync(marker, key + '\n');
  }
  const jars = fs.readdirSync(lib).length;
  log(`local-neo4j: ${jars} jars (${dirSizeMb(lib)} MB) ready in ${Math.round((Date.now() - started) / 1000)} s`);
  return lib;
}

function hasArchiveHeader(file: string): boolean {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const magic = Buffer.alloc(4);
      return fs.readSync(fd, magic, 0, 4, 0) === 4 && magic.readUInt32LE(0) !== 0;
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return false;
  }
}

/** Starts Neo4j on dataDir (created if missing) and resolves once Bolt answers with the password. */
export async function startLocalNeo4j(opts: StartLocalNeo4jOptions): Promise<LocalNeo4j> {
  const log = opts.log ?? noop;
  if (!opts.password) throw new Error('local-neo4j: a password is required');
  const lib = await ensureNeo4jJars({ cacheDir: opts.cacheDir, javaHome: opts.javaHome, log });
  const javaVersion = await probeJava(opts.javaHome);
  const dataDir = path.resolve(opts.dataDir);
  fs.mkdirSync(dataDir, { recursive: true });
  const port = opts.port ?? (await freePort());
  const uri = `bolt://127.0.0.1:${port}`;

  const jvm = [...BASE_JVM_FLAGS, `-Xmx${opts.heapMb ?? 1024}m`, `-Dneo4j.local.pagecacheMb=${opts.pageCacheMb ?? 128}`];
  let dumpingCds = false;
  if (opts.classDataSharing ?? true) {
    // The archive only fits this exact JDK and jar set; a stale one would just be ignored.
    const key = createHash('sha256').update(javaVersion).update(fs.readdirSync(lib).sort().join('\n')).digest('hex').slice(0, 16);
    const archive = path.join(path.dirname(lib), `cds-${key}.jsa`);
    // The JVM writes the archive header last: a zero header means a dump was killed midway (or is
    // running in another process); the JVM would ignore that file, so dump a fresh one.
    dumpingCds = !hasArchiveHeader(archive);
    if (dumpingCds) {
      // Archives of older JDKs or jar sets are dead weight (~140 MB each).
      for (const f of fs.readdirSync(path.dirname(lib))) {
        if (/^cds-.*\.jsa$/.test(f)) fs.rmSync(path.join(path.dirname(lib), f), { force: true });
      }
    }
    jvm.push(dumpingCds ? `-XX:ArchiveClassesAtExit=${archive}` : `-XX:SharedArchiveFile=${archive}`);
  }
  jvm.push(...(opts.jvmArgs ?? []));
  const args = [...jvm, '-cp', path.join(lib, '*'), path.join(findRepoRoot(), JAVA_FILE), dataDir, String(port)];

  const started = Date.now();
  log(`local-neo4j: starting on ${uri} (data ${dataDir})`);
  // stdin stays an open pipe: the Java side exits when it closes, i.e. when this process dies.
  const child = spawn(javaBin(opts.javaHome), args, {
    cwd: dataDir,
    env: childProcessEnv({ NEO4J_LOCAL_PASSWORD: opts.password }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.on('error', noop);
  // "error" without "exit" happens when java cannot be spawned at all.
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  let stderrTail: string[] = [];
  let dbmsStopped: () => void = noop;
  const dbmsStoppedLine = new Promise<void>((resolve) => (dbmsStopped = resolve));
  readline.createInterface({ input: child.stderr }).on('line', (line) => {
    stderrTail = [...stderrTail.slice(-39), line];
    if (line === STOPPED_LINE) dbmsStopped();
    log(`neo4j: ${line}`);
  });

  let ready = false;
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      const grace = dumpingCds ? STOP_GRACE_WHILE_DUMPING_MS : STOP_GRACE_MS;
      const timer = setTimeout(() => child.kill('SIGKILL'), grace);
      // A running DBMS is asked on stdin (LocalNeo4j.java): it stops, then the JVM exits. A SIGTERM
      // runs the JVM's exit sequence first, which on a run that dumps the CDS archive links every
      // loaded class before the shutdown hook stops the DBMS (JDK 17): the first stop after an
      // install waited 1.5-2 s for that. A start that failed, or a closed stdin, gets SIGTERM.
      if (ready && child.stdin.writable) child.stdin.write(`${STOP_LINE}\n`, (err) => err && child.kill('SIGTERM'));
      else child.kill('SIGTERM');
      if (!dumpingCds) {
        await exited;
        clearTimeout(timer);
        return;
      }
      // The first run's JVM writes the CDS archive after the DBMS stopped (~10 s here): the first
      // stop took 13 s for it. Once the DBMS is down (store closed, Bolt port free) this stop is
      // done and the JVM finishes the archive on its own, also after this process exits (the
      // grace timer, unref'd, still ends a stuck dump while this process lives). A dump cut short
      // leaves a zero header, and the next start dumps again.
      await Promise.race([exited, dbmsStoppedLine]);
      if (child.exitCode !== null || child.signalCode !== null) {
        clearTimeout(timer);
        return;
      }
      timer.unref();
      log(`local-neo4j: stopped; the JVM (pid ${child.pid}) writes its class-data-sharing archive in the background`);
      for (const stream of [child.stdin, child.stdout, child.stderr]) stream.destroy();
      child.unref();
    })();
    return stopping;
  };

  try {
    await new Promise<void>((resolve, reject) => {
      const fail = (why: string): void => reject(new Error(`local-neo4j: ${why}\n--- stderr tail ---\n${stderrTail.join('\n')}`));
      const timeoutMs = opts.startTimeoutMs ?? 180_000;
      const timer = setTimeout(() => fail(`no ${READY_PREFIX.trim()} within ${timeoutMs} ms`), timeoutMs);
      child.once('error', (err) => fail(`cannot run ${javaBin(opts.javaHome)}: ${err.message}`));
      child.once('exit', (code, signal) => fail(`java exited early (code ${code}, signal ${signal})`));
      readline.createInterface({ input: child.stdout }).on('line', (line) => {
        if (line.startsWith(READY_PREFIX)) {
          clearTimeout(timer);
          ready = true;
          resolve();
        }
      });
    });
    const drv = createDriver(uri, auth.basic('neo4j', opts.password), {
      connectionTimeout: 5_000,
      maxTransactionRetryTime: 5_000,
    });
    try {
      await drv.verifyConnectivity();
    } finally {
      await drv.close();
    }
  } catch (err) {
    await stop();
    throw err;
  }
  log(`local-neo4j: ready on ${uri} in ${((Date.now() - started) / 1000).toFixed(1)} s (pid ${child.pid})`);
  return { uri, user: 'neo4j', password: opts.password, pid: child.pid ?? -1, stop };
}
