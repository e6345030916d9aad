import { Sql } from '../platform/postgres/sql';

/** One event's vector of one model. */
export interface EventEmbeddingRow {
  eventId: string;
  namespace: string;
  model: string;
  embedding: number[];
}

/**
 * `silver.event_embeddings`: the vectors of Bronze events, kept per model so a graph rebuild, a
 * replay or a re-projection does not embed again. Written by the projector's stage (events on
 * their way into the graph) and by re-embedding.
 */
export class EventEmbeddingRepository {
  constructor(private readonly sql: Sql) {}

  /** Stores event embeddings (idempotent: a row already there for the same event and model wins). */
  async save(rows: ReadonlyArray<EventEmbeddingRow>): Promise<void> {
    if (rows.length === 0) return;
    await this.sql.execute(
      `INSERT INTO silver.event_embeddings (event_id, namespace, model, embedding)
       SELECT event_id, namespace, model, embedding::real[]
         FROM json_to_recordset($1::json) AS t(event_id uuid, namespace text, model text, embedding float8[])
       ON CONFLICT (event_id, model) DO NOTHING`,
      [JSON.stringify(rows.map((r) => ({ event_id: r.eventId, namespace: r.namespace, model: r.model, embedding: r.embedding })))],
    );
  }
}
