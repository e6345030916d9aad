import { assertIdentifier, CypherRunner } from './cypher-runner';

/**
 * Detach-deletes the nodes of ids Postgres no longer projects: events an approved destroyEvent
 * erased and the facts erased with them (docs/approvals.md), and removes an erased event's text
 * where the next turn kept it as context. Idempotent: a replay deletes nothing.
 */
export async function deleteErasedNodes(tx: CypherRunner, label: 'Event' | 'Fact', ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  // The turn after an erased event held its text as context (event-nodes.ts): it takes the erased
  // event's own predecessor instead (or none), as a projection from Postgres, which skips erased
  // turns, would. One statement per event, so that of two adjacent erased turns the second sees
  // the first's relinking and no erased text survives (erasures are rare).
  if (label === 'Event')
    for (const id of ids)
      await tx.run(
        `MATCH (erased:Event {id: $id})
         MATCH (after:Event {contextEventId: $id})
         OPTIONAL MATCH (before:Event {id: erased.contextEventId}) WHERE before.namespace = after.namespace
         SET after.contextEventId = before.id, after.context = before.body`,
        { id },
      );
  await tx.run(`UNWIND $ids AS id MATCH (n:${assertIdentifier(label)} {id: id}) DETACH DELETE n`, { ids });
}
