import { createPubSub, PubSub } from '@graphql-yoga/subscription';

/** What subscribers receive: ids only (a NOTIFY payload is capped at 8 kB); resolvers load the rest. */
export interface EventIngestedMessage {
  id: string;
  namespace: string;
}

/** The NOTIFY payload on `medallion_events`: up to 150 new event ids of one namespace. */
export interface EventsIngestedNotification {
  namespace: string;
  ids: string[];
}

/** The typed topic map of every subscription. */
export type Topics = {
  EVENT_INGESTED: [EventIngestedMessage];
};

export type AppPubSub = PubSub<Topics>;

/** Postgres channel carrying each topic. */
export const CHANNELS: Record<keyof Topics, string> = {
  EVENT_INGESTED: 'medallion_events',
};

/**
 * In-process fan-out only. Messages arrive here from Postgres LISTEN (see PgListener), which is
 * what carries them across processes; nothing publishes into it directly.
 */
export function createAppPubSub(): AppPubSub {
  return createPubSub<Topics>();
}
