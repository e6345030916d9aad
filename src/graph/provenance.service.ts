import { Driver, ManagedTransaction } from 'neo4j-driver';
import { readTransaction } from '../platform/neo4j/neo4j-client';
import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { BronzeEvent } from '../bronze/event.types';
import type { AppConfig } from '../common/config';
import { requireUuid } from '../common/input';
import { FactReader } from '../silver/fact-reader';
import { hideNames } from '../access/text-visibility';
import { Entity, Fact } from '../silver/silver.types';
import { ChangeKind, ChangeRepository, ChangeRow, ChangeSubject } from './change.repository';
import { DerivedFactRow, readDerivedFromEvent } from './cypher/derived-from-event';
import { expandFrontier, RelatedFilter } from './cypher/entity-neighbourhood';
import { readShortestPath } from './cypher/entity-shortest-path';
import { RelatedEdge } from './cypher/graph-read';
import { ProvenanceVia, readProvenanceSteps } from './cypher/provenance-steps';
import { GraphException, GraphExceptionCode } from './graph.exception';
import type { WarmUpRows } from './graph-warm-up';

/** The slice of a per-request DataLoader the service uses (results in key order, Errors or null for misses). */
export interface BatchLoad<V> {
  loadMany(keys: ArrayLike<string>): Promise<Array<V | null | Error>>;
}

/** Per-request loaders: Postgres is the truth for the objects, Neo4j only answers "which ones". */
export interface ProvenanceLoaders {
  readonly factById: BatchLoad<Fact>;
  readonly eventById: BatchLoad<BronzeEvent>;
  readonly entityById: BatchLoad<Entity>;
}

export interface ProvenanceLimits {
  /** Deepest neighbourhood (hops). */
  readonly maxNeighbourhoodDepth: number;
  /** Longest shortest path searched (hops). */
  readonly maxPathDepth: number;
  /** Most entities a neighbourhood may hold before it is refused. */
  readonly maxSubgraphNodes: number;
  readonly maxSubgraphEdges: number;
  readonly maxPageSize: number;
}

/** The traversal limits of the configuration (MAX_NEIGHBOURHOOD_DEPTH, MAX_PATH_DEPTH, MAX_SUBGRAPH_*, MAX_CHANGES_PAGE_SIZE). */
export function provenanceLimits(limits: AppConfig['limits']): ProvenanceLimits {
  return Object.freeze({
    maxNeighbourhoodDepth: limits.maxNeighbourhoodDepth,
    maxPathDepth: limits.maxPathDepth,
    maxSubgraphNodes: limits.maxSubgraphNodes,
    maxSubgraphEdges: limits.maxSubgraphEdges,
    maxPageSize: limits.maxChangesPageSize,
  });
}

export interface ProvenanceStep {
  fact: Fact;
  event: BronzeEvent;
  spanStart: number | null;
  spanEnd: number | null;
  quote: string | null;
  via: ProvenanceVia;
  distance: number;
}

export interface ProvenanceResult {
  /** null when the fact is missing or outside the caller's grants (the two look the same). */
  fact: Fact | null;
  steps: ProvenanceStep[];
}

export interface DerivationResult {
  event: BronzeEvent | null;
  facts: Array<{ fact: Fact } & Omit<DerivedFactRow, 'factId'>>;
  entities: Entity[];
  relationships: RelatedEdge[];
}

export interface SubgraphResult {
  root: Entity | null;
  entities: Entity[];
  relationships: RelatedEdge[];
}

export interface ChangeResult {
  namespace: string;
  subject: ChangeSubject;
  kind: ChangeKind;
  at: Date;
  /** The fact of a FACT change; null for Gold changes. */
  fact: Fact | null;
  /** Gold changes: the Gold row's id, the Silver ids and the reason of the promotion log (ChangeRow). */
  gold: Pick<ChangeRow, 'goldEntityId' | 'goldRelationshipId' | 'silverIds' | 'reason'>;
}

export interface TraversalFilter {
  asOf?: Date | null;
  relationshipTypes?: string[] | null;
}

/** Loads rows by id and keeps the ones found in `namespace`, in key order. */
async function loadIn<V extends { namespace: string }>(loader: BatchLoad<V>, ids: readonly string[], namespace: string): Promise<Map<string, V>> {
  const unique = [...new Set(ids)];
  const rows = await loader.loadMany(unique);
  const found = new Map<string, V>();
  rows.forEach((row, i) => {
    if (row && !(row instanceof Error) && row.namespace === namespace) found.set(unique[i] as string, row);
  });
  return found;
}

const relatedFilter = (f: TraversalFilter): RelatedFilter => ({
  asOf: f.asOf ? f.asOf.toISOString() : null,
  types: f.relationshipTypes && f.relationshipTypes.length > 0 ? [...new Set(f.relationshipTypes)] : null,
});

/**
 * Provenance traversals (fact -> events, event -> everything derived from it), entity
 * neighbourhoods and paths, answered from the Neo4j projection, and the change log of a
 * namespace from Silver. Each call checks the caller's grant on the namespace of the node it
 * starts from (an id outside the grants looks like a missing one) and every hop stays in it.
 */
