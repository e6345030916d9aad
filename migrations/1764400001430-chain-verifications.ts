import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The scheduled verify's results (issue 43 item 4, docs/operations.md "Scheduled verify"):
 * `ops.chain_verifications`, one row per run of the `verify_chain` job (a namespace's chain
 * recomputed from the database): intact, broken (with the first broken link) or error. The latest
 * row per namespace is the `chain_intact` quality check and the `medallion_chain_*` gauges.
 * Append-only (UPDATE, DELETE and TRUNCATE refused by a trigger, for every role); the trigger
 * function `ops.reject_history_mutation` serves the import tables too (migration 1764400001440).
 */
export class ChainVerifications1764400001430 implements MigrationInterface {
  name = 'ChainVerifications1764400001430';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ops.chain_verifications (
        id               bigserial PRIMARY KEY,
        namespace        text NOT NULL,
        job_id           uuid,
        started_at       timestamptz NOT NULL,
        finished_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
        result           text NOT NULL CHECK (result IN ('intact', 'broken', 'error')),
        links            bigint NOT NULL DEFAULT 0,
        retained         bigint NOT NULL DEFAULT 0,
        unsealed         bigint NOT NULL DEFAULT 0,
        broken_position  bigint,
        broken_kind      text,
        broken_id        text,
        broken_reason    text,
        error            text,
        CHECK ((result = 'broken') = (broken_reason IS NOT NULL)),
        CHECK ((result = 'error') = (error IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX chain_verifications_ns_idx ON ops.chain_verifications (namespace, id DESC)`);
    await q.query(`
      CREATE FUNCTION ops.reject_history_mutation() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION '%.% is append-only: % is not allowed', TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await q.query(
      `CREATE TRIGGER chain_verifications_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON ops.chain_verifications FOR EACH STATEMENT EXECUTE FUNCTION ops.reject_history_mutation()`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE ops.chain_verifications`);
    await q.query(`DROP FUNCTION ops.reject_history_mutation()`);
  }
}
