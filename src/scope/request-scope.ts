import DataLoader from 'dataloader';
import { AuthContext } from '../access/auth-context';
import { NESTED_LIST_MAX } from '../common/limits';
import { TokenService } from '../access/token.service';
import { ApprovalService } from '../access/approval.service';
import { ApprovalGate } from '../access/approval.port';
import { ErasureService } from '../bronze/erasure.service';
import { EventService } from '../bronze/event.service';
import { BronzeEvent, EventKind } from '../bronze/event.types';
import { IngestService } from '../bronze/ingest.service';
import { EventNodeService } from '../graph/event-node.service';
import { ExploreService } from '../graph/explore.service';
import { GraphRebuildService } from '../graph/graph-rebuild.service';
import { ProvenanceService } from '../graph/provenance.service';
import { ReembedService } from '../silver/reembed.service';
import { SearchService } from '../graph/search.service';
import { AppPubSub } from '../platform/pubsub/topics';
import { FactReader } from '../silver/fact-reader';
import { OverlayService } from '../gold/overlay/overlay.service';
import { PipelineService } from '../silver/pipeline.service';
import { SilverReadService } from '../silver/silver-read.service';
import { SubscriptionService } from './subscription.service';
import { GoldService } from '../gold/promotion/gold.service';
import { AboutService } from '../gold/about/about.service';
import { ReviewService } from '../gold/review/review.service';
import { GoldReadService } from '../gold/reads/gold-read.service';
import { QualityService } from '../gold/quality/quality.service';
import { LifecycleService } from '../gold/decay/lifecycle.service';
import { RetentionService } from '../bronze/retention.service';
import { AccessContext } from '../access/access.context';
import { RequestContextOf } from '../access/request-context';
import { BronzeContext, BronzeLoaders } from '../bronze/bronze.context';
import { inNamespace, listIn, NamespacedLoader, rowsIn } from '../common/namespaced-loader';
import { GoldContext, GoldLoaders, GoldNamespaceLoaders } from '../gold/gold.context';
import { GraphContext } from '../graph/graph.context';
import { SilverContext, SilverLoaders } from '../silver/silver.context';

/**
 * The request scope every transport shares (GraphQL over HTTP and graphql-ws today, MCP next):
 * the long-lived services, and per operation the caller's AuthContext and DataLoaders.
 *
 * Layers: a transport calls services only; services check grants and call repositories; SQL
 * lives in repositories. So `Services` holds no repository.
 */

/** Long-lived services, built once per process (app.ts). */
export interface Services {
  readonly tokens: TokenService;
  readonly ingest: IngestService;
  readonly events: EventService;
  readonly eventNodes: EventNodeService;
  readonly provenance: ProvenanceService;
  readonly pubSub: AppPubSub;
  readonly subscriptions: SubscriptionService;
  /** Facts as callers see them: the one reader every path that returns fact text goes through. */
  readonly facts: FactReader;
  readonly silver: SilverReadService;
  readonly pipeline: PipelineService;
  readonly graph: GraphRebuildService;
  readonly search: SearchService;
  readonly reembed: ReembedService;
  readonly explore: ExploreService;
  /** Approval requests for irreversible operations (docs/approvals.md). */
  readonly approvals: ApprovalService;
  /** The single-use gate irreversible operations consume an approval through (gold/approval.port.ts). */
  readonly approvalGate: ApprovalGate;
  /** destroyEvent: the approved erasure of one Bronze event. */
  readonly erasure: ErasureService;
  /** Bronze retention: dry run and the approved drop of old partitions (docs/lifecycle.md). */
  readonly retention: RetentionService;
  readonly gold: GoldService;
  readonly overlays: OverlayService;
  /** "What do I know about X?": name resolution over Gold, facts through the graph (docs/gold-about.md). */
  readonly about: AboutService;
  /** The review queue of Gold conflicts, and the Gold supersessions reads honour (docs/gold-review.md). */
  readonly review: ReviewService;
  /** Preferences and relatedContext over Gold (docs/gold-reads.md). */
  readonly goldReads: GoldReadService;
  /** The quality report of a namespace (docs/quality.md). */
  readonly quality: QualityService;
  /** Decay, reversible pruning and restorePruned (docs/lifecycle.md). */
  readonly lifecycle: LifecycleService;
}

