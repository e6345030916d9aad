import { DataSource } from 'typeorm';

/**
 * How far the pipeline is behind, read from the database (so the same answer in every process):
 * the derivation queue and the outbox, each as a count and the age of its oldest row, and the
 * open dead letters. `/metrics` exports each as a gauge and `/health` reports them together.
 */
const BACKLOG_SQL = {
  derivationPending: `SELECT count(*)::int AS v FROM ops.derivation_queue WHERE status = 'pending'`,
  derivationLagSeconds: `SELECT coalesce(extract(epoch FROM now() - min(enqueued_at)), 0)::float AS v FROM ops.derivation_queue WHERE status = 'pending'`,
  outboxPending: `SELECT count(*)::int AS v FROM ops.outbox WHERE processed_at IS NULL`,
  outboxLagSeconds: `SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)::float AS v FROM ops.outbox WHERE processed_at IS NULL`,
  deadLettersOpen: `SELECT count(*)::int AS v FROM silver.dead_letters WHERE resolved_at IS NULL`,
} as const;

export type BacklogMeasure = keyof typeof BACKLOG_SQL;
export type Backlog = Record<BacklogMeasure, number>;

/** One measure (0 when the table is empty). Each is its own statement: prom-client collects a scrape's gauges concurrently. */
export async function readBacklogMeasure(ds: DataSource, measure: BacklogMeasure): Promise<number> {
  const [row] = (await ds.query(BACKLOG_SQL[measure])) as Array<{ v: number }>;
  return row?.v ?? 0;
}

/** Every measure at once. */
export async function readBacklog(ds: DataSource): Promise<Backlog> {
  const measures = Object.keys(BACKLOG_SQL) as BacklogMeasure[];
  const values = await Promise.all(measures.map((m) => readBacklogMeasure(ds, m)));
  return Object.fromEntries(measures.map((m, i) => [m, values[i] ?? 0])) as Backlog;
}
