import type { GraphConsistency } from '../../graph/graph-rebuild.service';
import { col, Sql, SqlRow } from '../../platform/postgres/sql';

/** The latest stored `graphConsistency` answer of a namespace (ops.graph_consistency, migration 1764400001300). */
export interface StoredGraphConsistency {
  result: GraphConsistency;
  /** When the comparison started (the database's clock). */
  checkedAt: Date;
  /** Seconds since `checkedAt`, by the database's clock. */
  ageSeconds: number;
  /** How long the comparison took. */
  ms: number;
  /** The projector has queued graph writes of the namespace since the comparison started (`ops.outbox` rows above its watermark). */
  changedSince: boolean;
}

/** Where a comparison starts: the outbox's highest id and the database's clock. */
export interface ConsistencyStart {
  watermark: string;
  at: Date;
}

/** When the background stage recomputes a stored answer (docs/quality.md, "consistency_graph: the stored answer"). */
export interface RefreshPolicy {
  /** Never recompute an answer younger than this (QUALITY_CONSISTENCY_REFRESH_SECONDS). */
  refreshSeconds: number;
  /** Readers recompute an answer older than this (QUALITY_CONSISTENCY_MAX_AGE_SECONDS): the stage recomputes it before. */
  maxAgeSeconds: number;
  /** Only answers some report read within this many seconds are kept fresh. */
  readWithinSeconds: number;
  /** How long a worker's claim on a namespace lasts (a crashed worker's claim lapses). */
  claimSeconds: number;
}

const stored = (r: SqlRow): StoredGraphConsistency => ({
  result: r.result as GraphConsistency,
  checkedAt: col.date(r, 'checked_at'),
  ageSeconds: col.number(r, 'age'),
  ms: col.number(r, 'ms'),
  changedSince: col.boolean(r, 'changed'),
});

export class GraphConsistencyRepository {
  constructor(private readonly sql: Sql) {}

  /** Taken before a comparison starts, so a graph write queued during it counts as a change after it. */
  async start(): Promise<ConsistencyStart> {
    return this.sql.one(`SELECT coalesce(max(id), 0)::text AS w, now() AS at FROM ops.outbox`, [], (r) => ({
      watermark: col.string(r, 'w'),
      at: col.date(r, 'at'),
    }));
  }

  /** The namespace's stored answer, if any, marked as read now (the stage keeps read answers fresh). */
  async latest(namespace: string): Promise<StoredGraphConsistency | null> {
    return this.sql.maybeOne(
      `UPDATE ops.graph_consistency g SET read_at = now() WHERE g.namespace = $1
       RETURNING g.result, g.checked_at, g.ms, extract(epoch FROM now() - g.checked_at)::float AS age,
                 EXISTS (SELECT 1 FROM ops.outbox o WHERE o.id > g.outbox_watermark AND o.namespace = g.namespace) AS changed`,
      [namespace],
      stored,
    );
  }

  /** Stores a comparison's answer (replacing the previous one) and releases the namespace's claim. */
  async save(namespace: string, start: ConsistencyStart, result: GraphConsistency, ms: number): Promise<void> {
    await this.sql.execute(
      `INSERT INTO ops.graph_consistency (namespace, checked_at, ms, ok, result, outbox_watermark)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::bigint)
       ON CONFLICT (namespace) DO UPDATE SET checked_at = EXCLUDED.checked_at, ms = EXCLUDED.ms, ok = EXCLUDED.ok, result = EXCLUDED.result,
         outbox_watermark = EXCLUDED.outbox_watermark, claimed_until = NULL
       WHERE ops.graph_consistency.checked_at <= EXCLUDED.checked_at`,
      [namespace, start.at, Math.round(ms), result.ok, JSON.stringify(result), start.watermark],
    );
  }

  /** Gives up a claim (the comparison failed: another worker, or this one later, tries again). */
  async release(namespace: string): Promise<void> {
    await this.sql.execute(`UPDATE ops.graph_consistency SET claimed_until = NULL WHERE namespace = $1`, [namespace]);
  }

  /**
   * Claims the namespace whose stored answer is most due for a recomputation, or null. Due: read
   * within `readWithinSeconds`, not claimed, at least `refreshSeconds` old, and either close to
   * `maxAgeSeconds` (so a reader never has to recompute it: this also catches Neo4j written
   * around the projector, which no outbox row shows), or settled (no pending outbox row of the
   * namespace) and failed or changed since (an outbox row above its watermark).
   */
  async claimDue(p: RefreshPolicy): Promise<string | null> {
    return this.sql.maybeOne(
      `UPDATE ops.graph_consistency g SET claimed_until = now() + make_interval(secs => $4)
        WHERE g.namespace = (
          SELECT s.namespace FROM ops.graph_consistency s
           WHERE (s.claimed_until IS NULL OR s.claimed_until < now())
             AND s.read_at > now() - make_interval(secs => $3)
             AND s.checked_at <= now() - make_interval(secs => $1)
             AND (s.checked_at <= now() - make_interval(secs => greatest($2 - $1, 0))
                  OR (NOT EXISTS (SELECT 1 FROM ops.outbox p WHERE p.namespace = s.namespace AND p.processed_at IS NULL)
                      AND (NOT s.ok OR EXISTS (SELECT 1 FROM ops.outbox o WHERE o.id > s.outbox_watermark AND o.namespace = s.namespace))))
           ORDER BY s.checked_at LIMIT 1
           FOR UPDATE SKIP LOCKED)
       RETURNING g.namespace`,
      [p.refreshSeconds, p.maxAgeSeconds, p.readWithinSeconds, p.claimSeconds],
      (r) => col.string(r, 'namespace'),
    );
  }
}
