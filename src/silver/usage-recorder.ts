import { Clock, systemClock } from '../common/clock';
import { Sql } from '../platform/postgres/sql';
import { Stage } from '../platform/stages';

/** Where services note that facts were used (the UsageRecorder, or nothing). */
export interface FactUses {
  record(factIds: Iterable<string>): void;
}

export const NO_USES: FactUses = { record: () => undefined };

/**
 * Records that facts were used (returned by search, read by an agent: fact by id, MCP reads), for
 * decay (silver/decay.ts, docs/lifecycle.md). Cheap on the request path: `record` only notes the
 * ids in memory; `flush` writes everything noted since the last flush in one
 * `INSERT … SELECT … ON CONFLICT DO UPDATE` into `silver.fact_usage`, keyed by the fact's identity
 * (namespace + md5 of its Silver statement) so a Silver rebuild keeps the uses. The `usage` stage
 * flushes every USAGE_FLUSH_MS; uses noted by a process that dies before its next flush are lost,
 * which only makes decay a little earlier for those facts (never wrong data).
 */
export class UsageRecorder implements FactUses {
  /** fact id -> [last use in ms, uses] since the last flush. */
  private pending = new Map<string, [number, number]>();

  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock = systemClock,
    /** Most distinct facts held before a flush is due anyway (bounds memory). */
    private readonly maxPending = 50_000,
  ) {}

  /** Notes a use of each fact now. Never touches the database. */
  record(factIds: Iterable<string>): void {
    const at = this.clock.now().getTime();
    for (const id of factIds) {
      const seen = this.pending.get(id);
      if (seen) {
        seen[0] = Math.max(seen[0], at);
        seen[1] += 1;
      } else if (this.pending.size < this.maxPending) {
        this.pending.set(id, [at, 1]);
      }
    }
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /** Writes the noted uses in one statement; returns how many facts it covered. */
  async flush(): Promise<number> {
    if (this.pending.size === 0) return 0;
    const batch = this.pending;
    this.pending = new Map();
    const ids = [...batch.keys()];
    try {
      await this.sql.execute(
        `INSERT INTO silver.fact_usage (namespace, fact_key, last_used_at, use_count)
         SELECT f.namespace, md5(f.statement), max(to_timestamp(x.ms / 1000.0)), sum(x.n)
           FROM unnest($1::uuid[], $2::double precision[], $3::bigint[]) AS x(id, ms, n)
           JOIN silver.facts f ON f.id = x.id
          GROUP BY f.namespace, md5(f.statement)
         ON CONFLICT (namespace, fact_key) DO UPDATE
            SET last_used_at = GREATEST(silver.fact_usage.last_used_at, EXCLUDED.last_used_at),
                use_count = silver.fact_usage.use_count + EXCLUDED.use_count`,
        [ids, ids.map((id) => (batch.get(id) as [number, number])[0]), ids.map((id) => (batch.get(id) as [number, number])[1])],
      );
    } catch (err) {
      // Put them back for the next flush (a newer use wins).
      for (const [id, [at, n]] of batch) {
        const now = this.pending.get(id);
        this.pending.set(id, now ? [Math.max(now[0], at), now[1] + n] : [at, n]);
      }
      throw err;
    }
    return ids.length;
  }

  /** The `usage` stage: flushes every `pollMs`. */
  stage(pollMs: number): Stage {
    return { name: 'usage', wakeOn: [], pollMs, step: async () => (await this.flush()) > 0 && this.pending.size > 0 };
  }
}
