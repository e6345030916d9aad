import { MigrationInterface, QueryRunner } from 'typeorm';
import { FunctionEdit, rewriteFunction } from './function-edit';

/**
 * An erasure fences derivation out *before* it reads Silver, not after (issue 43).
 *
 * `bronze.destroy_event` bumped the namespace's derivation lease generation as one of its last
 * statements, after it had chosen the facts to erase and scrubbed the judge's decisions. A
 * derivation batch whose write transaction had already passed its fence (`Leases.fence` locks the
 * lease row, then writes) could commit in between: a fact it derived from the erased event, a
 * source row tying an older fact to it, or a decision naming a just-erased fact among its
 * candidates (with that fact's statement) landed after the scrub and stayed. The erasure then
 * waited on the lease row and committed as if all was clean; the hash chain later found such a
 * decision's candidates not scrubbed as the erasure context said ("the judge candidates differ
 * from what was sealed", chaos run of 12-06).
 *
 * Now the bump (which locks the lease row) is the erasure's first write. Either the erasure holds
 * the row first, and a batch in flight fails its fence and is re-read without the event; or the
 * batch holds it first, and the erasure waits until the batch commits, and every statement after
 * the bump (each takes a new snapshot under READ COMMITTED) sees and scrubs what the batch wrote.
 */
export class ErasureFencesDerivationFirst1764400001460 implements MigrationInterface {
  name = 'ErasureFencesDerivationFirst1764400001460';

  async up(q: QueryRunner): Promise<void> {
    for (const edit of EDITS) await rewriteFunction(q, edit);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const edit of [...EDITS].reverse()) await rewriteFunction(q, { ...edit, from: edit.to, to: edit.from });
  }
}

const SIGNATURE = 'bronze.destroy_event(uuid, uuid, uuid, text, text)';
const BUMP = `UPDATE ops.derivation_leases l SET generation = l.generation + 1 WHERE l.namespace = k.namespace;`;
const EDITS: FunctionEdit[] = [
  {
    signature: SIGNATURE,
    from: `
  -- Derivation: never again (rebuilds skip tombstones), and fence out a batch in flight that read the content.
  UPDATE ops.derivation_queue q SET status = 'done', processed_at = at, last_error = NULL, job_id = NULL, locked_by = NULL, locked_until = NULL
   WHERE q.event_id = p_event_id;
  ${BUMP}
  -- The surviving sources`,
    to: `
  -- Derivation: never again (rebuilds skip tombstones; a batch in flight was fenced out above).
  UPDATE ops.derivation_queue q SET status = 'done', processed_at = at, last_error = NULL, job_id = NULL, locked_by = NULL, locked_until = NULL
   WHERE q.event_id = p_event_id;
  -- The surviving sources`,
  },
  {
    signature: SIGNATURE,
    from: `
  -- Bronze: the one UPDATE the row guard lets through`,
    to: `
  -- Derivation fenced out first (lease row locked until commit): a batch that passed its fence
  -- before this commits first, and every statement below sees what it wrote.
  ${BUMP}

  -- Bronze: the one UPDATE the row guard lets through`,
  },
];
