// Real local Neo4j Community 5.26 for development and tests, without Docker or a Neo4j install:
// Maven fetches the jars (infra/neo4j/pom.xml) into a cache folder once, and
// infra/neo4j/LocalNeo4j.java runs an embedded DBMS with Bolt on 127.0.0.1 (see that file).
// Needs `java` (17 or 21; JAVA_HOME wins over PATH) and, for the first run, `mvn`.
import { freePort } from './free-port';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
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
  /** What this start did about the class-data-sharing archive, and (`dumping`) when the dump ended (true: the archive is in place). */
  readonly cds: { readonly mode: 'off' | 'using' | 'recording' | 'dumping'; readonly dumped: Promise<boolean> };
  /** Asks the DBMS to stop and waits for the JVM (and an archive dump still running) to exit; SIGKILL after a grace period. Idempotent. */
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
   * Start from a class-data-sharing archive of the JVM's classes (default true): ~5-9 s faster
   * starts on 2 cores. A run without an archive records the classes it loads (a list written as
   * they load, no cost at exit); the next start, once Neo4j is up, dumps the archive from that
   * list in a child process at the lowest CPU priority, which `stop()` ends with the rest; the
   * start after that uses it. Nothing is written at the JVM's exit, so no JVM outlives a stop.
   */
  classDataSharing?: boolean;
  /** Extra JVM flags, e.g. "-XX:TieredStopAtLevel=1" for faster start-up in short test runs. */
  jvmArgs?: string[];
  /** Called once the JVM is spawned: the caller's own start-up work can overlap the DBMS's boot. */
  onSpawn?: () => void;
  /** The archive dump's CPU niceness (default 19, the lowest priority; a test on a busy machine that waits for the dump asks for 0). */
  dumpNiceness?: number;
}

const JAVA_FILE = path.join('infra', 'neo4j', 'LocalNeo4j.java');
const POM_FILE = path.join('infra', 'neo4j', 'pom.xml');
const READY_PREFIX = 'NEO4J_READY ';
/** A DBMS that has not stopped this long after being asked is killed: a stop ends every child within 10 s. */
const STOP_GRACE_MS = 8_000;
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

/** Where this JDK and jar set's class list and archive live (`appcds-`: older versions' `cds-*.jsa` files are theirs). */
function cdsFiles(lib: string, javaVersion: string): { list: string; archive: string } {
  const key = createHash('sha256').update(javaVersion).update(fs.readdirSync(lib).sort().join('\n')).digest('hex').slice(0, 16);
  const dir = path.dirname(lib);
  return { list: path.join(dir, `appcds-${key}.classlist`), archive: path.join(dir, `appcds-${key}.jsa`) };
}

/**
 * Dumps a static archive from `list` (Java's own -Xshare:dump with the run's class path) into a
 * temporary file renamed into place when complete. Lines of 4096 characters or more are left out:
 * JDK 17 writes such lambda-proxy lines in its lists and then refuses to read them.
 */
