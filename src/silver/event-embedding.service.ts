import { Embedder } from './model-ports';
import { EventEmbeddingRepository } from './event-embedding.repository';

/** Embeds event contents for the event channel of searchMemory (the process's shared embedder). */
export interface EventEmbedding {
  embedder: () => Promise<Embedder>;
  warn: (msg: string) => void;
}

/** An event as a reader of its vector sees it: its content and its stored vector of some model (or none). */
export interface EmbeddableEvent {
  id: string;
  namespace: string;
  content: string;
  embedding: number[] | null;
  embeddingModel: string | null;
}

/** The embedder's model name, or null when it cannot be loaded (then no stored vector is read). */
export async function currentEventModel(embedding: EventEmbedding | undefined): Promise<string | null> {
  if (!embedding) return null;
  try {
    return (await embedding.embedder()).model;
  } catch {
    return null;
  }
}

/**
 * The events with an embedding of the current model: stored ones are reused, the rest are
 * embedded in one call and stored (`silver.event_embeddings`). When the embedder fails, events go
 * on without a vector (the keyword channel still finds them) and a later projection or
 * re-embedding fills it.
 */
export async function embedMissing<E extends EmbeddableEvent>(store: EventEmbeddingRepository, events: E[], embedding: EventEmbedding): Promise<E[]> {
  let embedder: Embedder;
  try {
    embedder = await embedding.embedder();
  } catch (err) {
    embedding.warn(`projector: embedder unavailable, events projected without vectors: ${err instanceof Error ? err.message : String(err)}`);
    return events;
  }
  const missing = events.filter((e) => e.embedding === null || e.embeddingModel !== embedder.model);
  if (missing.length === 0) return events;
  let vectors: number[][];
  try {
    vectors = await embedder.embed(missing.map((e) => e.content));
  } catch (err) {
    embedding.warn(`projector: embedding ${missing.length} events failed, projected without vectors: ${err instanceof Error ? err.message : String(err)}`);
    return events;
  }
  // Stored as real[]: project the same float32 values a rebuild will read back.
  const fresh = new Map(missing.map((e, i) => [e.id, vectors[i]?.map(Math.fround) ?? null]));
  await store.save(
    missing.flatMap((e) => {
      const v = fresh.get(e.id);
      return v ? [{ eventId: e.id, namespace: e.namespace, model: embedder.model, embedding: v }] : [];
    }),
  );
  return events.map((e) => (fresh.has(e.id) ? { ...e, embedding: fresh.get(e.id) ?? null, embeddingModel: embedder.model } : e));
}
