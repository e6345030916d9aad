import { pgError } from '../platform/postgres/pg-error';
import { ApprovalException, ApprovalExceptionCode } from '../access/approval.exception';
import { col, Sql, SqlRow } from '../platform/postgres/sql';

export interface RetentionPartition {
  name: string;
  from: Date;
  to: Date;
  events: number;
  /** Events per namespace, largest first. */
  namespaces: Array<{ namespace: string; events: number }>;
}

/** SQLSTATEs bronze.retain_events raises, and what each means to the caller. */
const REFUSALS: Record<string, ApprovalExceptionCode> = {
  P0002: ApprovalExceptionCode.APPROVAL_NOT_FOUND,
  '22023': ApprovalExceptionCode.PARAMS_MISMATCH,
  '42501': ApprovalExceptionCode.NOT_APPROVED,
};

const perNamespace = (v: unknown): Array<{ namespace: string; events: number }> =>
  Object.entries((typeof v === 'string' ? JSON.parse(v) : v) as Record<string, number>)
    .map(([namespace, events]) => ({ namespace, events: Number(events) }))
    .sort((a, b) => b.events - a.events || a.namespace.localeCompare(b.namespace));

const toPartition = (r: SqlRow): RetentionPartition => ({
  name: col.string(r, 'partition_name'),
  from: col.date(r, 'range_from'),
  to: col.date(r, 'range_to'),
  events: col.number(r, 'events'),
  namespaces: perNamespace(r['per_namespace']),
});

/**
 * Bronze retention (docs/lifecycle.md): the dry run reads the catalog and counts each partition's
 * events per namespace (read only); the drop is the owner's `bronze.retain_events`, which consumes
 * a RETAIN_BRONZE approval and drops the partitions in one call (migrations/1764400001050).
 */
export class RetentionRepository {
  constructor(private readonly sql: Sql) {}

  /** The partitions whose range ends on or before `before`, with their events per namespace. */
  async plan(before: Date): Promise<RetentionPartition[]> {
    const parts = await this.sql.rows(
      `SELECT c.relname::text AS name,
              (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\) TO \\(''([^'']+)''\\)'))[1]::timestamptz AS lo,
              (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\) TO \\(''([^'']+)''\\)'))[2]::timestamptz AS hi
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'bronze.events'::regclass
        ORDER BY 2`,
      [],
      (r) => ({ name: col.string(r, 'name'), lo: col.date(r, 'lo'), hi: col.date(r, 'hi') }),
    );
    const out: RetentionPartition[] = [];
    for (const p of parts.filter((x) => x.hi.getTime() <= before.getTime())) {
      // The events of that month, through the parent (partition pruning keeps it to the one partition).
      const counts = await this.sql.rows(
        `SELECT namespace, count(*)::int AS n FROM bronze.events WHERE occurred_at >= $1 AND occurred_at < $2 GROUP BY namespace`,
        [p.lo.toISOString(), p.hi.toISOString()],
        (r) => ({ namespace: col.string(r, 'namespace'), events: col.number(r, 'n') }),
      );
      out.push({
        name: p.name,
        from: p.lo,
        to: p.hi,
        events: counts.reduce((s, c) => s + c.events, 0),
        namespaces: counts.sort((a, b) => b.events - a.events || a.namespace.localeCompare(b.namespace)),
      });
    }
    return out;
  }

  /**
   * Consumes the approval and drops the partitions, one call of the owner's function for the holder
   * of `secret` (admin on "*"), which also signs a chain checkpoint per namespace and queues the
   * dropped events for the graph (migration 1764400001420); its refusals become ApprovalExceptions.
   */
  async drop(before: string, approvalId: string, secret: string): Promise<RetentionPartition[]> {
    try {
      return await this.sql.transaction((tx) =>
        tx.rows(
          `SELECT partition_name, range_from, range_to, events, per_namespace FROM bronze.retain_events_as($1, $2::date, $3::uuid)`,
          [secret, before, approvalId],
          toPartition,
        ),
      );
    } catch (err) {
      const pg = pgError(err);
      const code = pg && REFUSALS[pg.code];
      if (!pg || !code) throw err;
      const refined =
        code === ApprovalExceptionCode.NOT_APPROVED && /already executed/.test(pg.message)
          ? ApprovalExceptionCode.ALREADY_EXECUTED
          : code === ApprovalExceptionCode.NOT_APPROVED && /expired/.test(pg.message)
            ? ApprovalExceptionCode.EXPIRED
            : code;
      throw new ApprovalException(refined, pg.message);
    }
  }
}
