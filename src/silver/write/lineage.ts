import { Sql } from '../../platform/postgres/sql';

/** Statement similarity (pg_trgm) at or above which a retired fact and a re-derived one sharing a source event are the same fact. */
export const LINEAGE_MIN_SIMILARITY = 0.5;

/**
 * During a rebuild, links the facts this write re-derived (or corroborated) to the facts the
 * rebuild retired that rest on the same source events and say nearly the same thing: each new
 * fact to its most similar retired fact, and each retired fact to its most similar new one (so a
 * split or a merge keeps both links). A retired fact with no link was dropped by the rebuild.
 * Retired "by the rebuild" = recorded before the job started, retired since. One statement.
 */
export async function recordLineage(
  tx: Sql,
  namespace: string,
  jobId: string,
  runId: string,
  factIds: readonly string[],
  eventIds: readonly string[],
): Promise<void> {
  if (factIds.length === 0) return;
  await tx.execute(
    `WITH job AS (SELECT started_at FROM ops.jobs WHERE id = $2),
     pairs AS (
       SELECT o.id AS old_id, n.id AS new_id, count(DISTINCT sn.event_id)::int AS shared, similarity(o.statement, n.statement) AS sim
         FROM silver.facts n
         JOIN silver.fact_sources sn ON sn.fact_id = n.id AND sn.event_id = ANY($5::uuid[])
         JOIN silver.fact_sources so ON so.event_id = sn.event_id AND so.fact_id <> n.id
         JOIN silver.facts o ON o.id = so.fact_id
         CROSS JOIN job
        WHERE n.id = ANY($4::uuid[]) AND n.namespace = $1
          AND n.derivation_run_id IN (SELECT id FROM silver.derivation_runs WHERE job_id = $2)
          AND o.namespace = $1 AND o.recorded_at < job.started_at AND o.retired_at >= job.started_at
        GROUP BY o.id, n.id, o.statement, n.statement
     ), ranked AS (
       SELECT *, row_number() OVER (PARTITION BY new_id ORDER BY sim DESC, shared DESC, old_id) AS by_new,
                 row_number() OVER (PARTITION BY old_id ORDER BY sim DESC, shared DESC, new_id) AS by_old
         FROM pairs WHERE sim >= $6
     )
     INSERT INTO silver.fact_lineage (old_fact_id, new_fact_id, namespace, job_id, derivation_run_id, shared_events, similarity)
     SELECT old_id, new_id, $1, $2, $3, shared, LEAST(1, sim) FROM ranked WHERE by_new = 1 OR by_old = 1
     ON CONFLICT (old_fact_id, new_fact_id) DO NOTHING`,
    [namespace, jobId, runId, factIds, eventIds, LINEAGE_MIN_SIMILARITY],
  );
}
