import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An approved `destroyEvent` erased the event's text from Bronze and Silver but left copies of it
 * in Gold: overlays quote the fact or event text they are anchored to (`exact`, `prefix`,
 * `suffix`) and their notes may repeat it (`body`, `reason`); a Gold entity keeps the names of
 * Silver entities the erasure retired and scrubbed; promotion log reasons quote those names.
 *
 * Here the erasure reaches Gold, in the same transaction, through a trigger on the tombstone that
 * `bronze.destroy_event` writes last (so the function itself is unchanged):
 * - every version of every overlay on a fact the erasure scrubbed, or on the event itself: its
 *   quote becomes `[erased]` (prefix, suffix, body and reason cleared, hash replaced), status and
 *   history kept. `gold.overlays` stays append-only for everything else: its guard lets exactly
 *   this UPDATE through, only while the call stack's outermost frame is `bronze.destroy_event`
 *   (the same test as the Bronze row guard; setting the flag by hand opens nothing);
 * - a Gold entity left without a live member that is not erased: name `[erased]`, aliases
 *   cleared, retired (reason `erased`), version + 1, queued for the Gold projector; a Gold entity
 *   that still has live members loses the erased names from its aliases, and when its name was
 *   one of them takes a live member's name (the next promotion run refreshes it as usual);
 * - promotion log rows about the erased Silver entities: reason `[erased]`.
 */
export class ErasureReachesGold1764400000700 implements MigrationInterface {
  name = 'ErasureReachesGold1764400000700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION gold.overlays_append_only() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
      DECLARE
        stack text;
        frames text[];
      BEGIN
        IF TG_OP = 'UPDATE' AND coalesce(current_setting('medallion.erasing_event', true), '') <> '' THEN
          GET DIAGNOSTICS stack = PG_CONTEXT;
          frames := regexp_split_to_array(stack, E'\\n');
          IF frames[array_length(frames, 1)] ~ '^PL/pgSQL function bronze\\.destroy_event\\(uuid,uuid,uuid,text,text\\) line [0-9]+ at SQL statement$'
             AND NEW.exact = '[erased]' AND NEW.prefix = '' AND NEW.suffix = '' AND NEW.body IS NULL AND NEW.reason IS NULL
             AND (NEW.id, NEW.version, NEW.namespace, NEW.fact_id, NEW.event_id, NEW.kind, NEW.span_start, NEW.author, NEW.author_id,
                  NEW.changed_by, NEW.status, NEW.created_at, NEW.version_at)
                 IS NOT DISTINCT FROM
                 (OLD.id, OLD.version, OLD.namespace, OLD.fact_id, OLD.event_id, OLD.kind, OLD.span_start, OLD.author, OLD.author_id,
                  OLD.changed_by, OLD.status, OLD.created_at, OLD.version_at) THEN
            RETURN NEW;
          END IF;
        END IF;
        RAISE EXCEPTION 'gold.overlays is append-only: write a new version instead of %', TG_OP USING ERRCODE = 'restrict_violation';
      END $$`);

    await q.query(`
      CREATE FUNCTION gold.erase_event_copies() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
      DECLARE
        erased_facts uuid[];
        erased_entities uuid[];
        erased_names text[];
        retired uuid[];
        touched uuid[];
        batch text := 'erasure:' || NEW.event_id::text;
      BEGIN
        -- The facts this erasure scrubbed keep their source row (the kept ones lost it).
        erased_facts := ARRAY(SELECT DISTINCT s.fact_id FROM silver.fact_sources s JOIN silver.facts f ON f.id = s.fact_id
                               WHERE s.event_id = NEW.event_id AND f.erased_at IS NOT NULL);
        PERFORM set_config('medallion.erasing_event', NEW.event_id::text, true);
        UPDATE gold.overlays o SET exact = '[erased]', prefix = '', suffix = '', body = NULL, reason = NULL,
                                   span_end = o.span_start + 8, text_hash = 'erased'
         WHERE (o.fact_id = ANY (erased_facts) OR o.event_id = NEW.event_id) AND o.exact IS DISTINCT FROM '[erased]';
        PERFORM set_config('medallion.erasing_event', '', true);

