import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startLocalNeo4j } from '../../src/platform/local-services/local-neo4j';
import { processAlive } from '../../src/platform/process-tree';

const alive = processAlive;

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

/** The class list and the complete archive in `dir` (the JVM writes an archive's header last), and any temporary file left. */
function cdsFiles(dir: string): { list: boolean; archive: boolean; leftovers: string[] } {
  const files = fs.readdirSync(dir);
  const archive = files.find((f) => /^appcds-[0-9a-f]+\.jsa$/.test(f));
  let complete = false;
  if (archive) {
    const magic = Buffer.alloc(4);
    const fd = fs.openSync(path.join(dir, archive), 'r');
    try {
      complete = fs.readSync(fd, magic, 0, 4, 0) === 4 && magic.readUInt32LE(0) !== 0;
    } finally {
      fs.closeSync(fd);
    }
  }
  return {
    list: files.some((f) => /^appcds-[0-9a-f]+\.classlist$/.test(f)),
    archive: complete,
    leftovers: files.filter((f) => /^appcds-.*\.(tmp|dump)$/.test(f)),
  };
}

/**
 * Issue 25 made starts ~5 s faster with an archive the JVM wrote at its exit, which kept the JVM
 * 10-52 s after a stop (issue 41). Now a run records its class list as it loads classes, the next
 * start dumps the archive in a child of its own, and every stop returns with no JVM left. Runs its
 * own Neo4j on a cache folder that has the checkout's jars and no archive (a fresh install).
 */
describe('local Neo4j: class-data-sharing with no JVM outliving a stop', () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-cds-'));
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  it('records the class list, dumps the archive beside the next run (a stop ends the dump too), and a later start uses it', async () => {
    const from = path.resolve(process.env.CACHE_DIR ?? '.cache');
    const cacheDir = path.join(work, 'cache');
    const version = fs.readdirSync(from).find((d) => d.startsWith('neo4j-') && fs.existsSync(path.join(from, d, 'lib.complete')));
    if (!version) throw new Error(`no resolved Neo4j jars in ${from}`);
    const dir = path.join(cacheDir, version);
    fs.mkdirSync(dir, { recursive: true });
    fs.symlinkSync(path.join(from, version, 'lib'), path.join(dir, 'lib'));
    for (const f of ['lib.complete', 'pom.xml']) fs.copyFileSync(path.join(from, version, f), path.join(dir, f));
    const lines: string[] = [];
    const opts = {
      dataDir: path.join(work, 'data'),
      cacheDir,
      javaHome: process.env.JAVA_HOME || undefined,
      password: 'cds-password',
      heapMb: 512,
      // The service dumps at the lowest priority; on a machine busy with other tests that took 25 min.
      dumpNiceness: 0,
      log: (m: string) => void lines.push(m),
    };
    const dumperPid = () => Number(/archive .* in the background \(pid (\d+)/.exec(lines.join('\n'))?.[1]);

    // A fresh install records which classes it loads; its stop returns with the JVM gone.
    const first = await startLocalNeo4j(opts);
    expect(first.cds.mode).toBe('recording');
    await first.stop();
    expect(alive(first.pid)).toBe(false);
    expect(await accepts(first.uri)).toBe(false);
    expect(cdsFiles(dir)).toEqual({ list: true, archive: false, leftovers: [] });

    // The next start dumps the archive from that list in a child process; a stop in the middle ends it too.
    const second = await startLocalNeo4j(opts);
    expect(second.cds.mode).toBe('dumping');
    const abandoned = dumperPid();
    expect(alive(abandoned)).toBe(true);
    await second.stop();
    expect([alive(second.pid), alive(abandoned)]).toEqual([false, false]);
    expect(cdsFiles(dir)).toEqual({ list: true, archive: false, leftovers: [] });

    // Left to finish, the dump puts the archive in place, and the start after uses it.
    lines.length = 0;
    const third = await startLocalNeo4j(opts);
    expect(third.cds.mode).toBe('dumping');
    expect(await third.cds.dumped).toBe(true);
    await third.stop();
    expect(cdsFiles(dir)).toEqual({ list: true, archive: true, leftovers: [] });
    const fourth = await startLocalNeo4j(opts);
    expect(fourth.cds.mode).toBe('using');
    await fourth.stop();
    expect(alive(fourth.pid)).toBe(false);
  }, 1_800_000);
});
