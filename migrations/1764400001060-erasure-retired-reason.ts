import { MigrationInterface, QueryRunner } from 'typeorm';
import { FunctionEdit, rewriteFunction } from './function-edit';

/**
 * `Fact.retiredReason` (migration 1764400001050) names why a fact left the current view: 'update',
 * 'rebuild', 'pruned', and 'erasure' for the facts an approved erasure scrubbed. That migration
 * back-filled 'erasure' on facts erased before it; this one makes `bronze.destroy_event` write it
 * for every later erasure, keeping the reason of a fact that was already retired (as it keeps
 * its `retired_at`).
 */
export class ErasureRetiredReason1764400001060 implements MigrationInterface {
  name = 'ErasureRetiredReason1764400001060';

  async up(q: QueryRunner): Promise<void> {
    await rewriteFunction(q, EDIT);
  }

  async down(q: QueryRunner): Promise<void> {
    await rewriteFunction(q, { ...EDIT, from: EDIT.to, to: EDIT.from });
  }
}

const EDIT: FunctionEdit = {
  signature: 'bronze.destroy_event(uuid, uuid, uuid, text, text)',
  from: `UPDATE silver.facts f SET retired_at = COALESCE(f.retired_at, at), erased_at = at,`,
  to: `UPDATE silver.facts f SET retired_at = COALESCE(f.retired_at, at), retired_reason = COALESCE(f.retired_reason, 'erasure'), erased_at = at,`,
};
