import { randomUUID } from 'node:crypto';
import { enqueueOutbox, outboxRows } from '../../platform/outbox';
import { distinctNamespaces } from '../../platform/postgres/distinct-namespaces';
import { col, Sql } from '../../platform/postgres/sql';
import { DecaySettings, decayedImportanceSql, LAST_ACTIVE_SQL } from '../../silver/decay';

export interface DecayRun {
  /** Current facts whose effective importance was computed. */
  facts: number;
  /** Of those, how many are below their base importance. */
  decayed: number;
  /** Of those, how many changed since the last run (only these rows are written). */
  written: number;
  /** Gold entities brought back because a fact about them is current again. */
  restoredGoldEntities: number;
}

export interface PruneRun {
  facts: string[];
  goldEntities: string[];
  /** Facts that matched but carry a human overlay, so stayed. */
  protectedByOverlay: number;
}

export interface RestoreRun {
  facts: string[];
  goldEntities: string[];
}

export interface FactLifecycleRow {
  id: string;
  importance: number;
  effectiveImportance: number | null;
  lastActive: Date;
}

const ids = (r: Record<string, unknown>) => col.string(r, 'id');

/** A fact with a live human overlay: some overlay on it whose latest version is not RETRACTED (gold/overlay). */
const OVERLAID = `EXISTS (SELECT 1 FROM gold.overlays o WHERE o.fact_id = f.id
                    AND (SELECT l.status FROM gold.overlays l WHERE l.id = o.id ORDER BY l.version DESC LIMIT 1) <> 'RETRACTED')`;

/** The settings and clock as parameters $2..$6 (namespace is $1). */
const formula = (base: string) =>
  decayedImportanceSql(base, LAST_ACTIVE_SQL, { now: '$2::timestamptz', after: '$3::float8', cycle: '$4::float8', factor: '$5::float8', floor: '$6::float8' });
const settingsArgs = (now: Date, s: DecaySettings) => [now.toISOString(), s.afterDays, s.cycleDays, s.factor, s.floor];

/**
 * A Gold entity is "decayed" when none of its live Silver members is the subject or object of a
 * current fact any more and at least one of their facts was pruned; it is retired with reason
 * 'pruned' (promotion leaves it so, promotion.service.ts `refresh`), and comes back when one is current again.
 */
const GOLD_HAS_CURRENT_FACT = `EXISTS (SELECT 1 FROM gold.entity_members m JOIN silver.facts f ON (f.subject_entity_id = m.silver_entity_id OR f.object_entity_id = m.silver_entity_id)
                                    WHERE m.gold_entity_id = g.id AND m.removed_at IS NULL AND f.retired_at IS NULL)`;
const GOLD_HAS_PRUNED_FACT = `EXISTS (SELECT 1 FROM gold.entity_members m JOIN silver.facts f ON (f.subject_entity_id = m.silver_entity_id OR f.object_entity_id = m.silver_entity_id)
                                    WHERE m.gold_entity_id = g.id AND m.removed_at IS NULL AND f.retired_reason = 'pruned')`;

/**
 * The SQL of decay, pruning and restoring (docs/lifecycle.md). Bronze is only read (the ingest
 * times of a fact's events); every change to a fact or Gold entity queues its re-projection in
 * the same transaction, so Neo4j and search follow.
 */
export class LifecycleRepository {
  constructor(private readonly sql: Sql) {}

  /** Writes every current fact's effective importance at `now` (one statement), then brings back Gold entities with a current fact. */
  async decay(tx: Sql, namespace: string, now: Date, s: DecaySettings, jobId: string | null): Promise<DecayRun> {
    // Only rows whose value moved are written (a daily run over a settled namespace writes little).
    const [r] = await tx.rows(
      `WITH x AS MATERIALIZED (
         SELECT f.id, f.importance, LEAST(1, GREATEST(0, ${formula('f.importance')}))::real AS eff
           FROM silver.facts f WHERE f.namespace = $1 AND f.retired_at IS NULL),
       u AS (
         UPDATE silver.facts f SET effective_importance = x.eff, decayed_at = $2::timestamptz
           FROM x WHERE f.id = x.id AND f.effective_importance IS DISTINCT FROM x.eff
         RETURNING f.id)
       SELECT count(*)::int AS facts, count(*) FILTER (WHERE x.eff < x.importance)::int AS decayed, (SELECT count(*) FROM u)::int AS written FROM x`,
      [namespace, ...settingsArgs(now, s)],
      (row) => ({ facts: col.number(row, 'facts'), decayed: col.number(row, 'decayed'), written: col.number(row, 'written') }),
    );
    const restored = await this.restoreGold(tx, namespace, null, jobId);
    return { facts: r?.facts ?? 0, decayed: r?.decayed ?? 0, written: r?.written ?? 0, restoredGoldEntities: restored.length };
  }

