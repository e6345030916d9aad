import { Driver, ManagedTransaction } from 'neo4j-driver';
import { readTransaction } from '../../platform/neo4j/neo4j-client';
import { AuthContext } from '../../access/auth-context';
import { goldPreferenceIds } from '../../graph/cypher/gold-preferences';
import { expandGoldFrontier } from '../../graph/cypher/gold-related';
import { FactReader } from '../../silver/fact-reader';
import { Fact } from '../../silver/silver.types';
import { isVisible } from '../../silver/visibility';
import { AboutHit, AboutKey } from '../about/about.repository';
import { AboutService, byConfidenceThenRecency } from '../about/about.service';
import { GoldException, GoldExceptionCode } from '../gold.exception';
import { GoldEntityRow, GoldRelationshipRow } from '../promotion/promotion.repository';
import { GoldClaimReader, withoutSupersededAtGold } from '../review/gold-claims';
import { isHeldAt, isPreference, replacedChain } from '../../silver/preference-rules';

/** relatedContext's depth: 1 (the topic's own relationships) to 3 hops. */
export const RELATED_CONTEXT_MAX_DEPTH = 3;
/** Most facts GoldSubgraph.facts returns for a whole subgraph (best first). */
export const RELATED_CONTEXT_FACTS = 100;
/**
 * Most Gold entities and relationships a relatedContext may hold (and MAX_SUBGRAPH_NODES /
 * MAX_SUBGRAPH_EDGES when those are lower); more is LIMIT_EXCEEDED. Lower than neighbourhood's,
 * because each entity carries its facts and preferences with their sources: at these sizes a
 * query with full provenance fits the complexity budget (api/cost.ts prices the lists at them).
 */
export const RELATED_CONTEXT_MAX_ENTITIES = 100;
export const RELATED_CONTEXT_MAX_RELATIONSHIPS = 200;
/** Most preferences per Gold entity, and most replaced facts per preference (priced in api/cost.ts). */
export const PREFERENCES_MAX = 20;
export const REPLACED_MAX = 10;

export interface GoldReadLimits {
  /** Most Gold entities a subgraph may hold before it is refused (MAX_SUBGRAPH_NODES). */
  readonly maxSubgraphNodes: number;
  /** Most Gold relationships (MAX_SUBGRAPH_EDGES). */
  readonly maxSubgraphEdges: number;
}

/** A current (or at asOf) preference of a Gold entity and the facts it replaced, newest first. */
export interface PreferenceRow {
  entityId: string;
  fact: Fact;
  replaced: Fact[];
}

/** The slice of a per-request DataLoader the service uses. */
interface Load<K, V> {
  load(key: K): Promise<V>;
  loadMany(keys: ArrayLike<K>): Promise<Array<V | Error>>;
}

/** Per-request loaders relatedContext reads through (so what it loads is shared with the fields). */
export interface GoldReadLoaders {
  readonly goldEntityByName: Load<AboutKey, AboutHit | null>;
  readonly goldEntityById: Load<string, GoldEntityRow | null>;
  readonly goldRelationshipById: Load<string, GoldRelationshipRow | null>;
}

export interface GoldSubgraphResult {
  namespace: string;
  topic: string;
  asOf: Date | null;
  /** The Gold entity the topic stands for; null when the namespace holds none. */
  root: GoldEntityRow | null;
  /** Breadth first from the root (root first). */
  entities: GoldEntityRow[];
  relationships: GoldRelationshipRow[];
}

/**
 * The questions agents ask over Gold beyond `about` (docs/gold-reads.md): an entity's preferences
 * with what they replaced, and the related context of a topic. Both walk the Neo4j projection
 * for "which ones" and re-read the rows from Postgres (the truth) through the FactReader and the
 * request's loaders. Batch reads for the loaders check no grants; the resolvers and fields do.
 */
export class GoldReadService {
  constructor(
    private readonly driver: Driver,
    private readonly facts: FactReader,
    private readonly about: AboutService,
    private readonly limits: GoldReadLimits,
    /** Facts superseded at Gold (a promotion rule or a reviewer, docs/gold-review.md) are no current preference. */
    private readonly claims: GoldClaimReader | null = null,
  ) {}

  /**
   * The preferences of each Gold entity held at `asOf` (now when null), best first, each with the
   * facts it superseded (its SUPERSEDES chain, re-checked link by link in Postgres): one Neo4j
   * statement for all the entities, then one read through the FactReader (and one SQL statement
   * for the Gold supersessions).
   */
  async preferencesOf(goldIds: readonly string[], asOf: Date | null): Promise<PreferenceRow[]> {
    const ids = [...new Set(goldIds)];
    if (ids.length === 0) return [];
    const found = await this.read((tx) => goldPreferenceIds(tx, ids, asOf, PREFERENCES_MAX, REPLACED_MAX));
    const rows = await this.facts.byIds([...new Set(found.flatMap((p) => [p.factId, ...p.replacedIds]))]);
    const byId = new Map(rows.map((f) => [f.id, f]));
    // Re-checked in Postgres: a fact retired or superseded there but not yet in the graph is not a preference now.
    const held = found.flatMap((p) => {
      const fact = byId.get(p.factId);
      return fact && isHeldAt(fact, asOf) && isPreference(fact) ? [{ p, fact }] : [];
    });
    // Nor is one put aside at Gold (a rule or a reviewer chose another): one SQL statement.
    const shown = this.claims
      ? new Set(
          (
            await withoutSupersededAtGold(
              this.claims,
              held.map((h) => h.fact),
              asOf,
            )
          ).map((f) => f.id),
        )
      : null;
    const out: PreferenceRow[] = held
      .filter((h) => !shown || shown.has(h.fact.id))
      .map(({ p, fact }) => ({
        entityId: p.goldId,
        fact,
        replaced: replacedChain(
          fact,
          p.replacedIds.flatMap((id) => byId.get(id) ?? []),
          REPLACED_MAX,
        ),
      }));
    return out.sort((a, b) => byConfidenceThenRecency(a.fact, b.fact));
  }

