/**
 * @medallion-memory/client: the typed client for the medallion memory service. `MemoryClient`
 * runs queries, mutations and subscriptions; the `*Document` exports are the service's operations
 * with their result and variable types (generated from schema.graphql by `npm run codegen`).
 */
export { MemoryClient } from './memory-client.ts';
export type { FetchLike, IngestResult, MemoryClientOptions, SearchHit, SearchOptions, VariablesArg, WaitForFactOptions } from './memory-client.ts';
export { MemoryClientError } from './errors.ts';
export type { GraphQLErrorPayload, MemoryClientErrorDetails, MemoryErrorCode, ServerErrorCode } from './errors.ts';
export { backoffDelay, DEFAULT_RETRY } from './retry.ts';
export type { RetryOptions } from './retry.ts';
export type { MemorySubscription } from './subscriptions.ts';
export * from './generated/graphql.ts';
