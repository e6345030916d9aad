import { col, Sql } from '../../platform/postgres/sql';

/**
 * New evidence brings a pruned fact back (docs/lifecycle.md): when this batch derived a fact whose
 * statement is that of a fact pruned in the namespace, the pruned fact is restored unchanged (same
 * id, statement and scores) with the new fact's sources added, and the new row, a duplicate of it,
 * is retired at once with reason 'duplicate' (kept for lineage). Three statements, only when the
 * namespace has pruned facts with those statements (a lookup on the partial index of pruned facts).
 * Returns the restored facts' ids, the older facts they superseded (to re-project: they hold the
 * SUPERSEDES edge from them), and the retired duplicates' ids.
 */
export async function restorePrunedTwins(
  tx: Sql,
  namespace: string,
  newFactIds: readonly string[],
): Promise<{ restored: string[]; older: string[]; duplicates: string[] }> {
  if (newFactIds.length === 0) return { restored: [], older: [], duplicates: [] };
  const twins = await tx.rows(
    `SELECT DISTINCT ON (n.id) n.id::text AS new_id, p.id::text AS pruned_id
       FROM silver.facts n
       JOIN silver.facts p ON p.namespace = $1 AND p.retired_reason = 'pruned' AND p.statement = n.statement
      WHERE n.id = ANY($2::uuid[]) AND n.namespace = $1
      ORDER BY n.id, p.recorded_at, p.id`,
    [namespace, newFactIds],
    (r) => ({ newId: col.string(r, 'new_id'), prunedId: col.string(r, 'pruned_id') }),
  );
  if (twins.length === 0) return { restored: [], older: [], duplicates: [] };
  const pairs = JSON.stringify(twins.map((t) => ({ new_id: t.newId, pruned_id: t.prunedId })));
  await tx.execute(
    `INSERT INTO silver.fact_sources (fact_id, event_id, span_start, span_end, quote)
     SELECT x.pruned_id, s.event_id, s.span_start, s.span_end, s.quote
       FROM jsonb_to_recordset($1::jsonb) AS x(new_id uuid, pruned_id uuid) JOIN silver.fact_sources s ON s.fact_id = x.new_id
     ON CONFLICT DO NOTHING`,
    [pairs],
  );
  const restored = await tx.returning(
    `UPDATE silver.facts f SET retired_at = NULL, retired_reason = NULL
       WHERE f.id IN (SELECT x.pruned_id FROM jsonb_to_recordset($1::jsonb) AS x(new_id uuid, pruned_id uuid)) AND f.retired_reason = 'pruned'
      RETURNING f.id::text AS id`,
    [pairs],
    (r) => col.string(r, 'id'),
  );
  const duplicates = await tx.returning(
    `UPDATE silver.facts f SET retired_at = now(), retired_reason = 'duplicate'
       WHERE f.id IN (SELECT x.new_id FROM jsonb_to_recordset($1::jsonb) AS x(new_id uuid, pruned_id uuid)) AND f.retired_at IS NULL
      RETURNING f.id::text AS id`,
    [pairs],
    (r) => col.string(r, 'id'),
  );
  // The older facts a restored one superseded hold the SUPERSEDES edge from it in the graph: re-projected with it.
  const older = await tx.rows(`SELECT f.id::text AS id FROM silver.facts f WHERE f.superseded_by = ANY($1::uuid[])`, [restored], (r) => col.string(r, 'id'));
  return { restored, older, duplicates };
}
