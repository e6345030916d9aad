import { runShutdown } from './shutdown';

describe('runShutdown', () => {
  it('logs what it waits for before each step, how long each took, and goes on after a failure', async () => {
    const lines: string[] = [];
    const log = {
      info: (fields: object, msg: string) => void lines.push(msg),
      error: (fields: object, msg: string) => void lines.push(msg),
    };
    const ran: string[] = [];
    await runShutdown(
      [
        { what: 'HTTP server', run: async () => void ran.push('http') },
        {
          what: 'jobs loop',
          run: async () => {
            throw new Error('boom');
          },
        },
        { what: 'PostgreSQL pool', run: async () => void ran.push('pg') },
      ],
      log as unknown as Parameters<typeof runShutdown>[1],
    );
    expect(ran).toEqual(['http', 'pg']);
    expect(lines).toEqual([
      'shutdown: waiting for HTTP server',
      'shutdown: HTTP server stopped',
      'shutdown: waiting for jobs loop',
      'shutdown: stopping jobs loop failed',
      'shutdown: waiting for PostgreSQL pool',
      'shutdown: PostgreSQL pool stopped',
      'shutdown: done',
    ]);
  });

  it('starts the steps of a group together, logs each, and goes on once all of them stopped', async () => {
    const lines: string[] = [];
    const log = {
      info: (fields: object, msg: string) => void lines.push(msg),
      error: (fields: object, msg: string) => void lines.push(msg),
    };
    // The local Neo4j finishes only once the embedded PostgreSQL has started stopping: in order, it never would.
    let pgStarted: () => void = () => undefined;
    const pgStarting = new Promise<void>((resolve) => (pgStarted = resolve));
    await runShutdown(
      [
        { what: 'PostgreSQL pool', run: async () => undefined },
        [
          { what: 'local Neo4j', run: () => pgStarting },
          { what: 'embedded PostgreSQL', run: async () => pgStarted() },
        ],
        { what: 'last', run: async () => undefined },
      ],
      log as unknown as Parameters<typeof runShutdown>[1],
    );
    expect(lines.slice(0, 4)).toEqual([
      'shutdown: waiting for PostgreSQL pool',
      'shutdown: PostgreSQL pool stopped',
      'shutdown: waiting for local Neo4j',
      'shutdown: waiting for embedded PostgreSQL',
    ]);
    expect(lines.slice(4, 6).sort()).toEqual(['shutdown: embedded PostgreSQL stopped', 'shutdown: local Neo4j stopped']);
    expect(lines.slice(6)).toEqual(['shutdown: waiting for last', 'shutdown: last stopped', 'shutdown: done']);
  });
});
