import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { decodeCursor, encodeCursor } from '../common/cursor';
import { requireUuid } from '../common/input';
import { matchesText } from '../access/text-visibility';
import { FactReader } from './fact-reader';
import { FactRepository } from './fact.repository';
import { SilverException, SilverExceptionCode } from './silver.exception';
import { FactUses, NO_USES } from './usage-recorder';
import { Entity, Fact, FactFilter, Relationship, RelationshipSourceRow } from './silver.types';

export interface Page<T> {
  edges: Array<{ cursor: string; node: T }>;
  hasNextPage: boolean;
  endCursor: string | null;
}

/** BAD_USER_INPUT for filter values the database cannot compare (before they reach SQL). */
function checkFactFilter(filter: FactFilter): void {
  if (filter.subjectEntityId) requireUuid(filter.subjectEntityId, 'filter.subjectEntityId');
  const min = filter.minImportance;
  if (min !== null && min !== undefined && !(min >= 0 && min <= 1)) {
    throw new SilverException(
      SilverExceptionCode.INVALID_ARGUMENT,
      `filter.minImportance must be between 0 and 1 (importance is a score in [0, 1]); got ${min}`,
    );
  }
}

/**
 * Silver reads on behalf of a caller: `read` for lookups by id (null when outside the grants),
 * `list` for listings. Fact text comes through the FactReader, as on every other path.
 */
export class SilverReadService {
  constructor(
    private readonly reader: FactReader,
    private readonly facts: FactRepository,
    private readonly maxPageSize: number,
    private readonly uses: FactUses = NO_USES,
  ) {}

  /**
   * A fact read by id (GraphQL fact(id), MCP read_fact): null outside the caller's grants, and a
   * pruned fact reads as missing unless asked for (docs/lifecycle.md); a fact returned counts as a
   * use for decay (noted in memory, written in batches).
   */
  readFact<T extends { id: string; namespace: string; retiredReason?: string | null }>(
    auth: AuthContext,
    row: T | null | undefined,
    includePruned = false,
  ): T | null {
    const f = this.visible(auth, row);
    if (!f || (f.retiredReason === 'pruned' && !includePruned)) return null;
    this.uses.record([f.id]);
    return f;
  }

  visible<T extends { namespace: string }>(auth: AuthContext, row: T | null | undefined): T | null {
    auth.requirePrincipal();
    return row && auth.can(Capability.READ, row.namespace) ? row : null;
  }

  /**
   * A fact reached through a search hit (capability "search") shows its own text and the events it
   * rests on (its evidence); what lies beyond it (other facts, entities, decisions) needs what
   * reading it directly needs: "read" on the namespace. Without it those fields are empty.
   */
  mayTraverse(auth: AuthContext, row: { namespace: string }): boolean {
    return auth.can(Capability.READ, row.namespace);
  }

  private pageSize(first: number | null | undefined): number {
    const size = first ?? 50;
    if (!Number.isInteger(size) || size < 1 || size > this.maxPageSize) {
      throw new SilverException(SilverExceptionCode.INVALID_ARGUMENT, `first must be between 1 and ${this.maxPageSize} (MAX_PAGE_SIZE)`);
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
    checkFactFilter(filter);
    auth.require(Capability.LIST, namespace);
    const size = this.pageSize(first);
    const rows = await this.reader.list(namespace, filter, asOf, includeRetired, size + 1, after ? decodeCursor(after) : undefined);
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
    const shown = await this.reader.presentEntities(rows.map((r) => r.entity));
    // nameContains matches the names callers see: a hidden name answers no filter (the page may come out short; endCursor goes on).
    const edges = rows.slice(0, size).flatMap((r, i) => {
      const node = shown[i] as Entity;
      const matches = !nameContains || [node.name, ...node.aliases].some((n) => matchesText(n, nameContains));
      return matches ? [{ cursor: encodeCursor(r.position), node }] : [];
    });
    const last = rows.slice(0, size).at(-1);
    return { edges, hasNextPage: rows.length > size, endCursor: last ? encodeCursor(last.position) : null };
  }

  /** A fact a subscription delivers, read fresh; NOT_FOUND when the caller may no longer read it. */
  async deliveredFact(auth: AuthContext, id: string): Promise<Fact> {
    const f = this.visible(auth, (await this.reader.byIds([id]))[0]);
    if (!f) throw new SilverException(SilverExceptionCode.NOT_READABLE, `fact ${id} is no longer readable with your grants`);
    return f;
  }

  /** Both sides of a supersession a subscription delivers, read fresh in one round trip. */
  async deliveredSupersession(auth: AuthContext, oldId: string, newId: string): Promise<{ old: Fact; next: Fact }> {
    const rows = await this.reader.byIds([oldId, newId]);
    const old = this.visible(
      auth,
      rows.find((r) => r.id === oldId),
    );
    const next = this.visible(
      auth,
      rows.find((r) => r.id === newId),
    );
    if (!old || !next) throw new SilverException(SilverExceptionCode.NOT_READABLE, `supersession ${oldId} -> ${newId} is no longer readable with your grants`);
    return { old, next };
  }

  // Batch reads for the request's loaders (request-scope.ts); they check no grants, the fields that use them do.

  async entitiesByIds(ids: readonly string[]): Promise<Entity[]> {
    return this.reader.presentEntities(await this.facts.entitiesByIds(ids));
  }

  relationshipsByEntityIds(ids: readonly string[], asOf: Date | null): Promise<Array<{ entityId: string; relationship: Relationship }>> {
    return this.facts.relationshipsByEntityIds(ids, asOf);
  }

  /** The quotes relationships rest on, with their events' redactions applied (through the FactReader, as fact quotes). */
  async relationshipSources(ids: readonly string[]): Promise<RelationshipSourceRow[]> {
    return this.reader.presentQuotes(await this.facts.relationshipSources(ids));
  }
}
