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
import { ComposeSpan } from '../common/compose-text';
import { OverlayRecord } from '../gold/overlay/overlay.types';
import { OverlayService } from '../gold/overlay/overlay.service';
import { PipelineService } from '../silver/pipeline.service';
import { SilverReadService } from '../silver/silver-read.service';
import { Entity, Fact, FactSourceRow, JudgeDecisionRow, Relationship, RelationshipSourceRow } from '../silver/silver.types';
import { SubscriptionService } from './subscription.service';
import { GoldService } from '../gold/promotion/gold.service';
import { GoldEntityRow, GoldRelationshipRow } from '../gold/promotion/promotion.repository';
import { AboutService } from '../gold/about/about.service';
import { AboutHit, AboutKey } from '../gold/about/about.repository';
import { ReviewService } from '../gold/review/review.service';
import { GoldReadService, PreferenceRow } from '../gold/reads/gold-read.service';

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
  readonly gold: GoldService;
  readonly overlays: OverlayService;
  /** "What do I know about X?": name resolution over Gold, facts through the graph (docs/gold-about.md). */
  readonly about: AboutService;
  /** The review queue of Gold conflicts, and the Gold supersessions reads honour (docs/gold-review.md). */
  readonly review: ReviewService;
  /** Preferences and relatedContext over Gold (docs/gold-reads.md). */
  readonly goldReads: GoldReadService;
}

/** Per-request (or per graphql-ws operation) loaders: their caches never outlive one operation. */
export interface Loaders {
  readonly eventById: DataLoader<string, BronzeEvent | null>;
  /** Tool calls and results by (namespace, toolCallId). */
  readonly toolEvents: DataLoader<{ namespace: string; toolCallId: string }, BronzeEvent[], string>;
  readonly factById: DataLoader<string, Fact | null>;
  readonly sourcesByFactId: DataLoader<string, FactSourceRow[]>;
  readonly factsByEventId: DataLoader<string, Fact[]>;
  /** Facts whose supersededBy is the key. */
  readonly supersedesByFactId: DataLoader<string, Fact[]>;
  readonly decisionsByFactId: DataLoader<string, JudgeDecisionRow[]>;
  readonly entityById: DataLoader<string, Entity | null>;
  readonly factsByEntity: DataLoader<{ entityId: string; asOf: Date | null }, Fact[], string>;
  readonly relationshipsByEntity: DataLoader<{ entityId: string; asOf: Date | null }, Relationship[], string>;
  readonly sourcesByRelationshipId: DataLoader<string, RelationshipSourceRow[]>;
  readonly goldEntityById: DataLoader<string, GoldEntityRow | null>;
  /** Gold relationships from or to a Gold entity, valid now or at asOf. */
  readonly goldRelationshipsByEntity: DataLoader<{ entityId: string; asOf: Date | null }, GoldRelationshipRow[], string>;
  /** Overlays ever placed on the fact, at their latest version (Fact.overlays). */
  readonly overlaysByFactId: DataLoader<string, OverlayRecord[]>;
  /** Active redactions of the event's content (Event.content). */
  readonly redactionsByEventId: DataLoader<string, ComposeSpan[]>;
  /** The best live Gold entity for a (namespace, normalised name): one SQL round trip per batch. */
  readonly goldEntityByName: DataLoader<AboutKey, AboutHit | null, string>;
  /** Facts about a Gold entity's members, valid now or at asOf: one Neo4j round trip per batch and asOf. */
  readonly goldFactsByEntity: DataLoader<{ entityId: string; asOf: Date | null }, Fact[], string>;
  /** Preferences of a Gold entity (with what they replaced), held now or at asOf: one Neo4j round trip per batch and asOf. */
  readonly goldPreferencesByEntity: DataLoader<{ entityId: string; asOf: Date | null }, PreferenceRow[], string>;
  readonly goldRelationshipById: DataLoader<string, GoldRelationshipRow | null>;
}

/** One operation of one caller, whatever the transport. */
export interface RequestScope {
  readonly auth: AuthContext;
  readonly loaders: Loaders;
  readonly services: Services;
  /**
   * For long-lived operations (subscriptions): the caller's grants as they are now, re-read at
   * most every few seconds, so a revoked or expired token stops receiving. Requests use `auth`.
   */
  readonly currentAuth: () => Promise<AuthContext>;
}

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
