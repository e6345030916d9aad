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

/** A fact added (newId unset) or superseded (id = old fact, newId = its replacement). */
export interface FactsChangedMessage {
  namespace: string;
  id: string;
  newId?: string;
}

/** NOTIFY payload on `medallion_facts`, written by the derive workers in their transaction. */
export interface FactsChangedNotification {
  namespace: string;
  added: string[];
  superseded: Array<[string, string]>;
}

export interface JobChangedMessage {
  id: string;
}

/** The typed topic map of every subscription. */
export type Topics = {
  EVENT_INGESTED: [EventIngestedMessage];
  FACT_ADDED: [FactsChangedMessage];
  FACT_SUPERSEDED: [FactsChangedMessage];
  JOB_CHANGED: [JobChangedMessage];
};

export type AppPubSub = PubSub<Topics>;

/** Postgres channel carrying each topic. */
export const CHANNELS = {
  events: 'medallion_events',
  facts: 'medallion_facts',
  jobs: 'medallion_jobs',
  /** "Searches are being served" (platform/foreground.ts): background stages pause between steps. No payload. */
  reads: 'medallion_reads',
} as const;

/**
 * In-process fan-out only. Messages arrive here from Postgres LISTEN (see PgListener), which is
 * what carries them across processes; nothing publishes into it directly.
 */
export function createAppPubSub(): AppPubSub {
  return createPubSub<Topics>();
}
