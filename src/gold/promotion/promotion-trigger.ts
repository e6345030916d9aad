import { col, Sql } from '../../platform/postgres/sql';

export interface PromotionTriggerSettings {
  /** GOLD_PROMOTE_EVERY_SECONDS: the schedule's interval (0: promotion on demand only, and no trigger). */
  everySeconds: number;
  /** GOLD_PROMOTE_SETTLE_SECONDS: how long after the namespace settles its promotion runs (0: no trigger). */
  settleSeconds: number;
  /** GOLD_PROMOTE_MIN_GAP_SECONDS: an early run fires at least this long after the namespace's previous promotion fired. */
  minGapSeconds: number;
}

/**
 * Promotion at the first run after a namespace settles (docs/gold.md, "When promotion runs"):
 * once a derivation batch leaves no pending event in its namespace's queue, the namespace's
 * `promote` schedule (ops.schedules, the job kernel's) is brought forward to fire
 * `settleSeconds` from now, or `minGapSeconds` after it last fired when that is later, and is
 * created when the worker's schedule keeper has not made it yet. A schedule that is due sooner
 * stays as it is, and one someone disabled is left alone. The schedule queues the job like any
 * request, so a burst of batches queues one promotion (one active job per kind and namespace).
 *
 * A schedule that comes round while its job still runs skips that turn; so a promotion run calls
 * `afterPromotion` when it ends, which brings the schedule forward again if derivation committed
 * in the namespace while it ran and the namespace has settled since.
 */
export class PromotionTrigger {
  constructor(
    private readonly sql: Sql,
    private readonly settings: PromotionTriggerSettings,
  ) {}

  get enabled(): boolean {
    return this.settings.everySeconds > 0 && this.settings.settleSeconds > 0;
  }

  /** After a derivation batch committed in `namespace`; true when the schedule was created or brought forward. */
  afterDerive(namespace: string): Promise<boolean> {
    return this.bringForward(namespace, null);
  }

  /** After a promotion run of `namespace` that started at `startedAt`: only when derivation committed there since. */
  afterPromotion(namespace: string, startedAt: Date): Promise<boolean> {
    return this.bringForward(namespace, startedAt);
  }

  private async bringForward(namespace: string, derivedSince: Date | null): Promise<boolean> {
    if (!this.enabled) return false;
    const target = `greatest(now() + make_interval(secs => $3), coalesce(s.last_fired_at, '-infinity'::timestamptz) + make_interval(secs => $4))`;
    const rows = await this.sql.returning(
      `INSERT INTO ops.schedules AS s (kind, namespace, params, run_every, next_run_at)
       SELECT 'promote', $1, '{}'::jsonb, make_interval(secs => $2), now() + make_interval(secs => $3)
        WHERE NOT EXISTS (SELECT 1 FROM ops.derivation_queue q WHERE q.namespace = $1 AND q.status = 'pending')
          AND ($5::timestamptz IS NULL OR EXISTS (SELECT 1 FROM silver.derivation_runs r WHERE r.namespace = $1 AND r.created_at > $5))
       ON CONFLICT (kind, (coalesce(namespace, ''))) DO UPDATE
          SET next_run_at = ${target}, updated_at = now()
        WHERE s.enabled AND s.next_run_at > ${target}
       RETURNING s.id::text AS id`,
      [namespace, this.settings.everySeconds, this.settings.settleSeconds, this.settings.minGapSeconds, derivedSince],
      (r) => col.string(r, 'id'),
    );
    return rows.length > 0;
  }
}
