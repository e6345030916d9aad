import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { BronzeException, BronzeExceptionCode } from '../bronze/bronze.exception';
import { decodeCursor, encodeCursor } from '../common/cursor';
import { FactRepository } from './fact.repository';
import { Entity, Fact, FactFilter } from './silver.types';

export interface Page<T> {
  edges: Array<{ cursor: string; node: T }>;
  hasNextPage: boolean;
  endCursor: string | null;
}

/** Silver reads on behalf of a caller: `read` for lookups by id (null when outside the grants), `list` for listings. */
export class SilverReadService {
  constructor(
    private readonly facts: FactRepository,
    private readonly maxPageSize: number,
  ) {}

  visible<T extends { namespace: string }>(auth: AuthContext, row: T | null | undefined): T | null {
    auth.requirePrincipal();
    return row && auth.can(Capability.READ, row.namespace) ? row : null;
  }

  private pageSize(first: number | null | undefined): number {
    const size = first ?? 50;
    if (!Number.isInteger(size) || size < 1 || size > this.maxPageSize) {
      throw new BronzeException(BronzeExceptionCode.INVALID_ARGUMENT, `first must be between 1 and ${this.maxPageSize} (MAX_PAGE_SIZE)`);
    }
    return size;
  }

  async listFacts(
    auth: AuthContext,
    namespace: string,
    filter: FactFilter,
    asOf: Date | null,
    includeRetired: boolean,
    first: number | null | undefined,
    after: string | null | undefined,
  ): Promise<Page<Fact>> {
    auth.require(Capability.LIST, namespace);
    const size = this.pageSize(first);
    const rows = await this.facts.list(namespace, filter, asOf, includeRetired, size + 1, after ? decodeCursor(after) : undefined);
    const edges = rows.slice(0, size).map((r) => ({ cursor: encodeCursor(r.position), node: r.fact }));
    return { edges, hasNextPage: rows.length > size, endCursor: edges.at(-1)?.cursor ?? null };
  }

  async listEntities(
    auth: AuthContext,
    namespace: string,
    type: string | null,
    nameContains: string | null,
    first: number | null | undefined,
    after: string | null | undefined,
  ): Promise<Page<Entity>> {
    auth.require(Capability.LIST, namespace);
    const size = this.pageSize(first);
    const rows = await this.facts.listEntities(namespace, type, nameContains, size + 1, after ? decodeCursor(after) : undefined);
    const edges = rows.slice(0, size).map((r) => ({ cursor: encodeCursor(r.position), node: r.entity }));
    return { edges, hasNextPage: rows.length > size, endCursor: edges.at(-1)?.cursor ?? null };
  }
}
