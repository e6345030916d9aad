import { enqueueOutbox, outboxRows } from '../platform/outbox';
import { col, Sql } from '../platform/postgres/sql';

/** The events a rebuild covers: occurredAt in [from, to), either end open when null. */
export interface RebuildWindow {
  from: string | null;
  to: string | null;
}

export interface RebuildStart {
  retiredFacts: number;
  reopenedFacts: number;
  requeuedEvents: number;
}

export interface RebuildProgress {
  done: number;
  failed: number;
  pending: number;
}

const ids = (r: Record<string, unknown>) => col.string(r, 'id');

/**
 * The SQL of a Silver rebuild (`rebuild_silver` jobs): retire what the window's events derived,
 * re-queue those events tagged with the job, and count how far their re-derivation got.
 * Bronze is only read.
 */
export class RebuildRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * In the caller's transaction: retires (soft) the facts and relationships derived from the
   * window's events (and, for a full rebuild, the namespace's entities), reopens older facts that
   * retired ones had superseded, queues their re-projection, and re-queues the events with the job's id.
   */
  async start(tx: Sql, namespace: string, jobId: string, window: RebuildWindow): Promise<RebuildStart> {
    const inWindow = `q.namespace = $1 AND ($2::timestamptz IS NULL OR q.occurred_at >= $2) AND ($3::timestamptz IS NULL OR q.occurred_at < $3)`;
    const args = [namespace, window.from, window.to];
    const full = window.from === null && window.to === null;

    // Identifiers from a closed set, values as parameters.
    const retireDerived = (table: 'facts' | 'relationships', sources: 'fact_sources' | 'relationship_sources', key: 'fact_id' | 'relationship_id') =>
      tx.returning(
        `UPDATE silver.${table} x SET retired_at = now()${table === 'facts' ? `, retired_reason = 'rebuild'` : ''}
          WHERE x.namespace = $1 AND x.retired_at IS NULL
            AND ($4 OR EXISTS (SELECT 1 FROM silver.${sources} s JOIN ops.derivation_queue q ON q.event_id = s.event_id WHERE s.${key} = x.id AND ${inWindow}))
          RETURNING x.id::text AS id`,
        [...args, full],
        ids,
      );
    const retired = await retireDerived('facts', 'fact_sources', 'fact_id');
    const reopened = await tx.returning(
      `UPDATE silver.facts SET valid_to = NULL, superseded_by = NULL WHERE superseded_by = ANY($1::uuid[]) AND retired_at IS NULL RETURNING id::text AS id`,
      [retired],
      ids,
    );
    const retiredRelationships = await retireDerived('relationships', 'relationship_sources', 'relationship_id');
    const retiredEntities = full
      ? await tx.returning(
          `UPDATE silver.entities SET retired_at = now() WHERE namespace = $1 AND retired_at IS NULL RETURNING id::text AS id`,
          [namespace],
          ids,
        )
      : [];
    // The graph projection mirrors retirements too (retiredAt on RELATED edges and Entity nodes).
    await enqueueOutbox(tx, [
      ...outboxRows(namespace, 'entity', retiredEntities, { jobId }),
      ...outboxRows(namespace, 'relationship', retiredRelationships, { jobId }),
      ...outboxRows(namespace, 'fact', [...retired, ...reopened], { jobId }),
    ]);
    // The window's events, and the events before or after it that a retired fact or relationship
    // also rests on: re-deriving only the window's would give such a fact back resting on its
    // window turns alone (its earlier sources and its validFrom lost). Events retention dropped
    // have nothing to re-derive. A destroyed event (bronze.event_tombstones) is never derived
    // again: nothing of it may come back.
    const requeued = await tx.execute(
      `UPDATE ops.derivation_queue q SET status = 'pending', attempts = 0, available_at = now(), processed_at = NULL, job_id = $4, last_error = NULL
        WHERE q.namespace = $1
          AND (${inWindow}
               OR q.event_id IN (SELECT s.event_id FROM silver.fact_sources s WHERE s.fact_id = ANY($5::uuid[]) AND s.event_dropped_at IS NULL)
               OR q.event_id IN (SELECT s.event_id FROM silver.relationship_sources s WHERE s.relationship_id = ANY($6::uuid[]) AND s.event_dropped_at IS NULL))
          AND NOT EXISTS (SELECT 1 FROM bronze.event_tombstones t WHERE t.event_id = q.event_id)`,
      [...args, jobId, retired, retiredRelationships],
    );
    return { retiredFacts: retired.length, reopenedFacts: reopened.length, requeuedEvents: requeued };
  }

  /** The job's re-queued events by state. */
  async progress(jobId: string): Promise<RebuildProgress> {
    return this.sql.one(
      `SELECT count(*) FILTER (WHERE status = 'done')::int AS done, count(*) FILTER (WHERE status = 'failed')::int AS failed,
              count(*) FILTER (WHERE status = 'pending')::int AS pending
         FROM ops.derivation_queue WHERE job_id = $1`,
      [jobId],
      (r) => ({ done: col.number(r, 'done'), failed: col.number(r, 'failed'), pending: col.number(r, 'pending') }),
    );
  }
}
