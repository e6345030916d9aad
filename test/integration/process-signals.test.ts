import { createTestDatabase } from '../support/stores';
import { eventually } from '../support/test-app';
import { spawnService, WorkerProcess } from '../support/worker-process';

/** Log lines at warn (40) or above, as pino writes them. */
const complaints = (output: string[]) =>
  output
    .join('')
    .split('\n')
    .filter((l) => /"level":(4|5|6)0/.test(l));

describe('the service stops cleanly on SIGTERM', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  const running: WorkerProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    for (const p of running) await p.kill();
    await db.drop();
  });

  it.each(['serve', 'worker'] as const)('%s: one SIGTERM drains and exits 0, with no warnings and no second shutdown', async (command) => {
    const p = spawnService(command, db.url, { PORT: '0' });
    running.push(p);
    const ready = command === 'serve' ? /serving GraphQL/ : /background workers running/;
    await eventually(async () => ready.test(p.output.join('')), `${command} to start`, 90_000);
    const code = await p.kill('SIGTERM');
    const log = p.output.join('');
    expect(code).toBe(0);
    expect(log.match(/"msg":"shutting down"/g)).toHaveLength(1);
    expect(complaints(p.output)).toEqual([]);
  });
});
