import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Gold promotion (docs/gold.md): resolved entities, their Silver members, relationships between
 * them, and the log of every resolution step. Nothing here is ever deleted: a Gold entity or
 * relationship is retired (`retired_at`) and a membership removed (`removed_at`), each change
 * bumps `version`. The runtime role gets SELECT/INSERT/UPDATE on these tables (and USAGE on the
 * log's sequence) from `grantRuntimePrivileges` at start, which covers every table of `gold`.
 * Room is left for `gold.review_items` (issue 12 item 3): the log's `action` and `step` are text.
 */
export class CreateGold1764400000300 implements MigrationInterface {
  name = 'CreateGold1764400000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    // The trigram step compares names inside a namespace: an index on Silver's normalised names.
    await q.query(`CREATE INDEX silver_entities_name_key_trgm_idx ON silver.entities USING gin (name_key gin_trgm_ops)`);
    await q.query(`
      CREATE TABLE gold.entities (
        id            uuid PRIMARY KEY,
        namespace     text NOT NULL,
        type          text NOT NULL,
        name          text NOT NULL,
        name_key      text NOT NULL,
        aliases       text[] NOT NULL DEFAULT '{}',
        confidence    real NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
        source_count  integer NOT NULL,
        version       integer NOT NULL DEFAULT 1,
        promoted_at   timestamptz NOT NULL DEFAULT now(),
        updated_at    timestamptz NOT NULL DEFAULT now(),
        retired_at    timestamptz,
        retired_reason text
      )`);
    await q.query(`CREATE INDEX gold_entities_ns_idx ON gold.entities (namespace, id)`);
    await q.query(`CREATE INDEX gold_entities_name_trgm_idx ON gold.entities USING gin (name_key gin_trgm_ops)`);
    await q.query(`
      CREATE TABLE gold.entity_members (
        gold_entity_id    uuid NOT NULL REFERENCES gold.entities(id),
        silver_entity_id  uuid NOT NULL REFERENCES silver.entities(id),
        namespace         text NOT NULL,
        step              text NOT NULL,
        added_at          timestamptz NOT NULL DEFAULT now(),
        removed_at        timestamptz,
        removed_reason    text
      )`);
    // A Silver entity belongs to at most one Gold entity at a time.
    await q.query(`CREATE UNIQUE INDEX gold_entity_members_live_idx ON gold.entity_members (silver_entity_id) WHERE removed_at IS NULL`);
    await q.query(`CREATE INDEX gold_entity_members_gold_idx ON gold.entity_members (gold_entity_id) WHERE removed_at IS NULL`);
    // Pairs a person split apart: promotion never puts them together again.
    await q.query(`
      CREATE TABLE gold.entity_separations (
        namespace   text NOT NULL,
        silver_a    uuid NOT NULL,
        silver_b    uuid NOT NULL,
        created_by  text,
        created_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (silver_a, silver_b),
        CHECK (silver_a < silver_b)
      )`);
    await q.query(`
      CREATE TABLE gold.relationships (
        id              uuid PRIMARY KEY,
        namespace       text NOT NULL,
        type            text NOT NULL,
        source_gold_id  uuid NOT NULL REFERENCES gold.entities(id),
        target_gold_id  uuid NOT NULL REFERENCES gold.entities(id),
        confidence      real NOT NULL,
        valid_from      timestamptz NOT NULL,
        valid_to        timestamptz,
        source_count    integer NOT NULL,
        silver_ids      uuid[] NOT NULL,
        version         integer NOT NULL DEFAULT 1,
        promoted_at     timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now(),
        retired_at      timestamptz,
        CHECK (valid_to IS NULL OR valid_to >= valid_from)
      )`);
    await q.query(
      `CREATE UNIQUE INDEX gold_relationships_live_idx ON gold.relationships (namespace, type, source_gold_id, target_gold_id) WHERE retired_at IS NULL`,
    );
    await q.query(`CREATE INDEX gold_relationships_source_idx ON gold.relationships (source_gold_id)`);
    await q.query(`CREATE INDEX gold_relationships_target_idx ON gold.relationships (target_gold_id)`);
    await q.query(`
      CREATE TABLE gold.promotion_log (
        id                    bigserial PRIMARY KEY,
        namespace             text NOT NULL,
        run_id                uuid NOT NULL,
        action                text NOT NULL,
        step                  text NOT NULL,
        gold_entity_id        uuid REFERENCES gold.entities(id),
        gold_relationship_id  uuid REFERENCES gold.relationships(id),
        silver_ids            uuid[] NOT NULL DEFAULT '{}',
        scores                jsonb NOT NULL DEFAULT '{}',
        reason                text NOT NULL,
        judge_model           text,
        prompt_version        text,
        created_by            text,
        created_at            timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX gold_promotion_log_entity_idx ON gold.promotion_log (gold_entity_id)`);
    await q.query(`CREATE INDEX gold_promotion_log_ns_idx ON gold.promotion_log (namespace, id)`);
    await q.query(`CREATE INDEX outbox_pending_batch_idx ON ops.outbox ((payload->>'batch')) WHERE processed_at IS NULL AND aggregate_type LIKE 'gold_%'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ops.outbox_pending_batch_idx`);
    for (const t of ['promotion_log', 'relationships', 'entity_separations', 'entity_members', 'entities']) await q.query(`DROP TABLE gold.${t}`);
    await q.query(`DROP INDEX silver.silver_entities_name_key_trgm_idx`);
  }
}
