import { CHANNELS } from '../pubsub/topics';

/**
 * The one way a job change is announced: `pg_notify` on the jobs channel with `{ id }`, inside
 * the statement that made the change, so it is delivered when that commits and only then.
 * `jobProgress` hears it through PgListener; the worker loop wakes on it. The channel goes in as
 * the parameter `channelParam` (bind it to `JOBS_CHANNEL`).
 */
export function notifyJobSql(idExpr: string, channelParam: string): string {
  return `pg_notify(${channelParam}, json_build_object('id', ${idExpr})::text)`;
}

export const JOBS_CHANNEL = CHANNELS.jobs;

/**
 * Wraps `statement` (an INSERT or UPDATE … RETURNING that includes `id`) so that each row it
 * returns is announced, in the same statement.
 */
export function notifying(statement: string, params: readonly unknown[]): [string, unknown[]] {
  return [
    `WITH changed AS (${statement}) SELECT changed.*, ${notifyJobSql('changed.id', `$${params.length + 1}`)} AS notified FROM changed`,
    [...params, JOBS_CHANNEL],
  ];
}
