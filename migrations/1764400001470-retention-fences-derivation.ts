import { MigrationInterface, QueryRunner } from 'typeorm';
import { FunctionEdit, rewriteFunction } from './function-edit';

/**
 * Retention fences derivation out and lets go of the dropped events' queue rows (issue 43), as an
 * erasure does (migration 1764400001460).
 *
 * `bronze.record_retention_checkpoints` marked the sources of facts derived from the dropped events
 * (`event_dropped_at`) and then dropped the partition, without fencing derivation. A derivation
 * batch that had read an old event (an import of old history, a rebuild, a retry) and passed its
 * fence committed its source rows after that UPDATE: facts resting on events that no longer
 * exist, not marked, so `sourcesDroppedByRetention` undercounted and the provenance pointed
 * nowhere. And the dropped events' rows in `ops.derivation_queue` stayed pending: the worker took
 * them again and again, found no event (a batch of nothing, "skipped"), the namespace never
 * settled, and with a batch's worth of them first in time order its later events were never
 * derived.
 *
 * Now, per namespace of a partition and under the chain lock it already takes, retention first
 * bumps the namespace's derivation lease generation (creating the row if the namespace never had
 * one, so a lease taken meanwhile waits for the drop): a batch that fenced before commits first
 * and the UPDATE below sees its source rows; a batch that fences after fails its fence and is
 * re-read without the events. Then the events' queue rows are done, and their dead letters
 * resolved with the model's raw output (which may quote the dropped content) cleared.
 */
export class RetentionFencesDerivation1764400001470 implements MigrationInterface {
  name = 'RetentionFencesDerivation1764400001470';

  async up(q: QueryRunner): Promise<void> {
    for (const edit of EDITS) await rewriteFunction(q, edit);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const edit of [...EDITS].reverse()) await rewriteFunction(q, { ...edit, from: edit.to, to: edit.from });
  }
}

const SIGNATURE = 'bronze.record_retention_checkpoints(text, uuid, uuid)';
const EDITS: FunctionEdit[] = [
  {
    signature: SIGNATURE,
    from: `
    PERFORM pg_advisory_xact_lock(hashtextextended('ops.hash_chain:' || ns, 0));
`,
    to: `
    PERFORM pg_advisory_xact_lock(hashtextextended('ops.hash_chain:' || ns, 0));
    -- Derivation fenced out first (lease row locked until commit): a batch that passed its fence
    -- before this commits first, and every statement below sees what it wrote.
    INSERT INTO ops.derivation_leases AS l (namespace, worker_id, generation, lease_until) VALUES (ns, 'retention', 1, '-infinity')
      ON CONFLICT (namespace) DO UPDATE SET generation = l.generation + 1;
`,
  },
  {
    signature: SIGNATURE,
    from: `
    UPDATE silver.relationship_sources s SET event_dropped_at = clock_timestamp() WHERE s.event_id = ANY (ids::uuid[]) AND s.event_dropped_at IS NULL;
`,
    to: `
    UPDATE silver.relationship_sources s SET event_dropped_at = clock_timestamp() WHERE s.event_id = ANY (ids::uuid[]) AND s.event_dropped_at IS NULL;
    -- Nothing left to derive: the queue lets go of the events, their dead letters are resolved.
    UPDATE ops.derivation_queue q SET status = 'done', processed_at = clock_timestamp(), last_error = NULL, job_id = NULL, locked_by = NULL, locked_until = NULL
     WHERE q.event_id = ANY (ids::uuid[]) AND q.status <> 'done';
    UPDATE silver.dead_letters d SET raw_output = NULL, resolved_at = coalesce(d.resolved_at, clock_timestamp()) WHERE d.event_id = ANY (ids::uuid[]);
`,
  },
];