/**
 * Per-request (or per graphql-ws operation) loaders: their caches never outlive one operation. Each
 * layer declares the loaders its fields read (BronzeLoaders, SilverLoaders, GoldLoaders); this is
 * all of them, built by createLoaders.
 */
export interface Loaders extends BronzeLoaders, SilverLoaders, GoldLoaders {
  /**
   * The loaders seen from one namespace: a row of another namespace reads as missing (null, or
   * left out of a list). Fields and tools that follow an id stored on a row read through these,
   * from the row's namespace, instead of checking the namespace of what they loaded.
   */
  inNamespace(namespace: string): NamespaceLoaders;
}

/** Every loader a field or tool follows stored ids through, seen from one namespace (Loaders.inNamespace). */
export interface NamespaceLoaders extends GoldNamespaceLoaders {
  readonly eventById: NamespacedLoader<BronzeEvent>;
}

/** One operation of one caller, whatever the transport: every layer's resolver context is a slice of it. */
export type RequestScope = RequestContextOf<Services, Loaders>;

type Satisfies<Full extends Slice, Slice> = Full;
/**
 * Compile-time check: resolvers type their context by the slice of the scope their layer reads
 * (`access/access.context.ts`, `bronze/bronze.context.ts`, …) and every transport hands them the
 * whole scope, so the scope must be each slice. An error here names the slice it no longer fits.
 */
export type ScopeFitsEveryLayer = [
  Satisfies<RequestScope, AccessContext>,
  Satisfies<RequestScope, BronzeContext>,
  Satisfies<RequestScope, SilverContext>,
  Satisfies<RequestScope, GraphContext>,
  Satisfies<RequestScope, GoldContext>,
];

/**
 * Groups rows under their keys, in key order (DataLoader's contract), at most NESTED_LIST_MAX
 * per key: nested lists without a page size return at most that many, which is what the cost
 * estimator (cost.ts) prices them at.
 */
function groupBy<K, R>(keys: readonly K[], rows: readonly R[], keyOf: (r: R) => K): R[][] {
  const m = new Map<K, R[]>();
  for (const r of rows) {
    const group = m.get(keyOf(r));
    if (!group) m.set(keyOf(r), [r]);
    else if (group.length < NESTED_LIST_MAX) group.push(r);
  }
  return keys.map((k) => m.get(k) ?? []);
}

/** Loaders keyed by (entity, asOf): one round trip per distinct asOf in the operation. */
function perAsOf<T>(load: (ids: string[], asOf: Date | null) => Promise<Array<{ entityId: string } & T>>) {
  return async (keys: ReadonlyArray<{ entityId: string; asOf: Date | null }>) => {
    const byAsOf = new Map<string, { asOf: Date | null; ids: string[] }>();
    for (const k of keys) {
      const tag = k.asOf?.toISOString() ?? '';
      byAsOf.set(tag, { asOf: k.asOf, ids: [...(byAsOf.get(tag)?.ids ?? []), k.entityId] });
    }
    const results = new Map<string, Array<{ entityId: string } & T>>();
    await Promise.all([...byAsOf.entries()].map(async ([tag, g]) => results.set(tag, await load([...new Set(g.ids)], g.asOf))));
    return keys.map((k) => (results.get(k.asOf?.toISOString() ?? '') ?? []).filter((r) => r.entityId === k.entityId).slice(0, NESTED_LIST_MAX));
  };
}
const entityAsOfKey = (k: { entityId: string; asOf: Date | null }) => `${k.entityId}@${k.asOf?.toISOString() ?? ''}`;