        -- Silver entities scrubbed by an erasure carry the marker name_key destroy_event gives them.
        erased_entities := ARRAY(SELECT n.id FROM silver.entities n
                                  WHERE n.namespace = NEW.namespace AND n.name_key = '[erased]:' || n.id::text
                                    AND EXISTS (SELECT 1 FROM gold.entity_members m WHERE m.silver_entity_id = n.id));
        IF cardinality(erased_entities) = 0 THEN
          RETURN NULL;
        END IF;
        -- Their former names are gone from Silver; the Gold rows that copied them still hold them.
        -- A Gold name or alias that no live member carries any more is an erased one.
        WITH g AS (
          SELECT DISTINCT m.gold_entity_id AS id FROM gold.entity_members m WHERE m.silver_entity_id = ANY (erased_entities)
        ), live AS (
          SELECT m.gold_entity_id AS id, n.name, n.name_key, n.aliases FROM gold.entity_members m
            JOIN silver.entities n ON n.id = m.silver_entity_id
           WHERE m.gold_entity_id IN (SELECT id FROM g) AND m.removed_at IS NULL AND n.retired_at IS NULL
        ), kept AS (
          SELECT l.id, array_agg(DISTINCT x.v) AS names,
                 (array_agg(l.name ORDER BY l.name, l.name_key))[1] AS first_name,
                 (array_agg(l.name_key ORDER BY l.name, l.name_key))[1] AS first_key
            FROM live l, LATERAL (SELECT lower(l.name) UNION SELECT lower(a) FROM unnest(l.aliases) AS a) AS x(v)
           GROUP BY l.id
        ), target AS (
          SELECT g.id, k.id IS NULL AS gone,
                 CASE WHEN k.id IS NULL THEN '[erased]' WHEN lower(e.name) = ANY (k.names) THEN e.name ELSE k.first_name END AS name,
                 CASE WHEN k.id IS NULL THEN '[erased]:' || e.id::text WHEN lower(e.name) = ANY (k.names) THEN e.name_key ELSE k.first_key END AS name_key,
                 CASE WHEN k.id IS NULL THEN '{}'::text[]
                      ELSE ARRAY(SELECT a FROM unnest(e.aliases) AS a WHERE lower(a) = ANY (k.names)) END AS aliases
            FROM g JOIN gold.entities e ON e.id = g.id LEFT JOIN kept k ON k.id = g.id
        ), upd AS (
          UPDATE gold.entities e
             SET name = t.name, name_key = t.name_key,
                 aliases = ARRAY(SELECT a FROM unnest(t.aliases) AS a WHERE lower(a) <> lower(t.name)),
                 retired_at = CASE WHEN t.gone THEN coalesce(e.retired_at, clock_timestamp()) ELSE e.retired_at END,
                 retired_reason = CASE WHEN t.gone THEN 'erased' ELSE e.retired_reason END,
                 version = e.version + 1, updated_at = clock_timestamp()
            FROM target t
           WHERE e.id = t.id AND (t.gone OR e.name IS DISTINCT FROM t.name OR e.aliases IS DISTINCT FROM t.aliases)
          RETURNING e.id, t.gone
        )
        SELECT coalesce(array_agg(id), '{}'), coalesce(array_agg(id) FILTER (WHERE gone), '{}') INTO touched, retired FROM upd;
        UPDATE gold.promotion_log l SET reason = '[erased]'
         WHERE l.namespace = NEW.namespace AND l.silver_ids && erased_entities AND l.reason <> '[erased]';
        INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload)
        SELECT NEW.namespace, 'gold_entity', t::text, 'upsert', jsonb_build_object('id', t::text, 'batch', batch, 'erasure', NEW.event_id::text)
          FROM unnest(touched) AS t;
        RETURN NULL;
      END $$`);
    await q.query(`REVOKE ALL ON FUNCTION gold.erase_event_copies() FROM PUBLIC`);
    await q.query(`CREATE TRIGGER event_tombstones_erase_gold AFTER INSERT ON bronze.event_tombstones
                   FOR EACH ROW EXECUTE FUNCTION gold.erase_event_copies()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER event_tombstones_erase_gold ON bronze.event_tombstones`);
    await q.query(`DROP FUNCTION gold.erase_event_copies()`);
    await q.query(`
      CREATE OR REPLACE FUNCTION gold.overlays_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'gold.overlays is append-only: write a new version instead of %', TG_OP USING ERRCODE = 'restrict_violation';
      END $$`);
  }
}
