import fs from 'node:fs';
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import path from 'node:path';
import { freePort } from '../../src/platform/local-services/free-port';
import { readInstanceState } from '../../src/platform/local-services/instance-state';
import { createTestDatabase } from '../support/stores';
import { eventually, gqlOk } from '../support/test-app';
import { scrape, total } from '../support/prometheus';
import { spawnService, WorkerProcess } from '../support/worker-process';

/** The parent of a running process (field 4 of /proc/<pid>/stat), or null once it is gone. */
function parentOf(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/** The one process whose parent is `pid` (the service's worker process). */
function childOf(pid: number): number | undefined {
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .find((p) => parentOf(p) === pid);
}

/** Pids whose worker ids (`<hostname>-<pid>`, WORKER_ID's default) derived a run in the namespace. */
async function derivingPids(databaseUrl: string, namespace: string): Promise<number[]> {
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    const { rows } = await pg.query<{ worker_id: string }>(`SELECT DISTINCT worker_id FROM silver.derivation_runs WHERE namespace = $1`, [namespace]);
    return rows.map((r) => Number(r.worker_id.slice(`${os.hostname()}-`.length)));
  } finally {
    await pg.end();
  }
}

/**
 * `serve`, the one-process default, derives in a child process it starts (docs/operations.md
 * "Processes"): derivation never runs on the event loop that answers requests, its counters still
 * reach the service's /metrics, and the child does not outlive the service.
 */
describe('serve runs its background work in a worker process of its own', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let service: WorkerProcess;
  let url = '';
  const adminToken = `test-admin-${randomBytes(16).toString('hex')}`;
  const ns = `worker-process-${randomBytes(4).toString('hex')}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-worker-process-'));

  beforeAll(async () => {
    db = await createTestDatabase();
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    service = spawnService('serve', db.url, { PORT: String(port), ADMIN_TOKEN: adminToken, DERIVE_QUIET_MS: '200', DATA_DIR: dataDir });
    await eventually(
      async () =>
        (await fetch(`${url}/health`)
          .then((r) => r.ok)
          .catch(() => false)) ||
        (service.child.exitCode !== null && Promise.reject(new Error(service.output.join('')))),
      'serve to answer',
      120_000,
    );
  });

  afterAll(async () => {
    await service?.kill();
    await db?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('derives in a child of the serving process, and /metrics counts what the child derived', async () => {
    const messages = ['I use vim for everything', 'Bob Smith is my manager', 'I live in Lisbon'];
    await gqlOk(url, adminToken, `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`, {
      input: messages.map((content, i) => ({ namespace: ns, source: 'chat', sourceEventId: `m-${i}`, kind: 'MESSAGE', role: 'USER', content })),
    });
    await eventually(async () => {
      const r = await gqlOk<{ pipelineStatus: { pending: number }; facts: { edges: unknown[] } }>(
        url,
        adminToken,
        `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } facts(namespace: $ns) { edges { node { id } } } }`,
        { ns },
      );
      return r.pipelineStatus.pending === 0 && r.facts.edges.length > 0;
    }, 'the messages to be derived');

    const apiPid = service.child.pid as number;
    const pids = await derivingPids(db.url, ns);
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) {
      expect(pid).not.toBe(apiPid);
      expect(parentOf(pid)).toBe(apiPid);
    }
    // The child sends its counters every 2 s; the service's own event loop is measured too.
    const scraped = await eventually(async () => {
      const s = await scrape(url);
      return total(s, 'medallion_derive_events_total') >= messages.length ? s : null;
    }, "the worker process's derivation counters on /metrics");
    expect(total(scraped, 'medallion_event_loop_delay_seconds_count')).toBeGreaterThan(0);
    expect(scraped.types.get('medallion_derive_events_total')).toBe('counter');

    // The service applied the graph's schema before it started the child: the child skips that
    // step (its backfill scans ran twice per start) and its projector still writes the graph.
    const child = childOf(apiPid) as number;
    expect(fs.readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0')).toContain('--graph-schema-applied');
    await eventually(async () => {
      const g = await gqlOk<{ graphFacts: unknown[] }>(url, adminToken, `query($ns: String!) { graphFacts(where: { namespace: { eq: $ns } }) { id } }`, {
        ns,
      });
      return g.graphFacts.length > 0;
    }, 'the derived facts in the graph');
  });

  it('a worker process started again after a crash leaves DATA_DIR/instance.json to the service (the CLI finds the service)', async () => {
    const [first] = await derivingPids(db.url, ns);
    const started = () => service.output.join('').split('worker process running').length - 1;
    const before = started();
    process.kill(first as number, 'SIGKILL');
    // The new child runs its workers (and has started its stores) before it says so.
    await eventually(async () => started() > before, 'the worker process to be started again', 60_000);
    const state = readInstanceState(dataDir);
    expect(state).toMatchObject({ pid: service.child.pid, command: 'serve', api: url });
    expect(state?.stoppedAt).toBeUndefined();
  });

  it('the worker process stops when the service is killed', async () => {
    const child = childOf(service.child.pid as number);
    expect(child).toBeDefined();
    await service.kill('SIGKILL');
    // Its IPC channel closes with the service: it stops itself.
    await eventually(async () => parentOf(child as number) === null, 'the orphaned worker process to exit', 30_000);
  });
});
