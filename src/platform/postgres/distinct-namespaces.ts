import { col, Sql } from './sql';

/** Tables with an index led by `namespace` that a skip scan may walk. */
export type NamespacedTable = 'silver.facts' | 'ops.hash_chain';

/**
 * The distinct namespaces of a table, by a skip scan of an index led by `namespace`: one index
 * probe per namespace, however many rows each has (a plain DISTINCT reads every row).
 */
export function distinctNamespaces(sql: Sql, table: NamespacedTable): Promise<string[]> {
  return sql.rows(
    `WITH RECURSIVE n(ns) AS (
       (SELECT min(namespace) FROM ${table})
       UNION ALL
       SELECT (SELECT min(t.namespace) FROM ${table} t WHERE t.namespace > n.ns) FROM n WHERE n.ns IS NOT NULL)
     SELECT ns AS namespace FROM n WHERE ns IS NOT NULL`,
    [],
    (r) => col.string(r, 'namespace'),
  );
}
