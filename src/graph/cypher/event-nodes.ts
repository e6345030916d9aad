import { ManagedTransaction } from 'neo4j-driver';
import { CypherRunner } from './cypher-runner';

export interface EventNodeRow {
  id: string;
  namespace: string;
  source: string;
  kind: string;
  conversationId: string | null;
  occurredAt: string;
  ingestedAt: string;
}

export interface EventNode extends EventNodeRow {
  projectedAt: string;
}

/** Idempotent upsert of `(:Event)` nodes, one UNWIND per batch. */
export async function mergeEventNodes(tx: CypherRunner, rows: readonly EventNodeRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.run(
    `UNWIND $rows AS r
     MERGE (e:Event {id: r.id})
     SET e.namespace = r.namespace, e.source = r.source, e.kind = r.kind, e.conversationId = r.conversationId,
         e.occurredAt = datetime(r.occurredAt), e.ingestedAt = datetime(r.ingestedAt), e.projectedAt = datetime()`,
    { rows },
  );
}

/** Event nodes by id, any namespace: the caller filters by grants. */
export async function readEventNodes(tx: ManagedTransaction, ids: readonly string[]): Promise<EventNode[]> {
  const res = await tx.run(
    `UNWIND $ids AS id
     MATCH (e:Event {id: id})
     RETURN e.id AS id, e.namespace AS namespace, e.source AS source, e.kind AS kind, e.conversationId AS conversationId,
            toString(e.occurredAt) AS occurredAt, toString(e.ingestedAt) AS ingestedAt, toString(e.projectedAt) AS projectedAt`,
    { ids },
  );
  return res.records.map((r) => r.toObject() as EventNode);
}