const byId = <T extends { id: string }>(ids: readonly string[], rows: readonly T[]): Array<T | null> => {
  const found = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => found.get(id) ?? null);
};

/** `currentAuth` for a connection: re-authenticates the same header once `recheckMs` have passed (AUTH_RECHECK_MS). */
export function recheckingAuth(
  services: Pick<Services, 'tokens'>,
  authorization: string | undefined,
  initial: AuthContext,
  recheckMs: number,
  now: () => number = Date.now,
): () => Promise<AuthContext> {
  let current = initial;
  let checkedAt = now();
  return async () => {
    if (now() - checkedAt >= recheckMs) {
      current = await services.tokens.authenticate(authorization);
      checkedAt = now();
    }
    return current;
  };
}

/** The loaders of one operation. Fact loaders read through the FactReader, so their text is what callers may see. */
export function createLoaders(services: Services): Loaders {
  const loaders = dataLoaders(services);
  const views = new Map<string, NamespaceLoaders>();
  return {
    ...loaders,
    inNamespace(namespace) {
      const known = views.get(namespace);
      if (known) return known;
      const view = namespaceLoaders(loaders, namespace);
      views.set(namespace, view);
      return view;
    },
  };
}

/** The loaders of `loaders` seen from `namespace`: they share its batches and caches. */
function namespaceLoaders(loaders: Omit<Loaders, 'inNamespace'>, namespace: string): NamespaceLoaders {
  const keep = inNamespace(namespace);
  const ifKept = <T extends { namespace: string }>(row: T): T | null => (keep(row) ? row : null);
  return {
    eventById: rowsIn(loaders.eventById, namespace),
    factById: rowsIn(loaders.factById, namespace),
    entityById: rowsIn(loaders.entityById, namespace),
    goldEntityById: rowsIn(loaders.goldEntityById, namespace),
    goldRelationshipById: rowsIn(loaders.goldRelationshipById, namespace),
    goldRelationshipsByEntity: listIn(loaders.goldRelationshipsByEntity, ifKept),
    goldFactsByEntity: listIn(loaders.goldFactsByEntity, ifKept),
    // A preference of the namespace, with only the replaced facts of the namespace.
    goldPreferencesByEntity: listIn(loaders.goldPreferencesByEntity, (p) => (keep(p.fact) ? { ...p, replaced: p.replaced.filter(keep) } : null)),
  };
}

