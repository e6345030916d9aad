import { CypherRunner } from './cypher-runner';
import { namespaceKey } from '../../platform/neo4j/namespace-key';

export interface EntityNodeRow {
  id: string;
  namespace: string;
  type: string;
  name: string;
  aliases: string[];
  retiredAt: string | null;
}

/** Idempotent upsert of `(:Entity)` nodes (fills placeholders MERGEd by fact or relationship projections). */
export async function mergeEntityNodes(tx: CypherRunner, rows: readonly EntityNodeRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.run(
    `UNWIND $rows AS r
     MERGE (n:Entity {id: r.id})
     SET n.namespace = r.namespace, n.nsKey = r.nsKey, n.type = r.type, n.name = r.name, n.aliases = r.aliases, n.retiredAt = datetime(r.retiredAt)`,
    { rows: rows.map((r) => ({ ...r, nsKey: namespaceKey(r.namespace) })) },
  );
}
