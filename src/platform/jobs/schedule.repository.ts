import { col, Sql, SqlRow } from '../postgres/sql';
import { JobPayloads } from './job-kinds';
import { JOBS_CHANNEL, notifyJobSql } from './job-notify';

export interface Schedule {
  id: string;
  kind: string;
  namespace: string | null;
  params: unknown;
  everySeconds: number;
  nextRunAt: Date;
  enabled: boolean;
  lastFiredAt: Date | null;
  lastJobId: string | null;
}

export type ScheduleRequest<P = JobPayloads> = {
  [K in keyof P & string]: { kind: K; namespace: string | null; params: P[K]; everySeconds: number; firstRunAt?: Date };
}[keyof P & string];

const COLUMNS = `id::text AS id, kind, namespace, params, extract(epoch FROM run_every)::float8 AS every_seconds, next_run_at, enabled, last_fired_at, last_job_id::text AS last_job_id`;

function toSchedule(r: SqlRow): Schedule {
  return {
    id: col.string(r, 'id'),
    kind: col.string(r, 'kind'),
    namespace: col.stringOrNull(r, 'namespace'),
    params: r.params,
    everySeconds: col.number(r, 'every_seconds'),
    nextRunAt: col.date(r, 'next_run_at'),
    enabled: col.boolean(r, 'enabled'),
    lastFiredAt: col.dateOrNull(r, 'last_fired_at'),
    lastJobId: col.stringOrNull(r, 'last_job_id'),
  };
}

/**
 * `ops.schedules`: a job kind run for a namespace every `run_every` (promotion and decay, later).
 * Firing a schedule queues its job like any request, so the one-active-job rule holds: a schedule
 * that comes round while its previous job is still queued or running skips that turn.
 */
export class ScheduleRepository<P = JobPayloads> {
  constructor(private readonly sql: Sql) {}

  /** Creates the schedule of a kind and namespace, or changes its interval and params (and enables it). */
  async upsert(s: ScheduleRequest<P>): Promise<Schedule> {
    return this.sql.one(
      `INSERT INTO ops.schedules AS s (kind, namespace, params, run_every, next_run_at)
       VALUES ($1, $2, $3, make_interval(secs => $4), coalesce($5::timestamptz, now()))
       ON CONFLICT (kind, (coalesce(namespace, ''))) DO UPDATE
         SET params = EXCLUDED.params, run_every = EXCLUDED.run_every, enabled = true, updated_at = now(),
             next_run_at = CASE WHEN $5::timestamptz IS NULL THEN s.next_run_at ELSE EXCLUDED.next_run_at END
       RETURNING ${COLUMNS}`,
      [s.kind, s.namespace, JSON.stringify(s.params), s.everySeconds, s.firstRunAt ?? null],
      toSchedule,
    );
  }

  /**
   * Makes sure each namespace has a schedule of `kind`: creates the missing ones (first run now)
   * and moves an existing one to the new interval, but never re-enables one someone disabled nor
   * touches its params or next run. One statement; returns how many rows it created or changed.
   */
  async ensure(kind: keyof P & string, namespaces: readonly string[], params: unknown, everySeconds: number): Promise<number> {
    if (namespaces.length === 0) return 0;
    return this.sql.execute(
      `INSERT INTO ops.schedules AS s (kind, namespace, params, run_every, next_run_at)
       SELECT $1, n, $3, make_interval(secs => $4), now() FROM unnest($2::text[]) AS n
       ON CONFLICT (kind, (coalesce(namespace, ''))) DO UPDATE
         SET run_every = EXCLUDED.run_every, updated_at = now()
         WHERE s.run_every IS DISTINCT FROM EXCLUDED.run_every`,
      [kind, namespaces, JSON.stringify(params), everySeconds],
    );
  }

  /** Stops a schedule firing (rows are never deleted: the runtime role has no DELETE). */
  async disable(kind: keyof P & string, namespace: string | null): Promise<boolean> {
    const n = await this.sql.execute(
      `UPDATE ops.schedules SET enabled = false, updated_at = now() WHERE kind = $1 AND coalesce(namespace, '') = coalesce($2, '')`,
      [kind, namespace],
    );
    return n > 0;
  }

  async list(): Promise<Schedule[]> {
    return this.sql.rows(`SELECT ${COLUMNS} FROM ops.schedules ORDER BY kind, namespace NULLS FIRST`, [], toSchedule);
  }

  /**
   * Fires every due schedule of `kinds` in one statement: queues its job (unless one of its kind
   * is queued or running for the namespace) and moves its next run on by its interval (from now,
   * when runs were missed, so a worker that was down does not fire a backlog). Workers that fire
   * at the same time take different schedules (`SKIP LOCKED`). Returns the ids of the jobs queued.
   */
  async fireDue(kinds: readonly string[], limit = 20): Promise<string[]> {
    return this.sql.returning(
      `WITH due AS (
         SELECT id, kind, namespace, params, run_every, next_run_at FROM ops.schedules
          WHERE enabled AND next_run_at <= now() AND kind = ANY($1::text[])
          ORDER BY next_run_at LIMIT $2 FOR UPDATE SKIP LOCKED
       ), queued AS (
         INSERT INTO ops.jobs (kind, namespace, params, reason, schedule_id)
         SELECT kind, namespace, params, format('scheduled every %s', run_every), id FROM due
         ON CONFLICT (kind, (coalesce(namespace, ''))) WHERE status IN ('queued', 'running') DO NOTHING
         RETURNING id, schedule_id
       ), moved AS ( -- runs whether or not the final SELECT reads it
         UPDATE ops.schedules s
            SET next_run_at = CASE WHEN due.next_run_at + due.run_every > now() THEN due.next_run_at + due.run_every ELSE now() + due.run_every END,
                last_fired_at = now(), updated_at = now(),
                last_job_id = coalesce((SELECT q.id FROM queued q WHERE q.schedule_id = s.id), s.last_job_id)
           FROM due WHERE s.id = due.id
       )
       SELECT q.id::text AS id, ${notifyJobSql('q.id', '$3')} AS notified FROM queued q`,
      [kinds, limit, JOBS_CHANNEL],
      (r) => col.string(r, 'id'),
    );
  }
}
