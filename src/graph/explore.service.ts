import { Driver } from 'neo4j-driver';
import { AuthContext } from '../access/auth-context';
import { AccessException, AccessExceptionCode } from '../access/access.exception';
import { Capability } from '../access/capability';

export interface ExploreSettings {
  /** Neo4j transaction timeout for one generated exploration query, in ms. */
  queryTimeoutMs: number;
}

export const DEFAULT_EXPLORE_SETTINGS: ExploreSettings = { queryTimeoutMs: 5_000 };

/**
 * What the generated exploration API needs per request: the Neo4j driver it runs on and the
 * namespaces the caller may list. Grants are patterns (`team-a/*`), while @neo4j/graphql's
 * authorization filters compare against a list, so prefix grants are expanded against the
 * namespaces that exist (every namespace with an event has a watermark row).
 */
export class ExploreService {
  constructor(
    readonly driver: Driver,
    /** Every namespace that exists (each with an event has a watermark row): EventQueryRepository.namespaces. */
    private readonly knownNamespaces: () => Promise<string[]>,
    readonly settings: ExploreSettings = DEFAULT_EXPLORE_SETTINGS,
    /** Called for every generated root field that is about to run against Neo4j. */
    readonly onQuery: (field: string) => void = () => undefined,
  ) {}

  /**
   * The namespaces a caller may explore: UNAUTHENTICATED without a token, FORBIDDEN unless it
   * holds `list` somewhere.
   */
  async explorableNamespaces(auth: AuthContext): Promise<string[]> {
    const principal = auth.requirePrincipal();
    const namespaces = await this.listableNamespaces(auth);
    if (namespaces.length === 0) {
      throw new AccessException(
        AccessExceptionCode.FORBIDDEN,
        `token "${principal.name}" lacks the "list" capability on every namespace, which graph exploration needs; ask an admin for a grant`,
      );
    }
    return namespaces;
  }

  /** Namespaces where the caller holds `list` (sorted); empty when it holds none. */
  async listableNamespaces(auth: AuthContext): Promise<string[]> {
    const principal = auth.requirePrincipal();
    const patterns = principal.grants.map((g) => g.namespacePattern);
    const exact = patterns.filter((p) => !p.endsWith('*') && auth.can(Capability.LIST, p));
    const hasPrefixGrant = principal.grants.some((g) => g.namespacePattern.endsWith('*'));
    const known = hasPrefixGrant ? await this.knownNamespaces() : [];
    return [...new Set([...exact, ...known.filter((ns) => auth.can(Capability.LIST, ns))])].sort();
  }
}
