import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Gold conflict rules and the review queue (docs/gold-review.md).
 * - `gold.claim_decisions`: append-only, one row per decision about a conflict among the current
 *   Silver facts of one Gold entity: the promotion's (a supersession by rule, or "queued") and the
 *   reviewer's. One row per (namespace, conflict key, source): a second promotion run writes none.
 *   `loser_ids` are the facts superseded at Gold from `superseded_from` on (GIN for the reads).
 * - `gold.review_items`: what promotion did not decide; `status` moves once from PENDING to
 *   RESOLVED or DISMISSED. One item per (namespace, conflict key).
 * Silver is never written. The runtime role gets SELECT/INSERT/UPDATE (no DELETE) on both from
 * `grantRuntimePrivileges` at start, which covers every table of `gold`.
 */
export class GoldReview1764400000500 implements MigrationInterface {
  name = 'GoldReview1764400000500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE gold.review_items (
        id                 uuid PRIMARY KEY,
        namespace          text NOT NULL,
        kind               text NOT NULL,
        conflict_key       text NOT NULL,
        gold_entity_id     uuid NOT NULL REFERENCES gold.entities(id),
        silver_entity_ids  uuid[] NOT NULL,
        fact_ids           uuid[] NOT NULL,
        rule               text NOT NULL,
        reason             text NOT NULL,
        status             text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'RESOLVED', 'DISMISSED')),
        decision           text,
        note               text,
        decided_by         text,
        decided_at         timestamptz,
        run_id             uuid NOT NULL,
        created_at         timestamptz NOT NULL DEFAULT now(),
        UNIQUE (namespace, conflict_key),
        CHECK ((status = 'PENDING') = (decided_at IS NULL))
      )`);
    await q.query(`CREATE INDEX gold_review_items_queue_idx ON gold.review_items (namespace, status, created_at, id)`);
    await q.query(`
      CREATE TABLE gold.claim_decisions (
        id               uuid PRIMARY KEY,
        namespace        text NOT NULL,
        conflict_key     text NOT NULL,
        source           text NOT NULL CHECK (source IN ('promotion', 'review')),
        gold_entity_id   uuid NOT NULL REFERENCES gold.entities(id),
        kind             text NOT NULL,
        rule             text NOT NULL,
        outcome          text NOT NULL CHECK (outcome IN ('supersede', 'queue', 'keep_all', 'dismiss')),
        fact_ids         uuid[] NOT NULL,
        winner_ids       uuid[] NOT NULL DEFAULT '{}',
        loser_ids        uuid[] NOT NULL DEFAULT '{}',
        superseded_from  timestamptz,
        scores           jsonb NOT NULL DEFAULT '{}',
        reason           text NOT NULL,
        review_item_id   uuid REFERENCES gold.review_items(id),
        run_id           uuid NOT NULL,
        decided_by       text,
        created_at       timestamptz NOT NULL DEFAULT now(),
        UNIQUE (namespace, conflict_key, source),
        CHECK ((outcome = 'supersede') = (superseded_from IS NOT NULL AND cardinality(loser_ids) > 0))
      )`);
    await q.query(`CREATE INDEX gold_claim_decisions_losers_idx ON gold.claim_decisions USING gin (loser_ids)`);
    await q.query(`CREATE INDEX gold_claim_decisions_entity_idx ON gold.claim_decisions (gold_entity_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE gold.claim_decisions`);
    await q.query(`DROP TABLE gold.review_items`);
  }
}
