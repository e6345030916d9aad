import { Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';

export interface Received<T> {
  next: T[];
  errors: unknown[];
  done: boolean;
}

/** A graphql-ws client as an agent would open it, with the token in connectionParams. */
export function wsClient(httpUrl: string, token: string | undefined): Client {
  return createClient({
    url: httpUrl.replace(/^http/, 'ws') + '/graphql',
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: true,
  });
}

/** Subscribes and collects what arrives; `ready` resolves once the server has acknowledged. */
export function collect<T>(client: Client, query: string, variables: Record<string, unknown>): { received: Received<T>; ready: Promise<void>; stop(): void } {
  const received: Received<T> = { next: [], errors: [], done: false };
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((r) => (markReady = r));
  const off = client.on('connected', () => setTimeout(markReady, 100));
  const stop = client.subscribe<T>(
    { query, variables },
    {
      next: (v) => {
        if (v.errors) received.errors.push(...v.errors);
        if (v.data) received.next.push(v.data as T);
      },
      error: (e) => {
        received.errors.push(e);
        markReady();
      },
      complete: () => {
        received.done = true;
        markReady();
      },
    },
  );
  return { received, ready: ready.then(() => off()), stop };
}
