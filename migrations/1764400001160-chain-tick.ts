import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The hash-chain sealer's change detector (docs/operations.md "Sealing"): every statement
 * that inserts into one of the four chained tables takes one value of `ops.chain_tick`, so an idle
 * sealer round is one read of the sequence instead of a scan per namespace.
 *
 * A sequence, not a table, on purpose: `nextval` is not transactional and takes no row lock, so
 * concurrent writers (ingest batches, a long derivation transaction) never wait on one another or
 * on the sealer; ingest keeps its single statement. One value per statement (a statement-level
 * trigger), not per row. The trigger function is SECURITY DEFINER so any role that may insert the
 * rows may tick. The sealer pairs the value it read with its snapshots to cover transactions that
 * were still open (gold/portability/chain-sealer.ts); writes that bypass triggers
 * (`session_replication_role = replica`, a restore) are found by its periodic full sweep.
 */
export class ChainTick1764400001160 implements MigrationInterface {
  name = 'ChainTick1764400001160';

  private readonly tables = ['bronze.events', 'gold.overlays', 'access.approval_log', 'silver.judge_decisions'] as const;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE ops.chain_tick AS bigint NO CYCLE CACHE 1`);
    await q.query(`
      CREATE FUNCTION ops.chain_tick() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
      BEGIN
        PERFORM nextval('ops.chain_tick');
        RETURN NULL;
      END $$`);
    await q.query(`REVOKE ALL ON FUNCTION ops.chain_tick() FROM PUBLIC`);
    for (const t of this.tables) await q.query(`CREATE TRIGGER chain_tick AFTER INSERT ON ${t} FOR EACH STATEMENT EXECUTE FUNCTION ops.chain_tick()`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of this.tables) await q.query(`DROP TRIGGER chain_tick ON ${t}`);
    await q.query(`DROP FUNCTION ops.chain_tick()`);
    await q.query(`DROP SEQUENCE ops.chain_tick`);
  }
}
