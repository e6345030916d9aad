import DataLoader from 'dataloader';
import { AuthContext } from '../access/auth-context';
import { TokenService } from '../access/token.service';
import { EventQueryRepository } from '../bronze/event-query.repository';
import { EventRepository } from '../bronze/event.repository';
import { EventService } from '../bronze/event.service';
import { BronzeEvent } from '../bronze/event.types';
import { IngestService } from '../bronze/ingest.service';
import { EventNodeService } from '../graph/event-node.service';
import { AppPubSub } from '../infra/pubsub/topics';

/** Long-lived services, built once per process. */
export interface Services {
  readonly tokens: TokenService;
  readonly ingest: IngestService;
  readonly events: EventService;
  readonly eventNodes: EventNodeService;
  readonly eventRepository: EventRepository;
  readonly eventQueries: EventQueryRepository;
  readonly pubSub: AppPubSub;
}

/** Per-request (or per graphql-ws operation) loaders: their caches never outlive one operation. */
export interface Loaders {
  readonly eventById: DataLoader<string, BronzeEvent | null>;
  /** Tool calls and results by (namespace, toolCallId). */
  readonly toolEvents: DataLoader<{ namespace: string; toolCallId: string }, BronzeEvent[], string>;
}

export interface RequestContext {
  readonly auth: AuthContext;
  readonly loaders: Loaders;
  readonly services: Services;
}

export function createLoaders(services: Services): Loaders {
  return {
    eventById: new DataLoader<string, BronzeEvent | null>(async (ids) => {
      const found = new Map((await services.eventRepository.findByIds(ids)).map((e) => [e.id, e]));
      return ids.map((id) => found.get(id) ?? null);
    }),
    toolEvents: new DataLoader(
      async (keys) => {
        const rows = await services.eventQueries.byToolCallIds(keys);
        return keys.map((k) => rows.filter((e) => e.namespace === k.namespace && e.toolCallId === k.toolCallId));
      },
      { cacheKeyFn: (k) => `${k.namespace}\u0000${k.toolCallId}` },
    ),
  };
}

export async function createRequestContext(services: Services, authorization: string | undefined | null): Promise<RequestContext> {
  const auth = await services.tokens.authenticate(authorization);
  return { auth, loaders: createLoaders(services), services };
}