function dataLoaders(services: Services): Omit<Loaders, 'inNamespace'> {
  const { events, facts, silver, gold, about, goldReads } = services;
  return {
    eventById: new DataLoader(async (ids) => byId(ids, await events.byIds(ids))),
    toolEvents: new DataLoader(
      async (keys) => {
        const rows = await events.byToolCallIds(keys);
        return keys.map((k) => {
          const linked = rows.filter((e) => e.namespace === k.namespace && e.toolCallId === k.toolCallId);
          // The call itself always, then at most NESTED_LIST_MAX results (Event.toolResults).
          const calls = linked.filter((e) => e.kind === EventKind.TOOL_CALL).slice(0, NESTED_LIST_MAX);
          return [...calls, ...linked.filter((e) => e.kind !== EventKind.TOOL_CALL).slice(0, NESTED_LIST_MAX)];
        });
      },
      { cacheKeyFn: (k) => `${k.namespace}\u0000${k.toolCallId}` },
    ),
    factById: new DataLoader(async (ids) => byId(ids, await facts.byIds(ids))),
    sourcesByFactId: new DataLoader(async (ids) => groupBy(ids, await facts.sourcesByFactIds(ids), (r) => r.factId)),
    droppedSourcesByFactId: new DataLoader(async (ids) => {
      const counts = await facts.droppedSourceCounts(ids);
      return ids.map((id) => counts.get(id) ?? 0);
    }),
    factsByEventId: new DataLoader(async (ids) => groupBy(ids, await facts.byEventIds(ids), (r) => r.eventId).map((rows) => rows.map((r) => r.fact))),
    supersedesByFactId: new DataLoader(async (ids) => groupBy(ids, await facts.supersededBy(ids), (f) => f.supersededById as string)),
    decisionsByFactId: new DataLoader(async (ids) => {
      const rows = await facts.decisionsByFactIds(ids);
      return ids.map((id) => rows.filter((d) => d.factId === id || d.targetFactId === id).slice(0, NESTED_LIST_MAX));
    }),
    entityById: new DataLoader(async (ids) => byId(ids, await silver.entitiesByIds(ids))),
    factsByEntity: new DataLoader(async (keys) => (await perAsOf((ids, asOf) => facts.byEntityIds(ids, asOf))(keys)).map((rows) => rows.map((r) => r.fact)), {
      cacheKeyFn: entityAsOfKey,
    }),
    relationshipsByEntity: new DataLoader(
      async (keys) => (await perAsOf((ids, asOf) => silver.relationshipsByEntityIds(ids, asOf))(keys)).map((rows) => rows.map((r) => r.relationship)),
      { cacheKeyFn: entityAsOfKey },
    ),
    sourcesByRelationshipId: new DataLoader(async (ids) => groupBy(ids, await silver.relationshipSources(ids), (r) => r.relationshipId)),
    goldEntityById: new DataLoader(async (ids) => byId(ids, await gold.entitiesByIds(ids))),
    goldRelationshipsByEntity: new DataLoader(
      async (keys) =>
        perAsOf(async (ids, asOf) =>
          (await gold.relationshipsOf(ids, asOf)).flatMap((r) => {
            const ends = [...new Set([r.sourceGoldId, r.targetGoldId])].filter((id) => ids.includes(id));
            return ends.map((entityId) => ({ entityId, ...r }));
          }),
        )(keys),
      { cacheKeyFn: entityAsOfKey },
    ),
    overlaysByFactId: new DataLoader(async (ids) =>
      groupBy(ids, await services.overlays.byFactIds(ids), (r) => r.factId).map((rows) => rows.map((r) => r.overlay)),
    ),
    unverifiedImportByEventId: new DataLoader(async (ids) => {
      const unverified = await events.unverifiedImports(ids);
      return ids.map((id) => unverified.has(id));
    }),
    redactionsByEventId: new DataLoader(async (ids) => {
      const spans = await services.overlays.redactionsByEventIds(ids);
      return ids.map((id) => spans.filter((s) => s.targetId === id));
    }),
    goldEntityByName: new DataLoader((keys) => about.resolve(keys), { cacheKeyFn: (k) => `${k.namespace}\u0000${k.key}` }),
    goldFactsByEntity: new DataLoader(async (keys) => (await perAsOf((ids, asOf) => about.factsOf(ids, asOf))(keys)).map((rows) => rows.map((r) => r.fact)), {
      cacheKeyFn: entityAsOfKey,
    }),
    goldPreferencesByEntity: new DataLoader((keys) => perAsOf((ids, asOf) => goldReads.preferencesOf(ids, asOf))(keys), { cacheKeyFn: entityAsOfKey }),
    goldRelationshipById: new DataLoader(async (ids) => byId(ids, await gold.relationshipsByIds(ids))),
  };
}

/** The scope of one operation for an `Authorization` header (authenticates it). */
export async function createRequestScope(services: Services, authorization: string | undefined | null): Promise<RequestScope> {
  return scopeFor(services, await services.tokens.authenticate(authorization));
}

/** The scope of one operation whose caller is already authenticated (the HTTP guard did it). */
export function scopeFor(services: Services, auth: AuthContext | undefined, currentAuth?: () => Promise<AuthContext>): RequestScope {
  const a = auth ?? AuthContext.anonymous();
  return { auth: a, loaders: createLoaders(services), services, currentAuth: currentAuth ?? (async () => a) };
}
