import { Sql } from '../../platform/postgres/sql';
import { PlannedFact } from '../derivation-plan';

/** Every judge decision of the batch with the candidates the judge saw, in decision order (one statement). */
export async function insertDecisions(tx: Sql, namespace: string, runId: string, judgeModel: string, facts: readonly PlannedFact[]): Promise<void> {
  if (facts.length === 0) return;
  await tx.execute(
    `INSERT INTO silver.judge_decisions (namespace, derivation_run_id, fact_id, statement, action, target_fact_id, reason, candidates, judge_model)
     SELECT $1, $2, x.fact_id, x.statement, x.action, x.target_fact_id, x.reason, x.candidates, $3
       FROM jsonb_to_recordset($4::jsonb) AS x(fact_id uuid, statement text, action text, target_fact_id uuid, reason text, candidates jsonb, ord int)
      ORDER BY x.ord`,
    [
      namespace,
      runId,
      judgeModel,
      JSON.stringify(
        facts.map((f, ord) => ({
          fact_id: f.action === 'SKIP' ? null : f.id,
          statement: f.statement,
          action: f.action,
          target_fact_id: f.targetId,
          reason: f.reason,
          candidates: f.candidates.map((c) => ({ id: c.id, statement: c.statement, similarity: Math.round(c.similarity * 1000) / 1000 })),
          ord,
        })),
      ),
    ],
  );
}
