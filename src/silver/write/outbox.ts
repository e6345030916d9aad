import { enqueueOutbox } from '../../platform/outbox';
import { Sql } from '../../platform/postgres/sql';
import { CHANNELS, FactsChangedNotification } from '../../platform/pubsub/topics';

export interface OutboxItem {
  type: 'entity' | 'fact' | 'relationship';
  id: string;
}

const NOTIFY_CHUNK = 60; // ids per notification, well under the 8000-byte payload limit

/** Outbox rows for the graph projection, in order (one statement). */
export async function enqueueProjection(tx: Sql, namespace: string, runId: string, items: readonly OutboxItem[]): Promise<void> {
  if (items.length === 0) return;
  await enqueueOutbox(
    tx,
    items.map((o) => ({ namespace, type: o.type, id: o.id, payload: { id: o.id, runId } })),
  );
}

/** Tells subscribers (factAdded / factSuperseded) what this write changed; delivered when it commits. */
export async function notifyFacts(
  tx: Sql,
  namespace: string,
  added: readonly string[],
  superseded: ReadonlyArray<{ oldId: string; newId: string }>,
): Promise<void> {
  for (let i = 0; i < Math.max(added.length, superseded.length); i += NOTIFY_CHUNK) {
    const payload: FactsChangedNotification = {
      namespace,
      added: added.slice(i, i + NOTIFY_CHUNK),
      superseded: superseded.slice(i, i + NOTIFY_CHUNK).map((s): [string, string] => [s.oldId, s.newId]),
    };
    await tx.execute(`SELECT pg_notify($1, $2)`, [CHANNELS.facts, JSON.stringify(payload)]);
  }
}
