import { QueryRunner } from 'typeorm';

/** One textual change to a live database function: `from` (exactly once in its definition) becomes `to`. */
export interface FunctionEdit {
  /** `schema.name(argument types)`, as `regprocedure` reads it. */
  signature: string;
  from: string;
  to: string;
}

/**
 * Applies `edit` to the live definition of its function (`pg_get_functiondef`, then the edited
 * `CREATE OR REPLACE`: privileges and triggers stay). For long functions a migration changes in
 * one statement, so the migration states the change rather than the whole body again. Fails when
 * `from` is not in the definition exactly once: the function changed since, and the migration
 * must be written by hand.
 */
export async function rewriteFunction(q: QueryRunner, edit: FunctionEdit): Promise<void> {
  const rows = (await q.query(`SELECT pg_get_functiondef($1::regprocedure) AS def`, [edit.signature])) as Array<{ def: string }>;
  const def = rows[0]?.def ?? '';
  const at = def.indexOf(edit.from);
  if (at < 0 || def.indexOf(edit.from, at + 1) >= 0) {
    throw new Error(`${edit.signature}: the statement to replace is not in its definition exactly once; write this change by hand`);
  }
  await q.query(def.slice(0, at) + edit.to + def.slice(at + edit.from.length));
}
