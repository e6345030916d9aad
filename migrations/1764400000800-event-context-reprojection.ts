import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The event keyword channel indexes each event with the turn before it (`context` on `(:Event)`,
 * docs/search.md), which the projector writes when it projects an event. Events projected before
 * that have none: queue every conversation turn that is not erased for re-projection, once. The
 * projector reuses their stored embeddings (silver.event_embeddings), so this costs Neo4j writes,
 * not embedder time, and a store with no events queues nothing.
 */
export class EventContextReprojection1764400000800 implements MigrationInterface {
  name = 'EventContextReprojection1764400000800';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload)
      SELECT e.namespace, 'event', e.id::text, 'upsert', jsonb_build_object('id', e.id::text)
        FROM bronze.events e
       WHERE e.conversation_id IS NOT NULL AND e.sequence_num IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM bronze.event_tombstones t WHERE t.event_id = e.id)
       ORDER BY e.namespace, e.occurred_at, e.id`);
  }

  async down(): Promise<void> {
    // Nothing to undo: re-projecting an event is idempotent.
  }
}
