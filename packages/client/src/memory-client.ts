import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import { fromGraphQLErrors, MemoryClientError, type GraphQLErrorPayload } from './errors.ts';
import {
  IngestEventsDocument,
  ListFactsDocument,
  OnFactAddedDocument,
  SearchMemoryDocument,
  type EventInput,
  type FactFieldsFragment,
  type IngestEventsMutation,
  type SearchFilter,
  type SearchMemoryQuery,
} from './generated/graphql.ts';
import { DEFAULT_RETRY, withRetry, type RetryOptions } from './retry.ts';
import { openSubscription, type MemorySubscription } from './subscriptions.ts';

/** The part of `fetch` the client uses: Node's and the browsers' `fetch` fit it. */
export type FetchLike = (
  url: string,
  init: { method: 'POST'; headers: Record<string, string>; body: string },
) => Promise<{ status: number; headers: { get(name: string): string | null }; text(): Promise<string> }>;

export interface MemoryClientOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:4000` (the client adds `/graphql`). */
  url: string;
  /** An API token (`createToken`); sent as `Authorization: Bearer <token>`. */
  token: string;
  /** Retries for `ingest` (queries and other mutations are sent once). */
  retry?: Partial<RetryOptions>;
  /** Another fetch (a proxy agent, a test double). Default: the global `fetch`. */
  fetch?: FetchLike;
  /**
   * A WebSocket constructor for subscriptions. Default: the global `WebSocket` when there is one
   * (Node 22+, browsers), else the `ws` package (installed with this one).
   */
  webSocketImpl?: unknown;
  /**
   * Writes the request body. Default: `JSON.stringify`. Pass a lossless serialiser (for example
   * lossless-json's `stringify`) to send integers beyond 2^53 in `rawPayload` digit for digit:
   * the service stores them exactly.
   */
  stringify?: (body: { query: string; variables: unknown }) => string;
}

/** A query's or mutation's variables argument: optional exactly when the operation has no required variables. */
export type VariablesArg<V> = Record<string, never> extends V ? [variables?: V] : [variables: V];

/** One item's outcome in `ingest`, in input order: CREATED, DUPLICATE (already stored) or REJECTED with a code. */
export type IngestResult = IngestEventsMutation['ingestEvents'][number];
/** One `search` hit: a fact (with its evidence) or a raw event. */
export type SearchHit = SearchMemoryQuery['searchMemory'][number];

export interface SearchOptions {
  limit?: number;
  /** Answer as the memory stood at this time (ISO-8601). */
  asOf?: string;
  filter?: SearchFilter;
}

export interface WaitForFactOptions {
  /** Give up after this long with a MemoryClientError (code `UNKNOWN`). Default 60 s. */
  timeoutMs?: number;
  /** How often to re-read `facts` besides listening to `factAdded`. Default 2 s. */
  pollMs?: number;
}

type GraphQLBody<T> = { data?: T | null; errors?: GraphQLErrorPayload[] };

/**
 * A typed client for the memory service. Pass any document from this package (or your own
 * `TypedDocumentNode`) to `request` or `subscribe` and get its typed result; `ingest`, `search` and
 * `waitForFact` are the calls an agent needs most. Every failure is a MemoryClientError carrying
 * the service's `extensions.code`. Call `close()` when done if you used subscriptions.
 */
export class MemoryClient {
  private readonly endpoint: string;
  private readonly retry: RetryOptions;
  private ws: Promise<Client> | undefined;

  constructor(private readonly opts: MemoryClientOptions) {
    this.endpoint = `${opts.url.replace(/\/+$/, '')}/graphql`;
    this.retry = { ...DEFAULT_RETRY, ...opts.retry };
  }

  /** Runs one query or mutation, once. Throws MemoryClientError on any error. */
  async request<TResult, TVariables>(document: TypedDocumentNode<TResult, TVariables>, ...[variables]: VariablesArg<TVariables>): Promise<TResult> {
    const fetchImpl = this.opts.fetch ?? (globalThis as { fetch?: FetchLike }).fetch;
    if (!fetchImpl) throw new MemoryClientError('no global fetch (Node < 18?): pass `fetch` in the MemoryClient options', 'NETWORK_ERROR');
    let res: Awaited<ReturnType<FetchLike>>;
    let text: string;
    try {
      res = await fetchImpl(this.endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json, application/json',
          authorization: `Bearer ${this.opts.token}`,
        },
        body: (this.opts.stringify ?? JSON.stringify)({ query: print(document), variables: variables ?? {} }),
      });
      text = await res.text();
    } catch (err) {
      const cause = (err as { cause?: { code?: unknown } })?.cause?.code;
      throw new MemoryClientError(`cannot reach ${this.endpoint}${typeof cause === 'string' ? ` (${cause})` : ''}`, 'NETWORK_ERROR', { cause: err });
    }
    let body: GraphQLBody<TResult> | undefined;
    try {
      body = JSON.parse(text) as GraphQLBody<TResult>;
    } catch {
      body = undefined;
    }
    if (body?.errors?.length) throw fromGraphQLErrors(body.errors, res.status);
    if (body?.data === undefined || body.data === null) {
      const retryAfter = Number(res.headers.get('retry-after'));
      throw new MemoryClientError(`HTTP ${res.status} from ${this.endpoint} without GraphQL data`, 'HTTP_ERROR', {
        status: res.status,
        retryAfterMs: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined,
      });
    }
    return body.data;
  }

  /**
   * Stores events, retrying transient failures (network, 5xx, 429) with exponential backoff.
   * Safe to retry: (namespace, source, sourceEventId) identifies an event, so an event the
   * service stored before the connection dropped comes back as DUPLICATE, never twice.
   * Per-item problems are REJECTED results, not errors.
   */
  async ingest(events: EventInput | ReadonlyArray<EventInput>, opts: { retry?: Partial<RetryOptions> } = {}): Promise<IngestResult[]> {
    const input = Array.isArray(events) ? [...events] : [events as EventInput];
    const data = await withRetry(
      () => this.request(IngestEventsDocument, { input }),
      { ...this.retry, ...opts.retry },
      (err) => MemoryClientError.is(err) && err.retryable,
      (err) => (MemoryClientError.is(err) ? err.retryAfterMs : undefined),
    );
    return data.ingestEvents;
  }

  /** Searches a namespace's memory (facts and raw events), best first. */
  async search(namespace: string, query: string, opts: SearchOptions = {}): Promise<SearchHit[]> {
    return (await this.request(SearchMemoryDocument, { namespace, query, ...opts })).searchMemory;
  }

  /**
   * Starts a subscription (e.g. OnFactAddedDocument) over graphql-ws on the same URL and token.
   * Events published before the service has registered it are not replayed: read the current
   * state after subscribing (as `waitForFact` does) when that matters.
   */
  subscribe<TResult, TVariables>(document: TypedDocumentNode<TResult, TVariables>, ...[variables]: VariablesArg<TVariables>): MemorySubscription<TResult> {
    return openSubscription<TResult>(this.wsClient(), { query: print(document), variables: (variables ?? {}) as Record<string, unknown> });
  }

  /**
   * Resolves with the first fact in `namespace`, already there or derived later, for which
   * `match` is true: listens to `factAdded` and re-reads `facts` every `pollMs` meanwhile.
   */
  async waitForFact(namespace: string, match: (fact: FactFieldsFragment) => boolean, opts: WaitForFactOptions = {}): Promise<FactFieldsFragment> {
    const timeoutMs = opts.timeoutMs ?? 60_000;
    const deadline = Date.now() + timeoutMs;
    const sub = this.subscribe(OnFactAddedDocument, { namespace });
    let found: FactFieldsFragment | undefined;
    let wake = (): void => undefined;
    void (async () => {
      try {
        for await (const event of sub) {
          if (match(event.factAdded)) {
            found ??= event.factAdded;
            return wake();
          }
        }
      } catch {
        // Without the socket, polling still finds the fact.
      }
    })();
    try {
      while (!found) {
        const listed = await this.findFact(namespace, match);
        if (listed) return (found ??= listed);
        if (Date.now() >= deadline) throw new MemoryClientError(`no matching fact in ${namespace} after ${timeoutMs} ms`, 'UNKNOWN');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(opts.pollMs ?? 2000, Math.max(0, deadline - Date.now())));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      return found;
    } finally {
      await sub.close();
    }
  }

  /** Closes the subscription socket, if one was opened. */
  async close(): Promise<void> {
    const ws = this.ws;
    this.ws = undefined;
    if (ws) await (await ws.catch(() => undefined))?.dispose();
  }

  private async findFact(namespace: string, match: (fact: FactFieldsFragment) => boolean): Promise<FactFieldsFragment | undefined> {
    let after: string | undefined;
    for (;;) {
      const page = (await this.request(ListFactsDocument, { namespace, first: 100, after })).facts;
      const hit = page.edges.find((e) => match(e.node));
      if (hit) return hit.node;
      if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) return undefined;
      after = page.pageInfo.endCursor;
    }
  }

  private wsClient(): Promise<Client> {
    this.ws ??= this.webSocketImpl().then((webSocketImpl) =>
      createClient({
        url: this.endpoint.replace(/^http/, 'ws'),
        webSocketImpl,
        connectionParams: { authorization: `Bearer ${this.opts.token}` },
        lazy: true,
        retryAttempts: 3,
      }),
    );
    return this.ws;
  }

  private async webSocketImpl(): Promise<unknown> {
    if (this.opts.webSocketImpl) return this.opts.webSocketImpl;
    const global = (globalThis as { WebSocket?: unknown }).WebSocket;
    if (global) return global;
    // require in the CommonJS build (and under test runners without ESM), import() in the ESM one.
    const ws = (
      typeof require === 'function'
        ? // eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
          require('ws')
        : await import('ws')
    ) as { WebSocket?: unknown; default?: unknown };
    return ws.WebSocket ?? ws.default;
  }
}
