/**
 * The GraphQL side of the request scope. The scope itself (services, loaders, auth) is
 * transport-neutral and lives in scope/request-scope.ts, shared with the MCP server; this module
 * keeps the names the resolvers and older imports use.
 */
export type { Loaders, RequestScope, Services } from '../scope/request-scope';
export { createLoaders, createRequestScope as createRequestContext, recheckingAuth, scopeFor as contextFor } from '../scope/request-scope';
import type { RequestScope } from '../scope/request-scope';

/** What every resolver receives as its context: the request scope. */
export type RequestContext = RequestScope;
