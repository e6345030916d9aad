import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `silver.entity_mentions`: where each Silver entity is named (event and span), as the extractor
 * found it. Until now Silver kept an entity's evidence only through the facts and relationships
 * that have it as subject, object or end, so a person the user talks about ("I had lunch with Bob
 * Smith") had no evidence at all and Gold promotion deferred it for ever (docs/gold.md, "Gate").
 * Promotion counts the events that name an entity, and `about` / `GoldEntity.facts` read the facts
 * stated in the sentence that names it. Rows are never deleted; a rebuild retires the entity and
 * writes new rows for its successor.
 */
export class SilverEntityMentions1764400000910 implements MigrationInterface {
  name = 'SilverEntityMentions1764400000910';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE silver.entity_mentions (
        entity_id    uuid NOT NULL REFERENCES silver.entities(id),
        event_id     uuid NOT NULL,
        namespace    text NOT NULL,
        span_start   integer NOT NULL,
        span_end     integer NOT NULL,
        recorded_at  timestamptz NOT NULL DEFAULT now(),
        CHECK (span_end >= span_start),
        UNIQUE (entity_id, event_id, span_start, span_end)
      )`);
    await q.query(`CREATE INDEX entity_mentions_event_idx ON silver.entity_mentions (event_id)`);
    await q.query(`CREATE INDEX entity_mentions_ns_idx ON silver.entity_mentions (namespace, entity_id)`);
    // A promotion run asks whether derivation committed in its namespace while it ran (src/gold/promotion/promotion-trigger.ts).
    await q.query(`CREATE INDEX derivation_runs_ns_time_idx ON silver.derivation_runs (namespace, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX silver.derivation_runs_ns_time_idx`);
    await q.query(`DROP TABLE silver.entity_mentions`);
  }
}
