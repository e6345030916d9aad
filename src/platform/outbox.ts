import { Sql } from './postgres/sql';

/**
 * The one writer of `ops.outbox`, the rows that tell the projectors what changed. The graph
 * projector (graph/projection.job.ts) drains events, facts, entities and relationships; the Gold
 * projector (gold/promotion/gold-projection.job.ts) drains Gold rows a `payload.batch` at a time.
 * Both re-read each aggregate by `payload.id`, so a row carries ids and tags, never state.
 *
 * Every row goes through one database function, `ops.enqueue_outbox(rows jsonb)` (migration
 * 1764400000980), the only statement that inserts into the table: this module calls it, and so do
 * `bronze.destroy_event` and the `gold.erase_event_copies` trigger, which queue what an erasure
 * changed in the same transaction. Two forms here: `enqueueOutbox` queues rows the caller holds
 * (one statement for any number), and `outboxFrom` queues the rows of a query inside the caller's
 * statement (the ingest's one statement, a query over other tables).
 */

/** What the projectors look up: Silver and Bronze rows (graph projector) and Gold rows (Gold projector). */
export type OutboxAggregateType = 'event' | 'fact' | 'entity' | 'relationship' | 'gold_entity' | 'gold_relationship';

/** Tags every payload of a batch carries besides `id`. */
export type OutboxTags = Readonly<Record<string, string | boolean | null>>;

/** Re-read by `id`; the other fields tag the row (`runId`, `jobId`, `batch`, `overlay`). JSON values, never undefined. */
export type OutboxPayload = { readonly id: string } & OutboxTags;

/** One outbox row. Every row is an upsert: the projector re-reads the aggregate and writes what it finds. */
export interface OutboxRow {
  namespace: string;
  type: OutboxAggregateType;
  /** The aggregate's id, as text. */
  id: string;
  payload: OutboxPayload;
}

/** One row per id, all of one namespace and type, each payload `{ id, ...tags }`. */
export function outboxRows(namespace: string, type: OutboxAggregateType, ids: readonly string[], tags: OutboxTags = {}): OutboxRow[] {
  return ids.map((id) => ({ namespace, type, id, payload: { ...tags, id } }));
}

/**
 * A statement yielding one column, `queued`, that queues the rows of `select` in the caller's
 * statement (an insert's CTE, a query over other tables). `select` names its columns `namespace`,
 * `type`, `id` (text), `payload` (jsonb) and `ord` (their order in the outbox). When a CTE holds it,
 * the statement must read `queued`: PostgreSQL skips a SELECT CTE nobody reads.
 */
export function outboxFrom(select: string): string {
  return `SELECT ops.enqueue_outbox(jsonb_agg(jsonb_build_object('namespace', o.namespace, 'type', o.type, 'id', o.id, 'payload', o.payload)
                                           ORDER BY o.ord)) AS queued
     FROM (${select}) o`;
}

/**
 * Queues `rows` in the caller's transaction, in the order given (outbox ids follow it): one
 * statement whatever their number, none when there are none.
 */
export async function enqueueOutbox(tx: Sql, rows: readonly OutboxRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.execute(`SELECT ops.enqueue_outbox($1::jsonb)`, [
    JSON.stringify(rows.map((r) => ({ namespace: r.namespace, type: r.type, id: r.id, payload: r.payload }))),
  ]);
}
