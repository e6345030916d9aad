import { Counter, Gauge, Registry } from 'prom-client';
import { distinctNamespaces } from '../../platform/postgres/distinct-namespaces';
import { col, Sql } from '../../platform/postgres/sql';
import { telemetryRegistry } from '../../platform/telemetry/metrics';
import { BrokenLink, VerifyResult } from './chain';

/**
 * The scheduled verify's results (`ops.chain_verifications`, migration 1764400001430,
 * docs/operations.md "Scheduled verify"): one row per run and namespace; the latest row per
 * namespace is what the quality report, the gauges and /health read.
 */
export type ChainVerifyResult = 'intact' | 'broken' | 'error';

/** Runs of the scheduled verify, by result (counted by the worker that ran them). */
export const chainVerifications = new Counter({
  name: 'medallion_chain_verifications_total',
  help: 'Scheduled hash-chain verifications by result (intact, broken, error)',
  labelNames: ['result'],
  registers: [telemetryRegistry],
});
for (const result of ['intact', 'broken', 'error'] as const) chainVerifications.labels(result).inc(0);

export interface ChainVerification {
  namespace: string;
  result: ChainVerifyResult;
  finishedAt: Date;
  links: number;
  retained: number;
  unsealed: number;
  broken: BrokenLink | null;
  error: string | null;
}

/** What /health (and anyone else) reads of the scheduled verify: when it last completed and how many namespaces are broken. */
export interface ChainVerifyState {
  /** The latest run that reached a verdict (intact or broken), any namespace; null: none yet. */
  lastVerifiedAt: Date | null;
  /** Namespaces whose latest run found a broken link. */
  brokenNamespaces: number;
  /** Namespaces with at least one run. */
  verifiedNamespaces: number;
}

export class ChainVerificationRepository {
  constructor(private readonly sql: Sql) {}

  async record(
    namespace: string,
    jobId: string | null,
    startedAt: Date,
    outcome: { result: VerifyResult & { unsealed: number } } | { error: string },
  ): Promise<void> {
    if ('error' in outcome) {
      await this.sql.execute(`INSERT INTO ops.chain_verifications (namespace, job_id, started_at, result, error) VALUES ($1, $2::uuid, $3, 'error', $4)`, [
        namespace,
        jobId,
        startedAt,
        outcome.error.slice(0, 2000),
      ]);
      return;
    }
    const r = outcome.result;
    const b = r.broken;
    await this.sql.execute(
      `INSERT INTO ops.chain_verifications (namespace, job_id, started_at, result, links, retained, unsealed, broken_position, broken_kind, broken_id, broken_reason)
       VALUES ($1, $2::uuid, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        namespace,
        jobId,
        startedAt,
        r.ok ? 'intact' : 'broken',
        r.links,
        r.retained,
        r.unsealed,
        b?.position ?? null,
        b?.kind ?? null,
        b?.id ?? null,
        b?.reason ?? null,
      ],
    );
  }

  /** The latest run of each of these namespaces. */
  async latest(namespace: string): Promise<ChainVerification | null> {
    return this.sql.maybeOne(
      `SELECT namespace, result, finished_at, links::text AS links, retained::text AS retained, unsealed::text AS unsealed,
              broken_position::text AS broken_position, broken_kind, broken_id, broken_reason, error
         FROM ops.chain_verifications WHERE namespace = $1 ORDER BY id DESC LIMIT 1`,
      [namespace],
      (r) => ({
        namespace: col.string(r, 'namespace'),
        result: col.string(r, 'result') as ChainVerifyResult,
        finishedAt: col.date(r, 'finished_at'),
        links: Number(col.string(r, 'links')),
        retained: Number(col.string(r, 'retained')),
        unsealed: Number(col.string(r, 'unsealed')),
        broken:
          col.stringOrNull(r, 'broken_reason') === null
            ? null
            : {
                position: Number(col.string(r, 'broken_position')),
                kind: col.string(r, 'broken_kind') as BrokenLink['kind'],
                id: col.string(r, 'broken_id'),
                reason: col.string(r, 'broken_reason'),
              },
        error: col.stringOrNull(r, 'error'),
      }),
    );
  }

  /** Every namespace with a chain (a skip scan of its primary key). */
  namespaces(): Promise<string[]> {
    return distinctNamespaces(this.sql, 'ops.hash_chain');
  }

  async state(): Promise<ChainVerifyState> {
    return this.sql.one(
      `WITH latest AS (SELECT DISTINCT ON (namespace) namespace, result FROM ops.chain_verifications ORDER BY namespace, id DESC)
       SELECT (SELECT max(finished_at) FROM ops.chain_verifications WHERE result <> 'error') AS last_verified_at,
              (SELECT count(*)::int FROM latest WHERE result = 'broken') AS broken,
              (SELECT count(*)::int FROM latest) AS verified`,
      [],
      (r) => ({
        lastVerifiedAt: col.dateOrNull(r, 'last_verified_at'),
        brokenNamespaces: col.number(r, 'broken'),
        verifiedNamespaces: col.number(r, 'verified'),
      }),
    );
  }
}

/** The stored state of the scheduled verify, for /health: one statement over `ops.chain_verifications`. */
export function readChainVerifyState(sql: Sql): Promise<ChainVerifyState> {
  return new ChainVerificationRepository(sql).state();
}

/**
 * The gauges of the scheduled verify, read from the database at each scrape (the same in every
 * process): `medallion_chain_broken_namespaces` and `medallion_chain_last_verified_timestamp_seconds`
 * (0 before the first run). No label: a namespace is client text.
 */
export function registerChainVerifyGauges(sql: Sql, registry: Registry): void {
  // One read per scrape shared by both gauges (prom-client collects a scrape's metrics concurrently).
  let pending: Promise<ChainVerifyState> | null = null;
  const read = () => {
    pending ??= readChainVerifyState(sql).finally(() => setTimeout(() => (pending = null), 0));
    return pending;
  };
  new Gauge({
    name: 'medallion_chain_broken_namespaces',
    help: 'Namespaces whose latest scheduled hash-chain verification found a broken link',
    registers: [registry],
    async collect() {
      this.set((await read()).brokenNamespaces);
    },
  });
  new Gauge({
    name: 'medallion_chain_last_verified_timestamp_seconds',
    help: 'Unix time of the latest scheduled hash-chain verification that reached a verdict (0: none yet)',
    registers: [registry],
    async collect() {
      const at = (await read()).lastVerifiedAt;
      this.set(at ? at.getTime() / 1000 : 0);
    },
  });
}
