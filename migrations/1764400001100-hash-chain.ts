import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tamper evidence (issue 28, docs/operations.md "Tamper evidence"): `ops.hash_chain` holds
 * one link per sealed record of a namespace (Bronze events, overlay versions, approval log entries,
 * judge decisions), in the order the sealer saw them committed. Each link stores the record's
 * item hash (over the fields erasure never changes plus digests of those it may scrub, `parts`),
 * the previous link's hash and its own: `hash = sha256(JCS({seq, prev, itemHash}))`.
 *
 * Append-only like Bronze (UPDATE, DELETE and TRUNCATE refused for every role). The chain is
 * written by the sealer stage alone (gold/portability/chain-sealer.ts) under a per-namespace
 * advisory lock, never on the ingest path, so ingest stays one statement per batch.
 */
export class HashChain1764400001100 implements MigrationInterface {
  name = 'HashChain1764400001100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ops.hash_chain (
        namespace   text NOT NULL,
        seq         bigint NOT NULL CHECK (seq >= 1),
        kind        text NOT NULL CHECK (kind IN ('event', 'overlay', 'approval_log', 'judge_decision')),
        item_id     text NOT NULL,
        item_hash   text NOT NULL CHECK (item_hash ~ '^[0-9a-f]{64}$'),
        parts       jsonb NOT NULL DEFAULT '{}'::jsonb,
        prev_hash   text NOT NULL,
        hash        text NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
        sealed_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (namespace, seq),
        UNIQUE (namespace, kind, item_id)
      )`);
    await q.query(`
      CREATE FUNCTION ops.hash_chain_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'ops.hash_chain is append-only: % is not allowed', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await q.query(`CREATE TRIGGER hash_chain_no_update_delete BEFORE UPDATE OR DELETE ON ops.hash_chain
                   FOR EACH ROW EXECUTE FUNCTION ops.hash_chain_append_only()`);
    await q.query(`CREATE TRIGGER hash_chain_no_truncate BEFORE TRUNCATE ON ops.hash_chain
                   FOR EACH STATEMENT EXECUTE FUNCTION ops.hash_chain_append_only()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE ops.hash_chain`);
    await q.query(`DROP FUNCTION ops.hash_chain_append_only()`);
  }
}
