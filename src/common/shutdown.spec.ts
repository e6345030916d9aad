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
});
