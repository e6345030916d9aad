import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Embeddings of Bronze events' content, so raw turns are a recall channel of searchMemory
 * (docs/search.md). Derived data, so it lives in Silver: the projector writes a row the first
 * time it projects an event, and a graph rebuild replays these rows instead of re-embedding.
 * One row per (event, model): a model change adds rows beside the old ones (re-embedding job).
 */
export class EventEmbeddings1764400000010 implements MigrationInterface {
  name = 'EventEmbeddings1764400000010';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE silver.event_embeddings (
        event_id    uuid NOT NULL,
        model       text NOT NULL,
        namespace   text NOT NULL,
        embedding   real[] NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (event_id, model)
      )`);
    await q.query(`CREATE INDEX event_embeddings_namespace_model ON silver.event_embeddings (namespace, model)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE silver.event_embeddings`);
  }
}
