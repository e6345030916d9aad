/**
 * Decay of importance (docs/lifecycle.md): a pure function of a fact's base importance, the last
 * time the engine saw it (the latest ingest time of the events it rests on, from Bronze), the last
 * time it was used (returned by search or read by an agent, `silver.fact_usage`) and the clock.
 *
 *   active  = max(lastSeen, lastUsed)
 *   idle    = (now - active) in days
 *   cycles  = max(0, floor((idle - afterDays) / cycleDays))
 *   decayed = base                                        when cycles = 0
 *           = max(min(base, floor), base * factor^cycles)  otherwise
 *
 * So nothing decays before `afterDays` idle days; then each full cycle multiplies by `factor`;
 * decay never takes importance below `floor`, and never raises a base already below it. A new
 * event deriving the fact again, or a use, resets `active`. The same formula is rendered once in
 * TypeScript (`decayedImportance`) and once in SQL (`decayedImportanceSql`, used by the decay
 * job and by pruning); test/integration/lifecycle.test.ts checks they agree over a simulated clock.
 */
export interface DecaySettings {
  readonly afterDays: number;
  readonly cycleDays: number;
  readonly factor: number;
  readonly floor: number;
}

const DAY_MS = 86_400_000;

/** Full idle cycles past `afterDays` at `now` (0 while the fact is fresh). */
export function decayCycles(active: Date, now: Date, s: DecaySettings): number {
  const idleDays = (now.getTime() - active.getTime()) / DAY_MS;
  return Math.max(0, Math.floor((idleDays - s.afterDays) / s.cycleDays));
}

/** The latest of the two instants; either may be missing, not both. */
export function lastActive(lastSeen: Date | null, lastUsed: Date | null): Date {
  const t = Math.max(lastSeen?.getTime() ?? Number.NEGATIVE_INFINITY, lastUsed?.getTime() ?? Number.NEGATIVE_INFINITY);
  if (!Number.isFinite(t)) throw new Error('lastActive: neither a last-seen nor a last-used time');
  return new Date(t);
}

/** The formula above. */
export function decayedImportance(base: number, active: Date, now: Date, s: DecaySettings): number {
  const cycles = decayCycles(active, now, s);
  if (cycles === 0) return base;
  return Math.max(Math.min(base, s.floor), base * Math.pow(s.factor, cycles));
}

/**
 * An entity's importance (Silver `Entity` and `GoldEntity`, docs/lifecycle.md "Entities"): the
 * highest effective importance among the current facts about it, null when none is current. It is
 * derived, not stored: it decays as its facts do (an entity is seen or used when a fact about it
 * is), by the same factor per cycle down to the same floor, and a Silver rebuild reproduces it.
 */
export function entityImportance(facts: ReadonlyArray<{ importance: number; effectiveImportance?: number | null }>): number | null {
  let best: number | null = null;
  for (const f of facts) {
    const v = f.effectiveImportance ?? f.importance;
    if (best === null || v > best) best = v;
  }
  return best;
}

/**
 * The identity of a fact that survives a Silver rebuild: the md5 of its Silver statement (a rebuild
 * re-derives the same statements under new row ids). `silver.fact_usage` is keyed by it.
 */
export const FACT_KEY_SQL = (alias: string): string => `md5(${alias}.statement)`;

/**
 * SQL for a fact's last activity over `silver.facts` alias `f`: the latest ingest time of its source
 * events (Bronze, read only) or its last recorded use; the fact's own recordedAt when neither is known
 * (its events' partitions were dropped by retention and it was never used).
 */
export const LAST_ACTIVE_SQL = `COALESCE(GREATEST(
  (SELECT max(e.ingested_at) FROM silver.fact_sources s JOIN bronze.event_keys k ON k.event_id = s.event_id
     JOIN bronze.events e ON e.id = k.event_id AND e.occurred_at = k.occurred_at WHERE s.fact_id = f.id),
  (SELECT u.last_used_at FROM silver.fact_usage u WHERE u.namespace = f.namespace AND u.fact_key = md5(f.statement))), f.recorded_at)`;

/**
 * The formula in SQL over `base` and `active` (SQL expressions) with the clock and settings as the
 * parameters `$now` (timestamptz), `$after`, `$cycle`, `$factor`, `$floor` (numbers), given by position.
 */
export function decayedImportanceSql(base: string, active: string, p: { now: string; after: string; cycle: string; factor: string; floor: string }): string {
  const cycles = `GREATEST(0, floor((extract(epoch FROM (${p.now} - ${active})) / 86400.0 - ${p.after}) / ${p.cycle}))`;
  return `(CASE WHEN ${cycles} = 0 THEN ${base}
               ELSE GREATEST(LEAST(${base}, ${p.floor}), ${base} * power(${p.factor}, ${cycles})) END)`;
}
