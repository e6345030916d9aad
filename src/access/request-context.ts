import { AuthContext } from './auth-context';

/** The caller's grants as they are now (re-read every few seconds on a long-lived connection). */
export type CurrentAuth = () => Promise<AuthContext>;

/**
 * What a resolver receives as its context, by the slice of the request scope it reads: `S` the
 * services, `L` the per-operation loaders. Each layer names its slice (`silver/silver.context.ts`,
 * …) with types of its own or lower layers; the request scope (scope/request-scope.ts), which every
 * transport builds, is checked there to satisfy every slice.
 */
export interface RequestContextOf<S, L = object> {
  readonly auth: AuthContext;
  readonly services: S;
  readonly loaders: L;
  /**
   * For long-lived operations (subscriptions): the caller's grants as they are now, so a revoked or
   * expired token stops receiving. Requests use `auth`.
   */
  readonly currentAuth: CurrentAuth;
}
