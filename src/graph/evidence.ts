import { BronzeEvent } from '../bronze/event.types';
import { NamespacedLoader } from '../common/namespaced-loader';
import { FactSourceRow } from '../silver/silver.types';

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