function dumpArchive(
  javaHome: string | undefined,
  jvm: readonly string[],
  classPath: string,
  files: { list: string; archive: string },
  niceness: number,
  log: (m: string) => void,
) {
  const readable = `${files.list}.${process.pid}.dump`;
  fs.writeFileSync(
    readable,
    fs
      .readFileSync(files.list, 'utf8')
      .split('\n')
      .filter((l) => l.length < 4096)
      .join('\n'),
  );
  const tmp = `${files.archive}.${process.pid}.tmp`;
  const child = spawn(javaBin(javaHome), [...jvm, '-Xshare:dump', `-XX:SharedClassListFile=${readable}`, `-XX:SharedArchiveFile=${tmp}`, '-cp', classPath], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // The lowest CPU priority: on 2 cores the dump (~20-60 s of one core) must not slow the service's first answers.
  if (child.pid !== undefined) os.setPriority(child.pid, niceness);
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => void (stderr = (stderr + b.toString()).slice(-2000)));
  const t0 = Date.now();
  const done = new Promise<boolean>((resolve) => {
    child.once('error', () => resolve(false));
    child.once('exit', (code) => {
      fs.rmSync(readable, { force: true });
      if (code === 0 && hasArchiveHeader(tmp)) {
        fs.renameSync(tmp, files.archive);
        log(`local-neo4j: class-data-sharing archive written in ${((Date.now() - t0) / 1000).toFixed(1)} s; the next start uses it`);
        resolve(true);
      } else {
        fs.rmSync(tmp, { force: true });
        if (code !== null) log(`local-neo4j: dumping the class-data-sharing archive failed (exit ${code}): ${tail(stderr, 3)}`);
        resolve(false);
      }
    });
  });
  return { pid: child.pid, done, kill: () => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL') };
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
  const classPath = path.join(lib, '*');
  const cds = opts.classDataSharing === false ? undefined : cdsFiles(lib, javaVersion);
  // The archive fits only this exact JDK and jar set (the key); a stale one would just be ignored.
  const mode: LocalNeo4j['cds']['mode'] = !cds ? 'off' : hasArchiveHeader(cds.archive) ? 'using' : fs.existsSync(cds.list) ? 'dumping' : 'recording';
  const recording = cds && mode === 'recording' ? `${cds.list}.${process.pid}.tmp` : undefined;
  if (cds) {
    // Archives and lists of other JDKs or jar sets are dead weight (an archive is ~140 MB).
    const keep = new Set([path.basename(cds.list), path.basename(cds.archive)]);
    for (const f of fs.readdirSync(path.dirname(lib)))
      if (/^appcds-[0-9a-f]+\.(classlist|jsa)$/.test(f) && !keep.has(f)) fs.rmSync(path.join(path.dirname(lib), f), { force: true });
  }
  const runFlags = [...jvm];
  if (cds && mode === 'using') runFlags.push(`-XX:SharedArchiveFile=${cds.archive}`);
  if (recording) runFlags.push(`-XX:DumpLoadedClassList=${recording}`);
  runFlags.push(...(opts.jvmArgs ?? []));
  const args = [...runFlags, '-cp', classPath, path.join(findRepoRoot(), JAVA_FILE), dataDir, String(port)];

  const started = Date.now();
  log(`local-neo4j: starting on ${uri} (data ${dataDir}; class-data-sharing: ${mode})`);
  // stdin stays an open pipe: the Java side exits when it closes, i.e. when this process dies. Its
  // own process group: a Ctrl-C in the terminal reaches the service, which stops the DBMS after the
  // app has drained, not the JVM directly in the middle of it.
  const child = spawn(javaBin(opts.javaHome), args, {
    cwd: dataDir,
    detached: true,
    env: childProcessEnv({ NEO4J_LOCAL_PASSWORD: opts.password }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.on('error', noop);
  opts.onSpawn?.();
  // "error" without "exit" happens when java cannot be spawned at all.
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(null));
  });
  let stderrTail: string[] = [];
  readline.createInterface({ input: child.stderr }).on('line', (line) => {
    stderrTail = [...stderrTail.slice(-39), line];
    log(`neo4j: ${line}`);
  });

  let ready = false;
  let dumper: ReturnType<typeof dumpArchive> | undefined;
  let dumped: Promise<boolean> = Promise.resolve(mode === 'using');
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      // A dump not finished is abandoned (its temporary file removed): the next start dumps again.
      dumper?.kill();
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        // A running DBMS is asked on stdin (LocalNeo4j.java): it stops, then the JVM exits. A
        // start that failed, or a closed stdin, gets SIGTERM (the JVM's shutdown hook stops the DBMS).
        if (ready && child.stdin.writable) child.stdin.write(`${STOP_LINE}\n`, (err) => err && child.kill('SIGTERM'));
        else child.kill('SIGTERM');
        const code = await exited;
        clearTimeout(timer);
        // The class list is complete once the JVM has exited cleanly; the next start dumps the archive from it.
        if (recording && cds) {
          if (code === 0 && fs.existsSync(recording)) fs.renameSync(recording, cds.list);
          else fs.rmSync(recording, { force: true });
        }
      }
      await dumped;
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
  if (cds && mode === 'dumping' && !stopping) {
    dumper = dumpArchive(opts.javaHome, jvm, classPath, cds, opts.dumpNiceness ?? 19, log);
    dumped = dumper.done;
    log(
      `local-neo4j: dumping a class-data-sharing archive from the last run's class list in the background (pid ${dumper.pid}, niceness ${opts.dumpNiceness ?? 19})`,
    );
  }
  return {
    uri,
    user: 'neo4j',
    password: opts.password,
    pid: child.pid ?? -1,
    cds: { mode, dumped },
    stop,
  };
}
