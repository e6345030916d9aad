import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The event keyword channel reads what a turn says (`body`, its content without the speaker
 * label) and who said it (`speaker`) as separate fields of `(:Event)` (event_body_fulltext,
 * docs/search.md), written by the projector. Events projected before have neither, so the new
 * index does not find them: queue every event that is not erased for re-projection, once. The
 * projector reuses their stored embeddings (silver.event_embeddings): Neo4j writes, no embedder
 * time; a store with no events queues nothing.
 */
export class EventSpeakerReprojection1764400000970 implements MigrationInterface {
  name = 'EventSpeakerReprojection1764400000970';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload)
      SELECT e.namespace, 'event', e.id::text, 'upsert', jsonb_build_object('id', e.id::text)
        FROM bronze.events e
       WHERE NOT EXISTS (SELECT 1 FROM bronze.event_tombstones t WHERE t.event_id = e.id)
       ORDER BY e.namespace, e.occurred_at, e.id`);
  }

  async down(): Promise<void> {
    // Nothing to undo: re-projecting an event is idempotent.
  }
}
