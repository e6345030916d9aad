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
}

/** Who is calling and what they may do; built once per request or websocket connection. */
export class AuthContext {
  private constructor(readonly principal: Principal | undefined) {}

  static anonymous(): AuthContext {
    return new AuthContext(undefined);
  }

  static of(principal: Principal): AuthContext {
    return new AuthContext(principal);
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
