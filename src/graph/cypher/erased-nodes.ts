import { assertIdentifier, CypherRunner } from './cypher-runner';

/**
 * Detach-deletes the nodes of ids Postgres no longer projects: events an approved destroyEvent
 * erased and the facts erased with them (docs/approvals.md), and removes an erased event's text
 * where the next turn kept it as context. Idempotent: a replay deletes nothing.
 */
export async function deleteErasedNodes(tx: CypherRunner, label: 'Event' | 'Fact', ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  // The turn after an erased event held its text as context (event-nodes.ts): it goes too.
  if (label === 'Event') await tx.run(`UNWIND $ids AS id MATCH (n:Event {contextEventId: id}) REMOVE n.context, n.contextEventId`, { ids });
  await tx.run(`UNWIND $ids AS id MATCH (n:${assertIdentifier(label)} {id: id}) DETACH DELETE n`, { ids });
}
