import { MigrationInterface, QueryRunner } from 'typeorm';
import { FunctionEdit, rewriteFunction } from './function-edit';

/**
 * A judge's reason quotes the statements it compared ("a change: "…" replaces "…""), so after an
 * approved erasure the reason of a later decision that superseded, updated or corroborated an
 * erased fact still held the erased words (issue 43). `bronze.destroy_event` now scrubs the reason
 * (`[erased]`) of every decision that names an erased fact: as the fact it became, as its target,
 * or among its candidates (a model's free-text reason may quote any of them). The hash chain
 * accepts exactly that scrub where the erasure context names such a fact (gold/portability/chain.ts).
 *
 * Back-fill: decisions about facts erased before this migration (as fact or target) get the same
 * scrub. Decisions whose erased candidates were already filtered out cannot be told apart any more
 * and keep their reason (docs/approvals.md, "Not covered").
 */
export class ErasureScrubsJudgeReasons1764400001450 implements MigrationInterface {
  name = 'ErasureScrubsJudgeReasons1764400001450';

  async up(q: QueryRunner): Promise<void> {
    for (const edit of EDITS) await rewriteFunction(q, edit);
    await q.query(
      `UPDATE silver.judge_decisions d SET reason = '[erased]'
        WHERE d.reason <> '[erased]'
          AND EXISTS (SELECT 1 FROM silver.facts f WHERE f.erased_at IS NOT NULL AND (f.id = d.fact_id OR f.id = d.target_fact_id))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const edit of [...EDITS].reverse()) await rewriteFunction(q, { ...edit, from: edit.to, to: edit.from });
  }
}

const SIGNATURE = 'bronze.destroy_event(uuid, uuid, uuid, text, text)';
const EDITS: FunctionEdit[] = [
  {
    signature: SIGNATURE,
    from: `UPDATE silver.judge_decisions d SET statement = '[erased]', candidates = '[]'::jsonb`,
    to: `UPDATE silver.judge_decisions d SET statement = '[erased]', reason = '[erased]', candidates = '[]'::jsonb`,
  },
  {
    signature: SIGNATURE,
    from: `UPDATE silver.judge_decisions d
     SET candidates = COALESCE(`,
    to: `UPDATE silver.judge_decisions d
     SET reason = '[erased]', candidates = COALESCE(`,
  },
];
