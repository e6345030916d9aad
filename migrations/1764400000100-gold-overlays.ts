import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Human overlays (issue 13, docs/overlays.md): `gold.overlays` holds every version of every
 * overlay, append-only. A revision, a retraction or a rebuild's re-anchoring is a new row with
 * version + 1; the latest version is the overlay's state. Triggers refuse UPDATE and DELETE for
 * every role, so history cannot be rewritten (the runtime role's UPDATE grant on gold does not
 * reach this table's rows).
 */
export class GoldOverlays1764400000100 implements MigrationInterface {
  name = 'GoldOverlays1764400000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE gold.overlays (
        id                 uuid NOT NULL,
        version            integer NOT NULL CHECK (version >= 1),
        namespace          text NOT NULL,
        fact_id            uuid REFERENCES silver.facts(id),
        event_id           uuid,
        kind               text NOT NULL CHECK (kind IN ('EDIT', 'ANNOTATION', 'REDACTION')),
        exact              text NOT NULL CHECK (exact <> ''),
        prefix             text NOT NULL,
        suffix             text NOT NULL,
        span_start         integer NOT NULL CHECK (span_start >= 0),
        span_end           integer NOT NULL,
        text_hash          text NOT NULL,
        body               text,
        reason             text,
        author             text NOT NULL,
        author_id          uuid NOT NULL,
        changed_by         text NOT NULL,
        status             text NOT NULL CHECK (status IN ('ANCHORED', 'REANCHORED', 'ORPHANED', 'RETRACTED')),
        anchor_confidence  real CHECK (anchor_confidence >= 0 AND anchor_confidence <= 1),
        needs_review       boolean NOT NULL DEFAULT false,
        job_id             uuid,
        created_at         timestamptz NOT NULL,
        version_at         timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (id, version),
        CHECK ((fact_id IS NULL) <> (event_id IS NULL)),
        CHECK (event_id IS NULL OR kind = 'REDACTION'),
        CHECK (span_end = span_start + length(exact))
      )`);
    await q.query(`CREATE INDEX overlays_fact_idx ON gold.overlays (fact_id) WHERE fact_id IS NOT NULL`);
    await q.query(`CREATE INDEX overlays_event_idx ON gold.overlays (event_id) WHERE event_id IS NOT NULL`);
    await q.query(`CREATE INDEX overlays_review_idx ON gold.overlays (namespace, id) WHERE needs_review`);
    await q.query(`
      CREATE FUNCTION gold.overlays_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'gold.overlays is append-only: write a new version instead of %', TG_OP USING ERRCODE = 'restrict_violation';
      END $$`);
    await q.query(`CREATE TRIGGER overlays_no_update BEFORE UPDATE OR DELETE ON gold.overlays FOR EACH ROW EXECUTE FUNCTION gold.overlays_append_only()`);
    await q.query(`CREATE TRIGGER overlays_no_truncate BEFORE TRUNCATE ON gold.overlays FOR EACH STATEMENT EXECUTE FUNCTION gold.overlays_append_only()`);
    // The runtime role (when it exists yet; runtime-role.ts grants again at start) reads and appends.
    await q.query(`
      DO $$ BEGIN
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'medallion_runtime') THEN
          GRANT SELECT, INSERT ON gold.overlays TO medallion_runtime;
        END IF;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE gold.overlays`);
    await q.query(`DROP FUNCTION gold.overlays_append_only()`);
  }
}
