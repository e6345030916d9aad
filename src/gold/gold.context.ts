import DataLoader from 'dataloader';
import { RequestContextOf } from '../access/request-context';
import { BronzeLoaders } from '../bronze/bronze.context';
import { NamespacedListLoader, NamespacedLoader } from '../common/namespaced-loader';
import { EntityAsOf, SilverLoaders } from '../silver/silver.context';
import { SilverReadService } from '../silver/silver-read.service';
import { Entity, Fact } from '../silver/silver.types';
import { AboutHit, AboutKey } from './about/about.repository';
import { AboutService } from './about/about.service';
import { LifecycleService } from './decay/lifecycle.service';
import { OverlayService } from './overlay/overlay.service';
import { OverlayRecord } from './overlay/overlay.types';
import { GoldEntityRow, GoldRelationshipRow } from './promotion/promotion.repository';
import { GoldService } from './promotion/gold.service';
import { GoldReadService, PreferenceRow } from './reads/gold-read.service';
import { ReviewService } from './review/review.service';
import { QualityService } from './quality/quality.service';

/** The services Gold's resolvers call (the request scope holds them all). */
export interface GoldServices {
  readonly gold: GoldService;
  readonly overlays: OverlayService;
  /** "What do I know about X?": name resolution over Gold, facts through the graph (docs/gold-about.md). */
  readonly about: AboutService;
  /** The review queue of Gold conflicts, and the Gold supersessions reads honour (docs/gold-review.md). */
  readonly review: ReviewService;
  /** Preferences and relatedContext over Gold (docs/gold-reads.md). */
  readonly goldReads: GoldReadService;
  /** Decay, reversible pruning and restorePruned (docs/lifecycle.md). */
  readonly lifecycle: LifecycleService;
  /** Who may follow a Silver row reached from Gold (SilverReadService.visible, mayTraverse). */
  readonly silver: SilverReadService;
  /** The quality report of a namespace (docs/quality.md). */
  readonly quality: QualityService;
}

/** Per-operation loaders over Gold (built in scope/request-scope.ts); nested lists hold at most NESTED_LIST_MAX. */
export interface GoldLoaders {
  readonly goldEntityById: DataLoader<string, GoldEntityRow | null>;
  readonly goldRelationshipById: DataLoader<string, GoldRelationshipRow | null>;
  /** Gold relationships from or to a Gold entity, valid now or at asOf. */
  readonly goldRelationshipsByEntity: DataLoader<EntityAsOf, GoldRelationshipRow[], string>;
  /** Overlays ever placed on the fact, at their latest version (Fact.overlays). */
  readonly overlaysByFactId: DataLoader<string, OverlayRecord[]>;
  /** The best live Gold entity for a (namespace, normalised name): one SQL round trip per batch. */
  readonly goldEntityByName: DataLoader<AboutKey, AboutHit | null, string>;
  /** Facts about a Gold entity's members, valid now or at asOf: one Neo4j round trip per batch and asOf. */
  readonly goldFactsByEntity: DataLoader<EntityAsOf, Fact[], string>;
  /** Preferences of a Gold entity (with what they replaced), held now or at asOf: one Neo4j round trip per batch and asOf. */
  readonly goldPreferencesByEntity: DataLoader<EntityAsOf, PreferenceRow[], string>;
}

/**
 * The loaders Gold's fields and tools follow stored ids through, seen from the namespace of the
 * row they start from: another namespace's row reads as missing (null, or left out of a list).
 */
export interface GoldNamespaceLoaders {
  readonly entityById: NamespacedLoader<Entity>;
  readonly factById: NamespacedLoader<Fact>;
  readonly goldEntityById: NamespacedLoader<GoldEntityRow>;
  readonly goldRelationshipById: NamespacedLoader<GoldRelationshipRow>;
  readonly goldRelationshipsByEntity: NamespacedListLoader<EntityAsOf, GoldRelationshipRow>;
  readonly goldFactsByEntity: NamespacedListLoader<EntityAsOf, Fact>;
  /** Preferences whose fact is in the namespace, each with the replaced facts of the namespace. */
  readonly goldPreferencesByEntity: NamespacedListLoader<EntityAsOf, PreferenceRow>;
}

/** The loaders Gold's resolvers read through. */
export interface GoldContextLoaders
  extends GoldLoaders, Pick<SilverLoaders, 'factById' | 'entityById' | 'sourcesByRelationshipId'>, Pick<BronzeLoaders, 'redactionsByEventId'> {
  inNamespace(namespace: string): GoldNamespaceLoaders;
}

/** The context of Gold's resolvers. */
export type GoldContext = RequestContextOf<GoldServices, GoldContextLoaders>;
