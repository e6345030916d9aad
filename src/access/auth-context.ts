import { patternMatches } from '../common/namespace';
import { AccessException, AccessExceptionCode } from './access.exception';
import { Capability, capabilityGrants } from './capability';

export interface Grant {
  readonly namespacePattern: string;
  readonly capabilities: readonly Capability[];
}

export interface Principal {
  readonly tokenId: string;
  readonly principalId: string;
  readonly name: string;
  readonly grants: readonly Grant[];
  /** When the token stops being valid (null: never); long-lived connections close then (TokenRevocations). */
  readonly expiresAt?: Date | null;
}

/** Who is calling and what they may do; built once per request or websocket connection. */
export class AuthContext {
  /** The token secret the caller presented: kept out of enumerable fields so it is never logged or serialised. */
  readonly #secret: string | undefined;

  private constructor(
    readonly principal: Principal | undefined,
    secret: string | undefined,
  ) {
    this.#secret = secret;
  }

  static anonymous(): AuthContext {
    return new AuthContext(undefined, undefined);
  }

  /** `secret`: the token the caller presented, for the database functions that prove who acts (docs/approvals.md). */
  static of(principal: Principal, secret?: string): AuthContext {
    return new AuthContext(principal, secret);
  }

  /**
   * The caller's token secret. Writes to `access` (tokens, approval requests and decisions) pass it
   * to the owner's SECURITY DEFINER functions, which hash it themselves: the runtime role, which
   * can read every stored hash, cannot act as a principal without its secret.
   */
  credential(): string {
    this.requirePrincipal();
    if (this.#secret === undefined) {
      throw new AccessException(AccessExceptionCode.UNAUTHENTICATED, 'this operation needs the API token itself: send "Authorization: Bearer <token>"');
    }
    return this.#secret;
  }

  get isAuthenticated(): boolean {
    return this.principal !== undefined;
  }

  can(capability: Capability, namespace: string): boolean {
    return (
      this.principal?.grants.some((g) => patternMatches(g.namespacePattern, namespace) && g.capabilities.some((c) => capabilityGrants(c, capability))) ?? false
    );
  }

  /** The principal, or UNAUTHENTICATED. */
  requirePrincipal(): Principal {
    if (!this.principal) {
      throw new AccessException(
        AccessExceptionCode.UNAUTHENTICATED,
        'missing or invalid API token: send "Authorization: Bearer <token>" (graphql-ws: connectionParams.authorization)',
      );
    }
    return this.principal;
  }

  /** Throws UNAUTHENTICATED or FORBIDDEN unless the caller holds `capability` on `namespace`. */
  require(capability: Capability, namespace: string): Principal {
    const principal = this.requirePrincipal();
    if (!this.can(capability, namespace)) {
      throw new AccessException(
        AccessExceptionCode.FORBIDDEN,
        `token "${principal.name}" lacks the "${capability}" capability on namespace "${namespace}"; ask an admin for a grant`,
      );
    }
    return principal;
  }
}
