import type { Client } from 'graphql-ws';
import { fromGraphQLErrors, MemoryClientError, type GraphQLErrorPayload } from './errors.ts';

/**
 * A running subscription: iterate it with `for await`, and `close()` it (or `break` out of the
 * loop) when done. A GraphQL error from the service ends it with a MemoryClientError.
 */
export interface MemorySubscription<T> extends AsyncIterable<T> {
  next(): Promise<IteratorResult<T, undefined>>;
  return(): Promise<IteratorResult<T, undefined>>;
  /** Stops the subscription; a pending `next()` resolves as done. */
  close(): Promise<void>;
  [Symbol.asyncIterator](): MemorySubscription<T>;
}

// graphql-ws ends an iteration with a GraphQL error list, a CloseEvent-like object or an Error.
function toClientError(err: unknown): MemoryClientError {
  if (MemoryClientError.is(err)) return err;
  if (Array.isArray(err)) return fromGraphQLErrors(err as GraphQLErrorPayload[], undefined);
  const close = err as { code?: unknown; reason?: unknown } | null;
  if (close && typeof close.code === 'number') {
    // 4401/4403 are graphql-ws's close codes for a refused connection.
    const code = close.code === 4401 ? 'UNAUTHENTICATED' : close.code === 4403 ? 'FORBIDDEN' : 'NETWORK_ERROR';
    return new MemoryClientError(`subscription socket closed (${close.code}${close.reason ? `: ${String(close.reason)}` : ''})`, code, { cause: err });
  }
  return new MemoryClientError(`subscription failed: ${(err as Error)?.message ?? String(err)}`, 'NETWORK_ERROR', { cause: err });
}

/** What graphql-ws yields: one `next` payload as the service formatted it. */
type WsResult = { data?: unknown; errors?: ReadonlyArray<unknown> | null };

const DONE: IteratorResult<never, undefined> = { done: true, value: undefined };

/** Wraps graphql-ws's iterator (opened once `client` resolves) into a typed MemorySubscription. */
export function openSubscription<T>(client: Promise<Client>, payload: { query: string; variables: Record<string, unknown> }): MemorySubscription<T> {
  let closed = false;
  const inner: Promise<AsyncIterableIterator<WsResult>> = client.then((c) => c.iterate(payload));
  // A rejection is reported by next(); until someone calls it, do not let it go unhandled.
  inner.catch(() => undefined);

  const sub: MemorySubscription<T> = {
    async next() {
      if (closed) return DONE;
      let result: IteratorResult<WsResult>;
      try {
        result = await (await inner).next();
      } catch (err) {
        await sub.close();
        throw toClientError(err);
      }
      if (result.done || closed) return DONE;
      if (result.value.errors?.length) {
        await sub.close();
        throw fromGraphQLErrors(result.value.errors as unknown as GraphQLErrorPayload[], undefined);
      }
      return { done: false, value: result.value.data as T };
    },
    async return() {
      await sub.close();
      return DONE;
    },
    async close() {
      if (closed) return;
      closed = true;
      const it = await inner.catch(() => undefined);
      await it?.return?.();
    },
    [Symbol.asyncIterator]() {
      return sub;
    },
  };
  return sub;
}
