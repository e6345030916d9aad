import DataLoader from 'dataloader';
import { AuthContext } from '../access/auth-context';
import { CurrentAuth, RequestContextOf } from '../access/request-context';
import { ComposeSpan } from '../common/compose-text';
import { EventIngestedMessage } from '../platform/pubsub/topics';
import { ErasureService } from './erasure.service';
import { EventService } from './event.service';
import { BronzeEvent } from './event.types';
import { IngestService } from './ingest.service';
import { RetentionService } from './retention.service';

/** The services Bronze's resolvers call (the request scope holds them all). */
export interface BronzeServices {
  readonly ingest: IngestService;
  readonly events: EventService;
  /** destroyEvent: the approved erasure of one Bronze event. */
  readonly erasure: ErasureService;
  /** Bronze retention: dry run and the approved drop of old partitions (docs/lifecycle.md). */
  readonly retention: RetentionService;
  /** The live stream of stored events, grant re-checked per message (scope/subscription.service.ts). */
  readonly subscriptions: {
    eventsIngested(auth: AuthContext, current: CurrentAuth, namespace: string): AsyncIterable<EventIngestedMessage>;
  };
}

/** Per-operation loaders over Bronze: their caches never outlive one operation (built in scope/request-scope.ts). */
export interface BronzeLoaders {
  readonly eventById: DataLoader<string, BronzeEvent | null>;
  /** Tool calls and results by (namespace, toolCallId). */
  readonly toolEvents: DataLoader<{ namespace: string; toolCallId: string }, BronzeEvent[], string>;
  /** Active redactions of the event's content (Event.content, Event.rawPayload). */
  readonly redactionsByEventId: DataLoader<string, ComposeSpan[]>;
  /** Whether an import created the event from a file whose hash chain did not verify (Event.importedUnverified). */
  readonly unverifiedImportByEventId: DataLoader<string, boolean>;
}

/** The context of Bronze's resolvers. */
export type BronzeContext = RequestContextOf<BronzeServices, BronzeLoaders>;
