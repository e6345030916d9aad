import net from 'node:net';
import { Client } from 'pg';
import { PgListener } from '../../src/platform/pubsub/pg-listener';
import { testStores } from '../support/stores';
import { eventually } from '../support/test-app';

/**
 * A TCP hop in front of the real PostgreSQL that can be cut (every open connection closed, every
 * new one closed at once, as a stopped server's port does) and restored. Counts the connections
 * it was asked for.
 */
async function cuttableProxy(target: URL): Promise<{ url: string; attempts: () => number; cut: () => void; restore: () => void; close: () => Promise<void> }> {
  let down = false;
  let attempts = 0;
  const open = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    attempts++;
    if (down) return void inbound.destroy();
    const outbound = net.connect(Number(target.port), target.hostname);
    open.add(inbound).add(outbound);
    inbound.pipe(outbound).pipe(inbound);
    const drop = () => {
      inbound.destroy();
      outbound.destroy();
      open.delete(inbound);
      open.delete(outbound);
    };
    inbound.on('error', drop).on('close', drop);
    outbound.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target.toString());
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    attempts: () => attempts,
    cut: () => {
      down = true;
      for (const s of open) s.destroy();
    },
    restore: () => {
      down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('the LISTEN connection across a PostgreSQL outage', () => {
  it('retries one attempt at a time with backoff, and after the outage delivers each notification once', async () => {
    const pgUrl = new URL(testStores().postgresAdminUrl);
    const proxy = await cuttableProxy(pgUrl);
    const lines: string[] = [];
    const listener = new PgListener(proxy.url, (m) => lines.push(m));
    const direct = new Client({ connectionString: pgUrl.toString() });
    await direct.connect();
    try {
      await listener.start();
      const got: string[] = [];
      await listener.on('listener_outage_test', (p) => got.push(p));
      await direct.query(`SELECT pg_notify('listener_outage_test', 'before')`);
      await eventually(async () => got.includes('before'), 'the first notification', 10_000);

      proxy.cut();
      const atCut = proxy.attempts();
      // 6 s without PostgreSQL: backoff 250, 500, 1,000, 2,000, 4,000 ms allows 4-5 attempts; a
      // retry scheduled twice per failure doubles them every round (31 and more).
      await new Promise((r) => setTimeout(r, 6_000));
      const during = proxy.attempts() - atCut;
      expect(during).toBeGreaterThanOrEqual(3);
      expect(during).toBeLessThanOrEqual(6);
      expect(listener.reconnectAttempts).toBe(during);

      proxy.restore();
      // The next attempt (≤ 8 s away) connects and LISTENs again; notifications sent meanwhile are lost by design.
      await eventually(
        async () => {
          await direct.query(`SELECT pg_notify('listener_outage_test', 'after')`);
          return got.includes('after');
        },
        'a notification after the outage',
        20_000,
      );
      const afterRestore = proxy.attempts();
      await direct.query(`SELECT pg_notify('listener_outage_test', 'once')`);
      await new Promise((r) => setTimeout(r, 1_000));
      // One connection listens: each notification reaches the handler once.
      expect(got.filter((p) => p === 'once')).toEqual(['once']);
      // No stray attempt keeps running once connected.
      await new Promise((r) => setTimeout(r, 3_000));
      expect(proxy.attempts()).toBe(afterRestore);
      expect(lines.filter((l) => l.startsWith('listener connection ended')).length).toBe(1);
    } finally {
      await listener.close();
      await direct.end();
      await proxy.close();
    }
  }, 60_000);
});