export class ProvenanceService {
  constructor(
    private readonly driver: Driver,
    private readonly changeLog: ChangeRepository,
    /** Quotes the graph returns reach callers through the fact reader, like every fact text. */
    private readonly facts: FactReader,
    private readonly limits: ProvenanceLimits,
  ) {}

  private read<T>(work: (tx: ManagedTransaction) => Promise<T>): Promise<T> {
    return readTransaction(this.driver, work);
  }

  /** The start row when it exists and the caller may `read` its namespace; otherwise null. */
  private async start<V extends { namespace: string }>(auth: AuthContext, loader: BatchLoad<V>, id: string, argument: string): Promise<V | null> {
    auth.requirePrincipal();
    const [row] = await loader.loadMany([requireUuid(id, argument)]);
    return row && !(row instanceof Error) && auth.can(Capability.READ, row.namespace) ? row : null;
  }

  /**
   * The Neo4j statements of `provenance` and `derivedFrom`, once, over the start's warm-up rows
   * (`warmUpGraph`): on a cold Neo4j the first provenance after a start took 2-9 s (planning and
   * compiling its supersession walks), the next ones 0.1-0.3 s (docs/explore.md "First reads").
   */
  async warmUp(rows: WarmUpRows): Promise<void> {
    const [factId, eventId] = [rows.factIds[0], rows.eventIds[0]];
    if (!factId || !eventId) return;
    await this.read(async (tx) => {
      await readProvenanceSteps(tx, rows.namespace, factId);
      await readDerivedFromEvent(tx, rows.namespace, eventId);
    });
  }

  /** The fact and every event it rests on, directly or through its supersession chain (both ways). */
  async provenance(auth: AuthContext, loaders: ProvenanceLoaders, factId: string): Promise<ProvenanceResult> {
    const fact = await this.start(auth, loaders.factById, factId, 'factId');
    if (!fact) return { fact: null, steps: [] };
    const rows = await this.read((tx) => readProvenanceSteps(tx, fact.namespace, fact.id));
    const [facts, events] = await Promise.all([
      loadIn(
        loaders.factById,
        rows.map((r) => r.factId),
        fact.namespace,
      ),
      loadIn(
        loaders.eventById,
        rows.map((r) => r.eventId),
        fact.namespace,
      ),
    ]);
    const steps: ProvenanceStep[] = [];
    for (const r of await this.facts.presentQuotes(rows)) {
      const f = facts.get(r.factId);
      const e = events.get(r.eventId);
      if (f && e) {
        const quote = r.quote;
        steps.push({ fact: f, event: e, spanStart: r.spanStart, spanEnd: r.spanEnd, quote, via: r.via, distance: r.distance });
      }
    }
    return { fact, steps };
  }

  /** Every fact (with its span), entity and relationship derived from an event. */
  async derivedFrom(auth: AuthContext, loaders: ProvenanceLoaders, eventId: string): Promise<DerivationResult> {
    const event = await this.start(auth, loaders.eventById, eventId, 'eventId');
    if (!event) return { event: null, facts: [], entities: [], relationships: [] };
    const rows = await this.read((tx) => readDerivedFromEvent(tx, event.namespace, event.id));
    const [facts, entities] = await Promise.all([
      loadIn(
        loaders.factById,
        rows.facts.map((r) => r.factId),
        event.namespace,
      ),
      loadIn(loaders.entityById, rows.entityIds, event.namespace),
    ]);
    const quoted = await this.facts.presentQuotes(rows.facts.map((r) => ({ ...r, eventId: event.id })));
    return {
      event,
      facts: quoted.flatMap(({ factId, eventId: _e, ...span }) => {
        const fact = facts.get(factId);
        return fact ? [{ fact, ...span }] : [];
      }),
      entities: rows.entityIds.flatMap((id) => entities.get(id) ?? []),
      relationships: rows.relationships,
    };
  }

  private checkDepth(name: string, depth: number, max: number): void {
    if (!Number.isInteger(depth) || depth < 1) {
      throw new GraphException(GraphExceptionCode.INVALID_ARGUMENT, `${name} must be a whole number of hops, at least 1 (got ${depth})`);
    }
    if (depth > max) {
      throw new GraphException(
        GraphExceptionCode.DEPTH_LIMIT_EXCEEDED,
        `${name} ${depth} is above the limit of ${max} hops: ask for ${max} or fewer and expand from the entities you get back`,
      );
    }
  }

