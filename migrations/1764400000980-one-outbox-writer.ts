import { MigrationInterface, QueryRunner } from 'typeorm';
import { FunctionEdit, rewriteFunction } from './function-edit';

/**
 * One writer of `ops.outbox` on both sides of the wire. `ops.enqueue_outbox(rows jsonb)` takes a
 * JSON array of `{namespace, type, id, payload}` and inserts them in array order (outbox ids follow
 * it); `src/platform/outbox.ts` calls it for every row the service queues, and the two database
 * functions that queue what an erasure changed (`bronze.destroy_event`, migration 1764400000960,
 * and the `gold.erase_event_copies` trigger, migration 1764400000700) call it instead of spelling
 * the table's columns themselves. So a change to the outbox's shape is made in this function alone.
 *
 * The two functions are long and otherwise unchanged, so this migration edits their live
 * definitions (`pg_get_functiondef`) rather than restating them: it replaces each one's
 * `INSERT INTO ops.outbox` statement with a call, and fails if the statement it expects is not
 * there (a definition changed since, which a later migration must handle by hand).
 *
 * Older migrations that queued re-projections once (1764400000800, 1764400000970) ran before this
 * one on every database and are history; they are left as they were.
 */
export class OneOutboxWriter1764400000980 implements MigrationInterface {
  name = 'OneOutboxWriter1764400000980';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION ops.enqueue_outbox(p_rows jsonb) RETURNS integer
      LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
        WITH ins AS (
          INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload)
          SELECT x.namespace, x.type, x.id, 'upsert', x.payload
            FROM jsonb_array_elements(coalesce(p_rows, '[]'::jsonb)) WITH ORDINALITY AS e(row, ord),
                 LATERAL jsonb_to_record(e.row) AS x(namespace text, type text, id text, payload jsonb)
           ORDER BY e.ord
          RETURNING 1
        )
        SELECT count(*)::integer FROM ins
      $$`);
    await q.query(
      `COMMENT ON FUNCTION ops.enqueue_outbox(jsonb) IS 'The one writer of ops.outbox: rows [{namespace, type, id, payload}] in order (src/platform/outbox.ts)'`,
    );
    for (const edit of EDITS) await rewriteFunction(q, edit);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const edit of EDITS) await rewriteFunction(q, { ...edit, from: edit.to, to: edit.from });
    await q.query(`DROP FUNCTION ops.enqueue_outbox(jsonb)`);
  }
}

const EDITS: FunctionEdit[] = [
  {
    signature: 'bronze.destroy_event(uuid, uuid, uuid, text, text)',
    from: `  INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload)
  SELECT k.namespace, x.t, x.id::text, 'upsert', jsonb_build_object('id', x.id::text, 'erasure', p_event_id::text)
    FROM (SELECT 'event' AS t, p_event_id AS id, 0 AS ord
          UNION ALL SELECT 'fact', f, 1 FROM unnest(erased || reopened) AS f
          UNION ALL SELECT 'entity', n, 2 FROM unnest(gone_entities) AS n
          UNION ALL SELECT 'relationship', r, 3 FROM unnest(gone_rels || kept_rels) AS r) x
   ORDER BY x.ord, x.id;`,
    to: `  PERFORM ops.enqueue_outbox((
    SELECT jsonb_agg(jsonb_build_object('namespace', k.namespace, 'type', x.t, 'id', x.id::text,
                                        'payload', jsonb_build_object('id', x.id::text, 'erasure', p_event_id::text))
                     ORDER BY x.ord, x.id)
      FROM (SELECT 'event' AS t, p_event_id AS id, 0 AS ord
            UNION ALL SELECT 'fact', f, 1 FROM unnest(erased || reopened) AS f
            UNION ALL SELECT 'entity', n, 2 FROM unnest(gone_entities) AS n
            UNION ALL SELECT 'relationship', r, 3 FROM unnest(gone_rels || kept_rels) AS r) x));`,
  },
  {
    signature: 'gold.erase_event_copies()',
    from: `        INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload)
        SELECT NEW.namespace, 'gold_entity', t::text, 'upsert', jsonb_build_object('id', t::text, 'batch', batch, 'erasure', NEW.event_id::text)
          FROM unnest(touched) AS t;`,
    to: `        PERFORM ops.enqueue_outbox((
          SELECT jsonb_agg(jsonb_build_object('namespace', NEW.namespace, 'type', 'gold_entity', 'id', t::text,
                                              'payload', jsonb_build_object('id', t::text, 'batch', batch, 'erasure', NEW.event_id::text))
                           ORDER BY o)
            FROM unnest(touched) WITH ORDINALITY AS u(t, o)));`,
  },
];
