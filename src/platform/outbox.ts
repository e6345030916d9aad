import { Sql } from './postgres/sql';

/**
 * The one writer of `ops.outbox`, the rows that tell the projectors what changed. The graph
 * projector (graph/projection.job.ts) drains events, facts, entities and relationships; the Gold
 * projector (gold/promotion/gold-projection.job.ts) drains Gold rows a `payload.batch` at a time.
 * Both re-read each aggregate by `payload.id`, so a row carries ids and tags, never state.
 *
 * Two forms: `enqueueOutbox` writes rows the caller holds (one statement for any number), and
 * `outboxInsertFrom` gives the head of the insert for a statement that must hold it (the ingest's
 * one statement, an insert from a query), so no other module spells the table's columns.
 * The database writes it too: `bronze.destroy_event` and the `gold.erase_event_copies` trigger
 * (migrations 1764400000960 and 1764400000700) queue what an erasure changed in the same transaction.
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

const HEAD = `INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload)`;

/**
 * `INSERT INTO ops.outbox (...) <select>`, for a statement that writes outbox rows from a query.
 * `select` yields, in order: namespace, aggregate_type, aggregate_id (text), op ('upsert'), payload (jsonb).
 */
export function outboxInsertFrom(select: string): string {
  return `${HEAD}\n${select}`;
}

/**
 * Queues `rows` in the caller's transaction, in the order given (outbox ids follow it): one
 * statement whatever their number, none when there are none.
 */
export async function enqueueOutbox(tx: Sql, rows: readonly OutboxRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.execute(
    outboxInsertFrom(
      `SELECT x.namespace, x.type, x.id, 'upsert', x.payload
         FROM jsonb_to_recordset($1::jsonb) AS x(namespace text, type text, id text, payload jsonb, ord int)
        ORDER BY x.ord`,
    ),
    [JSON.stringify(rows.map((r, ord) => ({ namespace: r.namespace, type: r.type, id: r.id, payload: r.payload, ord })))],
  );
}
