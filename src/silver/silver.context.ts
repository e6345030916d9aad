import DataLoader from 'dataloader';
import { AuthContext } from '../access/auth-context';
import { CurrentAuth, RequestContextOf } from '../access/request-context';
import { BronzeLoaders } from '../bronze/bronze.context';
import { EventService } from '../bronze/event.service';
import { JobRow } from '../platform/jobs/job';
import { FactsChangedMessage, JobChangedMessage } from '../platform/pubsub/topics';
import { PipelineService } from './pipeline.service';
import { SilverReadService } from './silver-read.service';
import { Entity, Fact, FactSourceRow, JudgeDecisionRow, Relationship, RelationshipSourceRow } from './silver.types';

/** A list loader's key: an entity, now (asOf null) or at a time. */
export interface EntityAsOf {
  readonly entityId: string;
  readonly asOf: Date | null;
}

/** The services Silver's resolvers call (the request scope holds them all). */
export interface SilverServices {
  readonly silver: SilverReadService;
  /** `Event.facts` follows an event only where the caller may (EventService.mayTraverse). */
  readonly events: EventService;
  readonly pipeline: PipelineService;
  /** Live streams of facts and jobs, grant re-checked per message (scope/subscription.service.ts). */
  readonly subscriptions: {
    factsAdded(auth: AuthContext, current: CurrentAuth, namespace: string): AsyncIterable<FactsChangedMessage>;
    factsSuperseded(auth: AuthContext, current: CurrentAuth, namespace: string): AsyncIterable<FactsChangedMessage>;
    jobChanges(auth: AuthContext, current: CurrentAuth, jobId: string): Promise<AsyncIterable<JobChangedMessage>>;
    deliveredJob(auth: AuthContext, id: string): Promise<JobRow>;
  };
}

/**
 * Per-operation loaders over Silver (built in scope/request-scope.ts). Fact loaders read through
 * the FactReader, so their text is what callers may see; nested lists hold at most NESTED_LIST_MAX.
 */
export interface SilverLoaders {
  readonly factById: DataLoader<string, Fact | null>;
  readonly sourcesByFactId: DataLoader<string, FactSourceRow[]>;
  /** How many sources of the fact rest on events Bronze retention dropped. */
  readonly droppedSourcesByFactId: DataLoader<string, number>;
  readonly factsByEventId: DataLoader<string, Fact[]>;
  /** Facts whose supersededBy is the key. */
  readonly supersedesByFactId: DataLoader<string, Fact[]>;
  readonly decisionsByFactId: DataLoader<string, JudgeDecisionRow[]>;
  readonly entityById: DataLoader<string, Entity | null>;
  readonly factsByEntity: DataLoader<EntityAsOf, Fact[], string>;
  readonly relationshipsByEntity: DataLoader<EntityAsOf, Relationship[], string>;
  readonly sourcesByRelationshipId: DataLoader<string, RelationshipSourceRow[]>;
}

/** The context of Silver's resolvers. */
export type SilverContext = RequestContextOf<SilverServices, SilverLoaders & Pick<BronzeLoaders, 'eventById'>>;
