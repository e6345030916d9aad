import { assertIdentifier, CypherRunner } from './cypher-runner';

/**
 * Detach-deletes the nodes of ids Postgres no longer projects: events an approved destroyEvent
 * erased and the facts erased with them (docs/approvals.md). Idempotent: a replay deletes nothing.
 */
export async function deleteErasedNodes(tx: CypherRunner, label: 'Event' | 'Fact', ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.run(`UNWIND $ids AS id MATCH (n:${assertIdentifier(label)} {id: id}) DETACH DELETE n`, { ids });
}