  /**
   * The Gold entities within `depth` GOLD_RELATED hops (either direction) of the entity `topic`
   * stands for (the name resolution of `about`), in `namespace`, with the relationships between
   * them. Needs "read" (FORBIDDEN otherwise); depth outside 1..3 is BAD_USER_INPUT; an unknown
   * topic is an empty subgraph; more than the subgraph limits is LIMIT_EXCEEDED.
   */
  async relatedContext(
    auth: AuthContext,
    loaders: GoldReadLoaders,
    namespace: string,
    topic: string,
    depth: number,
    asOf: Date | null,
  ): Promise<GoldSubgraphResult> {
    const key = this.about.lookup(auth, namespace, topic);
    if (!Number.isInteger(depth) || depth < 1 || depth > RELATED_CONTEXT_MAX_DEPTH) {
      throw new GoldException(
        GoldExceptionCode.INVALID_ARGUMENT,
        `depth must be a whole number of hops from 1 to ${RELATED_CONTEXT_MAX_DEPTH} (got ${depth}): expand further from the entities you get back`,
      );
    }
    const empty: GoldSubgraphResult = { namespace, topic, asOf, root: null, entities: [], relationships: [] };
    const hit = await loaders.goldEntityByName.load(key);
    if (!hit || hit.entity.namespace !== namespace) return empty;
    const root = hit.entity;
    const maxNodes = Math.min(this.limits.maxSubgraphNodes, RELATED_CONTEXT_MAX_ENTITIES);
    const maxEdges = Math.min(this.limits.maxSubgraphEdges, RELATED_CONTEXT_MAX_RELATIONSHIPS);
    const tooLarge = (what: string) =>
      new GoldException(
        GoldExceptionCode.SUBGRAPH_TOO_LARGE,
        `the related context of "${topic}" at depth ${depth} has more than ${what}: ask for a smaller depth or a narrower topic`,
      );
    const visited = [root.id];
    const seen = new Set(visited);
    const edgeIds = new Set<string>();
    await this.read(async (tx) => {
      let frontier = [root.id];
      for (let hop = 1; hop <= depth && frontier.length > 0; hop++) {
        const hops = await expandGoldFrontier(tx, namespace, frontier, asOf, maxEdges + 1);
        if (hops.length > maxEdges) throw tooLarge(`${maxEdges} relationships`);
        const next: string[] = [];
        for (const h of hops) {
          edgeIds.add(h.relationshipId);
          if (!seen.has(h.neighbourId)) {
            seen.add(h.neighbourId);
            visited.push(h.neighbourId);
            next.push(h.neighbourId);
          }
        }
        if (visited.length > maxNodes) throw tooLarge(`${maxNodes} entities`);
        if (edgeIds.size > maxEdges) throw tooLarge(`${maxEdges} relationships`);
        frontier = next;
      }
    });
    // Postgres is the truth: entities and relationships re-read, kept only when live, in the namespace and (relationships) visible at asOf.
    const [entityRows, relRows] = await Promise.all([loaders.goldEntityById.loadMany(visited), loaders.goldRelationshipById.loadMany([...edgeIds])]);
    const entities = entityRows.filter((g): g is GoldEntityRow => isRow(g) && g.namespace === namespace && g.retiredAt === null);
    const kept = new Set(entities.map((g) => g.id));
    const relationships = relRows
      .filter((r): r is GoldRelationshipRow => isRow(r) && r.namespace === namespace && isVisible(r, { asOf, includeRetired: false }))
      .filter((r) => kept.has(r.sourceGoldId) && kept.has(r.targetGoldId));
    if (!kept.has(root.id)) return empty;
    return { namespace, topic, asOf, root, entities, relationships };
  }

  private read<T>(work: (tx: ManagedTransaction) => Promise<T>): Promise<T> {
    return readTransaction(this.driver, work);
  }
}

const isRow = <T>(x: T | null | Error): x is T => x !== null && !(x instanceof Error);

/** The best facts of a subgraph, each once (a fact about two of its entities counts for the first), at most `max`. */
export function topFacts(lists: ReadonlyArray<{ entityId: string; facts: readonly Fact[] }>, max: number): Array<{ entityId: string; fact: Fact }> {
  const seen = new Set<string>();
  const all: Array<{ entityId: string; fact: Fact }> = [];
  for (const l of lists)
    for (const fact of l.facts) {
      if (seen.has(fact.id)) continue;
      seen.add(fact.id);
      all.push({ entityId: l.entityId, fact });
    }
  return all.sort((a, b) => byConfidenceThenRecency(a.fact, b.fact)).slice(0, max);
}
