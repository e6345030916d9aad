import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startLocalNeo4j } from '../../src/platform/local-services/local-neo4j';
import { eventually } from '../support/test-app';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const accepts = (uri: string): Promise<boolean> =>
  new Promise((resolve) => {
    const { hostname, port } = new URL(uri.replace('bolt://', 'http://'));
    const socket = net.connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** The class-data-sharing archive in `dir`, when complete (the JVM writes its header last). */
function completeArchive(dir: string): string | undefined {
  const file = fs.readdirSync(dir).find((f) => /^cds-.*\.jsa$/.test(f));
  if (!file) return undefined;
  const magic = Buffer.alloc(4);
  const fd = fs.openSync(path.join(dir, file), 'r');
  try {
    return fs.readSync(fd, magic, 0, 4, 0) === 4 && magic.readUInt32LE(0) !== 0 ? path.join(dir, file) : undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Issue 25: the first stop after an install took 13 s, the JVM writing its CDS archive at exit.
 * Runs its own Neo4j on a cache folder that has the checkout's jars but no archive (a fresh install).
 */
describe('local Neo4j: the first stop does not wait for the class-data-sharing archive', () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-cds-'));
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  it('returns once the DBMS has stopped while the exiting JVM writes the archive; the next start uses it', async () => {
    const from = path.resolve(process.env.CACHE_DIR ?? '.cache');
    const cacheDir = path.join(work, 'cache');
    const version = fs.readdirSync(from).find((d) => d.startsWith('neo4j-') && fs.existsSync(path.join(from, d, 'lib.complete')));
    if (!version) throw new Error(`no resolved Neo4j jars in ${from}`);
    fs.mkdirSync(path.join(cacheDir, version), { recursive: true });
    fs.symlinkSync(path.join(from, version, 'lib'), path.join(cacheDir, version, 'lib'));
    for (const f of ['lib.complete', 'pom.xml']) fs.copyFileSync(path.join(from, version, f), path.join(cacheDir, version, f));
    const lines: string[] = [];
    const opts = {
      dataDir: path.join(work, 'data'),
      cacheDir,
      javaHome: process.env.JAVA_HOME || undefined,
      password: 'cds-password',
      heapMb: 512,
      log: (m: string) => void lines.push(m),
    };

    const first = await startLocalNeo4j(opts);
    await first.stop();
    // Asked on stdin, the DBMS stopped before the JVM's exit sequence (which links every class for the dump first).
    expect(lines.filter((l) => /LocalNeo4j: (stop requested|shutting down|stopped)/.test(l))).toEqual([
      'neo4j: LocalNeo4j: stop requested on stdin',
      'neo4j: LocalNeo4j: shutting down',
      'neo4j: LocalNeo4j: stopped',
    ]);
    // Stopped: Bolt is closed and the store released, yet the JVM is still at work on the archive.
    expect(await accepts(first.uri)).toBe(false);
    expect(alive(first.pid)).toBe(true);
    expect(completeArchive(path.join(cacheDir, version))).toBeUndefined();
    const archive = await eventually(async () => completeArchive(path.join(cacheDir, version)), 'a complete CDS archive', 120_000);
    await eventually(async () => !alive(first.pid), 'the dumping JVM to exit', 30_000);

    // The second run reuses the archive (no new dump) and its stop waits for the JVM to exit.
    const written = fs.statSync(archive).mtimeMs;
    const second = await startLocalNeo4j(opts);
    await second.stop();
    expect(alive(second.pid)).toBe(false);
    expect(fs.statSync(archive).mtimeMs).toBe(written);
  });
});
