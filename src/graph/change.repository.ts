import { DataSource } from 'typeorm';
import { col, Sql, SqlRow } from '../infra/postgres/sql';

export type ChangeKind = 'ADDED' | 'SUPERSEDED' | 'RETIRED';

export interface ChangeRow {
  kind: ChangeKind;
  factId: string;
  at: Date;
}

const KINDS: readonly ChangeKind[] = ['ADDED', 'SUPERSEDED', 'RETIRED'];

function toChange(r: SqlRow): ChangeRow {
  const kind = col.string(r, 'kind') as ChangeKind;
  if (!KINDS.includes(kind)) throw new Error(`column kind: unexpected change kind ${kind}`);
  return { kind, factId: col.string(r, 'fact_id'), at: col.date(r, 'at') };
}

/**
 * The change log of a namespace's facts, read from Silver's two clocks: recorded_at (ADDED),
 * the superseding fact's recorded_at (SUPERSEDED: the supersession commits with it) and
 * retired_at (RETIRED). Strictly after `since`, oldest first.
 */
export class ChangeRepository {
  private readonly sql: Sql;

  constructor(ds: DataSource) {
    this.sql = Sql.of(ds);
  }

  async since(namespace: string, since: Date, limit: number): Promise<ChangeRow[]> {
    return this.sql.rows(
      `SELECT kind, fact_id, at FROM (
         SELECT 'ADDED' AS kind, 0 AS ord, f.id::text AS fact_id, f.recorded_at AS at
           FROM silver.facts f WHERE f.namespace = $1 AND f.recorded_at > $2
         UNION ALL
         SELECT 'SUPERSEDED', 1, f.id::text, n.recorded_at
           FROM silver.facts f JOIN silver.facts n ON n.id = f.superseded_by
          WHERE f.namespace = $1 AND n.namespace = $1 AND n.recorded_at > $2
         UNION ALL
         SELECT 'RETIRED', 2, f.id::text, f.retired_at
           FROM silver.facts f WHERE f.namespace = $1 AND f.retired_at > $2
       ) c ORDER BY at, ord, fact_id LIMIT $3`,
      [namespace, since, limit],
      toChange,
    );
  }
}
