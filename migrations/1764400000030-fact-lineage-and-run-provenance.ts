import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two traces Gold needs (issue 11 items 4 and 8):
 * - `silver.fact_lineage`: a rebuild retires facts and re-derives them under new ids; each row
 *   links a retired fact to the fact that replaced it (they share a source event and a similar
 *   statement), so overlays, reviews and gold links can follow a fact through rebuilds.
 * - `derivation_runs.extractor`, `extraction_prompt_version`, `judge_prompt_version`: with the
 *   models already there, every fact traces to the extractor, prompt versions and models that
 *   made it. Null on runs written before this migration (and prompt versions for adapters that
 *   use no prompt, such as the offline rules).
 */
export class FactLineageAndRunProvenance1764400000030 implements MigrationInterface {
  name = 'FactLineageAndRunProvenance1764400000030';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE silver.derivation_runs
        ADD COLUMN extractor text,
        ADD COLUMN extraction_prompt_version text,
        ADD COLUMN judge_prompt_version text`);
    await q.query(`
      CREATE TABLE silver.fact_lineage (
        old_fact_id        uuid NOT NULL REFERENCES silver.facts(id),
        new_fact_id        uuid NOT NULL REFERENCES silver.facts(id),
        namespace          text NOT NULL,
        job_id             uuid,
        derivation_run_id  uuid NOT NULL REFERENCES silver.derivation_runs(id),
        shared_events      integer NOT NULL CHECK (shared_events > 0),
        similarity         real NOT NULL CHECK (similarity >= 0 AND similarity <= 1),
        linked_at          timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (old_fact_id, new_fact_id),
        CHECK (old_fact_id <> new_fact_id)
      )`);
    await q.query(`CREATE INDEX fact_lineage_new_idx ON silver.fact_lineage (new_fact_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE silver.fact_lineage`);
    await q.query(`ALTER TABLE silver.derivation_runs DROP COLUMN extractor, DROP COLUMN extraction_prompt_version, DROP COLUMN judge_prompt_version`);
  }
}
