import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../common/config';
import { createLogger } from '../common/logger';
import { liveInstance, previousPorts, readInstanceState, writeInstanceState } from '../platform/local-services/instance-state';
import { recordInstance, refuseSecondInstance, serviceUrl, storesForCommand } from './instance';

/** DATA_DIR/instance.json as the CLI reads it: no store is started here (a live service is simulated by this test's parent process). */
describe('the instance of DATA_DIR', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-instance-'));
    fs.writeFileSync(path.join(dir, 'pg.password'), 'owner pw\n', { mode: 0o600 });
    fs.writeFileSync(path.join(dir, 'pg.runtime.password'), 'runtime-pw\n', { mode: 0o600 });
    fs.writeFileSync(path.join(dir, 'neo4j.password'), 'graph-pw\n', { mode: 0o600 });
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const embedded = () => ({
    postgres: {
      embedded: true as const,
      port: 45001,
      user: 'medallion',
      runtimeUser: 'medallion_runtime',
      database: 'postgres',
      passwordFile: path.join(dir, 'pg.password'),
      runtimePasswordFile: path.join(dir, 'pg.runtime.password'),
    },
    neo4j: { embedded: true as const, uri: 'bolt://127.0.0.1:45002', user: 'neo4j', passwordFile: path.join(dir, 'neo4j.password') },
  });
  /** A running `serve` (the jest worker's parent: alive, and not this process). */
  const serving = () =>
    writeInstanceState(dir, {
      version: 1,
      pid: process.ppid,
      command: 'serve',
      startedAt: new Date().toISOString(),
      api: 'http://127.0.0.1:45003',
      ...embedded(),
    });

  it('a command of a running service uses its stores and API, with the passwords read from their files, and starts nothing', async () => {
    serving();
    const config = loadConfig({ DATA_DIR: dir });
    const stores = await storesForCommand(config, createLogger('silent'), 'export', { neo4j: true });
    expect(stores).toMatchObject({
      postgresUrl: 'postgres://medallion:owner%20pw@127.0.0.1:45001/postgres',
      postgresRuntimeUrl: 'postgres://medallion_runtime:runtime-pw@127.0.0.1:45001/postgres',
      neo4j: { uri: 'bolt://127.0.0.1:45002', user: 'neo4j', password: 'graph-pw' },
      service: { command: 'serve', pid: process.ppid },
    });
    expect(serviceUrl(config)).toBe('http://127.0.0.1:45003');
    // No secret in the file.
    expect(fs.readFileSync(path.join(dir, 'instance.json'), 'utf8')).not.toMatch(/owner pw|runtime-pw|graph-pw/);
  });

  it('a second serve on the same embedded stores is refused with who holds them; another command holding them makes a command wait', async () => {
    serving();
    expect(() => refuseSecondInstance(loadConfig({ DATA_DIR: dir }), 'serve')).toThrow(
      /already in use by `medallion serve` \(pid \d+, serving http:\/\/127.0.0.1:45003\)/,
    );
    writeInstanceState(dir, { version: 1, pid: process.ppid, command: 'import', startedAt: new Date().toISOString(), ...embedded() });
    await expect(storesForCommand(loadConfig({ DATA_DIR: dir }), createLogger('silent'), 'export', { neo4j: false })).rejects.toThrow(
      /in use by `medallion import` \(pid \d+\), which started the stores for itself: wait until it ends/,
    );
  });

  it('a stopped or killed service is not running, and its ports are kept for the next start, Neo4j\u2019s too after a command that started PostgreSQL alone', () => {
    writeInstanceState(dir, { version: 1, pid: process.ppid, command: 'serve', startedAt: 'x', stoppedAt: 'y', ...embedded() });
    expect(liveInstance(dir)).toBeUndefined();
    writeInstanceState(dir, { version: 1, pid: 2 ** 22 + 1, command: 'serve', startedAt: 'x', ...embedded() });
    expect(liveInstance(dir)).toBeUndefined();
    expect(previousPorts(dir)).toEqual({ postgres: 45001, neo4j: 45002 });
    // `verify` with no service: PostgreSQL alone, on a new port; Neo4j's port is remembered still.
    recordInstance(dir, 'verify', { postgres: { ...embedded().postgres, port: 45010 } });
    expect(readInstanceState(dir)).toMatchObject({ command: 'verify', pid: process.pid });
    expect(previousPorts(dir)).toEqual({ postgres: 45010, neo4j: 45002 });
  });
});