  /** Entities and RELATED edges within `depth` hops (either direction) of an entity, breadth first. */
  async neighbourhood(auth: AuthContext, loaders: ProvenanceLoaders, entityId: string, depth: number, filter: TraversalFilter): Promise<SubgraphResult> {
    this.checkDepth('depth', depth, this.limits.maxNeighbourhoodDepth);
    const root = await this.start(auth, loaders.entityById, entityId, 'entityId');
    if (!root) return { root: null, entities: [], relationships: [] };
    const rf = relatedFilter(filter);
    const { maxSubgraphNodes: maxNodes, maxSubgraphEdges: maxEdges } = this.limits;
    const tooLarge = (what: string) =>
      new GraphException(
        GraphExceptionCode.SUBGRAPH_TOO_LARGE,
        `the neighbourhood of ${entityId} at depth ${depth} has more than ${what}: ask for a smaller depth, fewer relationshipTypes or an asOf`,
      );

    const visited = [root.id];
    const seen = new Set(visited);
    const edges = new Map<string, RelatedEdge>();
    await this.read(async (tx) => {
      let frontier = [root.id];
      for (let hop = 1; hop <= depth && frontier.length > 0; hop++) {
        const hops = await expandFrontier(tx, root.namespace, frontier, rf, maxEdges + 1);
        if (hops.length > maxEdges) throw tooLarge(`${maxEdges} relationships`);
        const next: string[] = [];
        for (const h of hops) {
          edges.set(h.edge.id, h.edge);
          if (!seen.has(h.neighbourId)) {
            seen.add(h.neighbourId);
            visited.push(h.neighbourId);
            next.push(h.neighbourId);
          }
        }
        if (visited.length > maxNodes) throw tooLarge(`${maxNodes} entities`);
        if (edges.size > maxEdges) throw tooLarge(`${maxEdges} relationships`);
        frontier = next;
      }
    });
    const entities = await loadIn(loaders.entityById, visited, root.namespace);
    return {
      root,
      entities: visited.flatMap((id) => entities.get(id) ?? []),
      relationships: [...edges.values()].filter((e) => entities.has(e.sourceEntityId) && entities.has(e.targetEntityId)),
    };
  }

  /** The shortest chain of RELATED edges between two entities of one namespace, or null. */
  async shortestPath(
    auth: AuthContext,
    loaders: ProvenanceLoaders,
    fromId: string,
    toId: string,
    maxDepth: number,
    filter: TraversalFilter,
  ): Promise<SubgraphResult | null> {
    this.checkDepth('maxDepth', maxDepth, this.limits.maxPathDepth);
    const from = await this.start(auth, loaders.entityById, fromId, 'fromEntityId');
    if (!from) return null;
    const to = (await loadIn(loaders.entityById, [requireUuid(toId, 'toEntityId')], from.namespace)).get(toId);
    if (!to) return null;
    if (from.id === to.id) return { root: from, entities: [from], relationships: [] };
    const path = await this.read((tx) => readShortestPath(tx, from.namespace, from.id, to.id, maxDepth, relatedFilter(filter)));
    if (!path) return null;
    const entities = await loadIn(loaders.entityById, path.entityIds, from.namespace);
    if (path.entityIds.some((id) => !entities.has(id))) return null;
    return { root: from, entities: path.entityIds.map((id) => entities.get(id) as Entity), relationships: path.edges };
  }

  /**
   * What changed in a namespace after `since`, oldest first (needs "list"): facts added,
   * superseded or retired, and (when `subjects` asks for them) Gold entities and relationships
   * created, updated, merged, split or retired by promotion. `subjects` defaults to facts only,
   * what `changes` returned before Gold existed.
   */
  async changes(
    auth: AuthContext,
    loaders: ProvenanceLoaders,
    namespace: string,
    since: Date,
    first: number | null | undefined,
    subjects: readonly ChangeSubject[] = ['FACT'],
  ): Promise<ChangeResult[]> {
    auth.require(Capability.LIST, namespace);
    const limit = first ?? 100;
    if (!Number.isInteger(limit) || limit < 1 || limit > this.limits.maxPageSize) {
      throw new GraphException(GraphExceptionCode.INVALID_ARGUMENT, `first must be between 1 and ${this.limits.maxPageSize}`);
    }
    if (subjects.length === 0)
      throw new GraphException(GraphExceptionCode.INVALID_ARGUMENT, 'subjects must name at least one of FACT, GOLD_ENTITY, GOLD_RELATIONSHIP');
    const rows = await this.changeLog.since(namespace, since, limit, [...new Set(subjects)]);
    // The promotion log's reasons quote entity names: one that holds a hidden name is hidden (text-visibility.ts hideNames).
    const hiddenNames = rows.some((r) => r.reason !== null) ? ((await this.facts.hiddenNames([namespace])).get(namespace)?.names ?? []) : [];
    const facts = await loadIn(
      loaders.factById,
      rows.flatMap((r) => (r.factId ? [r.factId] : [])),
      namespace,
    );
    return rows.flatMap(({ subject, kind, at, factId, goldEntityId, goldRelationshipId, silverIds, reason }): ChangeResult[] => {
      const gold = { goldEntityId, goldRelationshipId, silverIds, reason: reason === null ? null : hideNames(reason, hiddenNames) };
      if (subject !== 'FACT') return [{ namespace, subject, kind, at, fact: null, gold }];
      const fact = factId ? facts.get(factId) : undefined;
      return fact ? [{ namespace, subject, kind, at, fact, gold }] : [];
    });
  }
}
