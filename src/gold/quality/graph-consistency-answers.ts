import type { GraphConsistency } from '../../graph/graph-rebuild.service';
import { Stage } from '../../platform/stages';
import { GraphConsistencyRepository, RefreshPolicy, StoredGraphConsistency } from './graph-consistency.repository';

/** What the report needs of the graph floor: the existing Postgres-against-Neo4j comparison (GraphRebuildService). */
export interface GraphConsistencySource {
  checkConsistency(namespace: string): Promise<GraphConsistency>;
}

/** An answer of `consistency_graph` and how fresh it is. */
export interface ConsistencyAnswer extends StoredGraphConsistency {
  /** Computed for this report (no stored answer, or one older than the maximum age). */
  computedNow: boolean;
  maxAgeSeconds: number;
}

/** How often the refresh stage looks for a due answer when it found none. */
export const CONSISTENCY_REFRESH_POLL_MS = 10_000;
/** Answers no report read for this long are no longer kept fresh (they are recomputed when read again). */
export const CONSISTENCY_KEEP_READ_SECONDS = 24 * 3600;

export interface ConsistencyAnswerOptions {
  /** QUALITY_CONSISTENCY_MAX_AGE_SECONDS; 0: always compute at report time. */
  maxAgeSeconds: number;
  /** QUALITY_CONSISTENCY_REFRESH_SECONDS; 0: no background refresh. */
  refreshSeconds: number;
}

/**
 * `consistency_graph` without the wait (docs/quality.md, "consistency_graph: the stored answer").
 * Comparing Postgres with Neo4j hashes every key of the namespace in both stores (5 s at 100k
 * facts), so the report reads the latest stored answer with its age, and computes (and stores) a
 * new one when there is none or it is older than `maxAgeSeconds`. The worker's refresh stage
 * recomputes stored answers that are read and either changed since, failed, or near the maximum
 * age, so a reader rarely waits and a difference stays hidden at most `maxAgeSeconds` (the detail
 * says how old the answer is and whether the graph changed since).
 */
export class GraphConsistencyAnswers {
  constructor(
    private readonly repo: GraphConsistencyRepository,
    private readonly graph: GraphConsistencySource,
    private readonly opts: ConsistencyAnswerOptions,
  ) {}

  /** The answer a report shows: the stored one when young enough, else a new one. */
  async forReport(namespace: string): Promise<ConsistencyAnswer> {
    if (this.opts.maxAgeSeconds > 0) {
      const latest = await this.repo.latest(namespace);
      if (latest && latest.ageSeconds <= this.opts.maxAgeSeconds) return { ...latest, computedNow: false, maxAgeSeconds: this.opts.maxAgeSeconds };
    }
    return { ...(await this.compute(namespace)), computedNow: true, maxAgeSeconds: this.opts.maxAgeSeconds };
  }

  /** Compares the two stores now and stores the answer. */
  async compute(namespace: string): Promise<StoredGraphConsistency> {
    const start = await this.repo.start();
    const t0 = Date.now();
    const result = await this.graph.checkConsistency(namespace);
    const ms = Date.now() - t0;
    await this.repo.save(namespace, start, result, ms);
    return { result, checkedAt: start.at, ageSeconds: 0, ms, changedSince: false };
  }

  /** The policy of the refresh stage. */
  get policy(): RefreshPolicy {
    return {
      refreshSeconds: this.opts.refreshSeconds,
      maxAgeSeconds: this.opts.maxAgeSeconds,
      readWithinSeconds: CONSISTENCY_KEEP_READ_SECONDS,
      // A comparison takes seconds; a claim that outlives a crashed worker lapses after this.
      claimSeconds: Math.max(60, this.opts.refreshSeconds),
    };
  }

  /** Recomputes the most due stored answer, if any; the namespace it recomputed. */
  async refreshOne(): Promise<string | null> {
    const namespace = await this.repo.claimDue(this.policy);
    if (namespace === null) return null;
    try {
      await this.compute(namespace);
    } catch (err) {
      await this.repo.release(namespace).catch(() => undefined);
      throw new Error(`graph consistency of ${namespace}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    return namespace;
  }

  /** The worker's background stage: one due namespace per step (registered when both settings are above 0). */
  stage(pollMs = CONSISTENCY_REFRESH_POLL_MS): Stage {
    return {
      name: 'graph-consistency',
      wakeOn: [],
      pollMs,
      step: async () => (await this.refreshOne()) !== null,
    };
  }
}
