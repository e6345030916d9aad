import { Client } from 'pg';

export type NotificationHandler = (payload: string) => void;

/**
 * One dedicated Postgres connection that LISTENs on channels and fans notifications out to
 * in-process handlers. Writers publish with `pg_notify` inside their own transaction, so a
 * notification is delivered only if the write commits, to every process listening (API and
 * workers alike). Reconnects with backoff when the connection drops: one attempt at a time,
 * whatever the failed attempt's client emits (a refused connection ends its client too, which
 * used to schedule a second retry beside the first: attempts doubled every round, ~100,000 log
 * lines and a process deaf to SIGTERM after a few minutes without PostgreSQL).
 */
export class PgListener {
  private client: Client | undefined;
  private readonly handlers = new Map<string, Set<NotificationHandler>>();
  private closed = false;
  private reconnectDelay = 250;
  private retry: NodeJS.Timeout | undefined;
  /** Connection attempts after the first (how many times the listener tried to reconnect). */
  reconnectAttempts = 0;

  constructor(
    private readonly url: string,
    private readonly log: (msg: string) => void = () => undefined,
  ) {}

  async start(): Promise<void> {
    await this.connect();
  }

  async on(channel: string, handler: NotificationHandler): Promise<() => void> {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`invalid channel name ${channel}`);
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
      await this.client?.query(`LISTEN ${channel}`);
    }
    set.add(handler);
    return () => set?.delete(handler);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.url, application_name: 'medallion-listener' });
    client.on('notification', (msg) => {
      const set = this.handlers.get(msg.channel);
      if (!set || msg.payload === undefined) return;
      for (const h of set) {
        try {
          h(msg.payload);
        } catch (err) {
          this.log(`notification handler failed on ${msg.channel}: ${String(err)}`);
        }
      }
    });
    client.on('error', (err) => {
      this.log(`listener connection error: ${err.message}`);
    });
    // Only the live connection's end starts a reconnect: a client whose connect or LISTEN failed
    // ends too, and its attempt already schedules the next one.
    client.on('end', () => {
      if (this.closed || this.client !== client) return;
      this.client = undefined;
      this.log(`listener connection ended; reconnecting in ${this.reconnectDelay} ms`);
      this.scheduleReconnect();
    });
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${channel}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    this.client = client;
    this.reconnectDelay = 250;
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.reconnect();
    }, this.reconnectDelay);
    this.retry.unref();
  }

  private async reconnect(): Promise<void> {
    if (this.closed) return;
    this.reconnectAttempts++;
    try {
      await this.connect();
    } catch (err) {
      this.reconnectDelay = Math.min(this.reconnectDelay * 2, 10_000);
      this.log(`listener reconnect failed: ${String(err)}; next try in ${this.reconnectDelay} ms`);
      this.scheduleReconnect();
    }
  }
}
