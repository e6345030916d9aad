import { BronzeEvent } from '../bronze/event.types';
import { ComposeSpan } from '../common/compose-text';
import { NamespacedLoader } from '../common/namespaced-loader';
import { Fact, FactSourceRow } from '../silver/silver.types';
import type { SearchLoaders } from './search.service';

/** Events in conversation order: occurredAt, then sequenceNum, then id. */
export function inConversationOrder(a: BronzeEvent, b: BronzeEvent): number {
  return a.occurredAt.getTime() - b.occurredAt.getTime() || (a.sequenceNum ?? 0) - (b.sequenceNum ?? 0) || a.id.localeCompare(b.id);
}

/** The request loaders a fact's evidence reads through. */
export interface EvidenceLoaders {
  readonly sourcesByFactId: { load(factId: string): Promise<FactSourceRow[]> };
  inNamespace(namespace: string): { readonly eventById: NamespacedLoader<BronzeEvent> };
}

/**
 * The events a fact rests on, each once, in the fact's namespace, in conversation order: what a
 * search hit shows as its evidence (GraphQL's MemoryHit.evidence and the MCP tool search_memory).
 */
export async function factEvidence(loaders: EvidenceLoaders, fact: { readonly id: string; readonly namespace: string }): Promise<BronzeEvent[]> {
  const sources = await loaders.sourcesByFactId.load(fact.id);
  const events = await loaders.inNamespace(fact.namespace).eventById.loadMany([...new Set(sources.map((s) => s.eventId))]);
  return events.sort(inConversationOrder);
}

/** The request loaders a search hydrates and prefetches through (GraphQL's and MCP's request scope). */
export interface SearchRequestLoaders {
  readonly factById: { loadMany(ids: readonly string[]): Promise<Array<Fact | null | Error>> };
  readonly eventById: { loadMany(ids: readonly string[]): Promise<Array<BronzeEvent | null | Error>> };
  readonly sourcesByFactId: { loadMany(ids: readonly string[]): Promise<Array<FactSourceRow[] | Error>> };
  readonly redactionsByEventId: { loadMany(ids: readonly string[]): Promise<Array<readonly ComposeSpan[] | Error>> };
}

/**
 * What `SearchService.search` reads a request's hits through, and what it reads ahead: while the
 * candidates are hydrated, the same round of queries loads the candidate facts' sources and the
 * events they likely rest on, and the events' redactions, into the request's loaders. Their
 * evidence and content then resolve from the loaders' caches, not in three more rounds of queries
 * after the search returns (`evidence` still reads the sources from Postgres, so an event the
 * projection did not name yet is loaded then).
 */
export function searchLoaders(loaders: SearchRequestLoaders): SearchLoaders {
  return {
    facts: (ids) => loaders.factById.loadMany(ids),
    events: (ids) => loaders.eventById.loadMany(ids),
    redactions: (ids) => loaders.redactionsByEventId.loadMany(ids),
    prefetch: ({ facts, events }) => {
      // Only a cache: a failure here is the later read's to report.
      void loaders.sourcesByFactId.loadMany(facts).catch(() => undefined);
      void loaders.eventById.loadMany(events).catch(() => undefined);
      void loaders.redactionsByEventId.loadMany(events).catch(() => undefined);
    },
  };
}