  /**
   * Retires with reason 'pruned' the namespace's current facts whose importance, decayed at `now`,
   * is at most `maxImportance` and that were neither seen nor used for `unusedForDays` days, unless
   * a human overlay sits on them; then the Gold entities left without a current fact.
   */
  async prune(tx: Sql, namespace: string, now: Date, s: DecaySettings, maxImportance: number, unusedForDays: number, jobId: string | null): Promise<PruneRun> {
    const matches = `f.namespace = $1 AND f.retired_at IS NULL AND f.valid_to IS NULL
        AND ${formula('f.importance')} <= $7::float8
        AND ${LAST_ACTIVE_SQL} <= $2::timestamptz - make_interval(days => $8::int)`;
    const args = [namespace, ...settingsArgs(now, s), maxImportance, unusedForDays];
    const facts = await tx.returning(
      `UPDATE silver.facts f SET retired_at = now(), retired_reason = 'pruned' WHERE ${matches} AND NOT ${OVERLAID} RETURNING f.id::text AS id`,
      args,
      ids,
    );
    const protectedByOverlay = await tx.one(`SELECT count(*)::int AS n FROM silver.facts f WHERE ${matches} AND ${OVERLAID}`, args, (r) => col.number(r, 'n'));
    const goldEntities = await tx.returning(
      `UPDATE gold.entities g SET retired_at = now(), retired_reason = 'pruned', version = g.version + 1, updated_at = now()
        WHERE g.namespace = $1 AND g.retired_at IS NULL AND NOT ${GOLD_HAS_CURRENT_FACT} AND ${GOLD_HAS_PRUNED_FACT}
        RETURNING g.id::text AS id`,
      [namespace],
      ids,
    );
    // The Gold projector claims Gold rows by their batch tag (gold-projection.job.ts): one batch per run.
    await enqueueOutbox(tx, [
      ...outboxRows(namespace, 'fact', facts, { jobId, lifecycle: 'pruned' }),
      ...outboxRows(namespace, 'gold_entity', goldEntities, { jobId, lifecycle: 'pruned', batch: randomUUID() }),
    ]);
    return { facts, goldEntities, protectedByOverlay };
  }

  /** Brings back pruned facts (all of the namespace when `factIds` is null) unchanged, and the Gold entities that have a current fact again. */
  async restore(tx: Sql, namespace: string, factIds: readonly string[] | null, jobId: string | null): Promise<RestoreRun> {
    const facts = await tx.returning(
      `UPDATE silver.facts f SET retired_at = NULL, retired_reason = NULL
        WHERE f.namespace = $1 AND f.retired_reason = 'pruned' AND ($2::uuid[] IS NULL OR f.id = ANY($2::uuid[]))
        RETURNING f.id::text AS id`,
      [namespace, factIds],
      ids,
    );
    // The older facts these superseded hold the SUPERSEDES edge from them (fact-edges.ts): re-projected too.
    const older = await tx.returning(`SELECT f.id::text AS id FROM silver.facts f WHERE f.superseded_by = ANY($1::uuid[])`, [facts], ids);
    await enqueueOutbox(tx, outboxRows(namespace, 'fact', [...facts, ...older], { jobId, lifecycle: 'restored' }));
    const goldEntities = await this.restoreGold(tx, namespace, null, jobId);
    return { facts, goldEntities };
  }

  private async restoreGold(tx: Sql, namespace: string, goldIds: readonly string[] | null, jobId: string | null): Promise<string[]> {
    const restored = await tx.returning(
      `UPDATE gold.entities g SET retired_at = NULL, retired_reason = NULL, version = g.version + 1, updated_at = now()
        WHERE g.namespace = $1 AND g.retired_reason = 'pruned' AND ($2::uuid[] IS NULL OR g.id = ANY($2::uuid[])) AND ${GOLD_HAS_CURRENT_FACT}
        RETURNING g.id::text AS id`,
      [namespace, goldIds],
      ids,
    );
    await enqueueOutbox(tx, outboxRows(namespace, 'gold_entity', restored, { jobId, lifecycle: 'restored', batch: randomUUID() }));
    return restored;
  }

  /** The decay inputs and output of some facts (tests, docs): base, stored effective importance, last activity. */
  async factLifecycle(factIds: readonly string[]): Promise<FactLifecycleRow[]> {
    return this.sql.rows(
      `SELECT f.id::text AS id, f.importance::float8 AS importance, f.effective_importance::float8 AS effective_importance, ${LAST_ACTIVE_SQL} AS last_active
         FROM silver.facts f WHERE f.id = ANY($1::uuid[])`,
      [factIds],
      (r) => ({
        id: col.string(r, 'id'),
        importance: col.number(r, 'importance'),
        effectiveImportance: col.numberOrNull(r, 'effective_importance'),
        lastActive: col.date(r, 'last_active'),
      }),
    );
  }

  /** Namespaces with facts (the decay and prune schedules cover these): a skip scan of facts_ns_idx, one probe per namespace. */
  namespacesWithFacts(): Promise<string[]> {
    return distinctNamespaces(this.sql, 'silver.facts');
  }
}
