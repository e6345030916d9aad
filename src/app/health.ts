import { DataSource } from 'typeorm';
import { LoopStatus } from '../common/loop';
import { readBacklog } from '../platform/backlog';
import { StageRunner } from '../platform/stages';
import { Sql } from '../platform/postgres/sql';
import { readChainVerifyState } from '../gold/portability/chain-verify.repository';
import type { WorkerProcess } from './worker-process';

/** One section of /health: `ok: false` turns the answer 503; the other fields are details. */
export interface HealthReport {
  readonly ok: boolean;
  readonly [detail: string]: unknown;
}

/**
 * A named part of `/health` (docs/operations.md "Health"). The answer is every section under its
 * name, and 503 when any says `ok: false` (or throws: that section then reads `{ ok: false,
 * error }`). Adding a check is adding one section to the list `app.ts` builds.
 */
export interface HealthSection {
  readonly name: string;
  read(): Promise<HealthReport>;
}

export interface HealthAnswer {
  readonly status: 200 | 503;
  readonly body: { readonly status: 'ok' | 'degraded' } & Record<string, unknown>;
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err)).slice(0, 300);

/** Reads every section at once. */
export async function readHealth(sections: readonly HealthSection[]): Promise<HealthAnswer> {
  const reports = await Promise.all(
    sections.map(async (s): Promise<[string, HealthReport]> => [s.name, await s.read().catch((err: unknown) => ({ ok: false, error: errorText(err) }))]),
  );
  const ok = reports.every(([, r]) => r.ok);
  return { status: ok ? 200 : 503, body: { status: ok ? 'ok' : 'degraded', ...Object.fromEntries(reports) } };
}

/** A store that answers or not (`check` throws when it does not): `{ ok }` or `{ ok: false, error }`. */
export function storeSection(name: string, check: () => Promise<void>): HealthSection {
  return {
    name,
    read: async () => {
      await check();
      return { ok: true };
    },
  };
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** One stage as /health shows it. */
function stageReport(s: LoopStatus, stalled: boolean, now: number): Record<string, unknown> {
  return {
    running: s.running,
    stalled,
    steps: s.steps,
    lastStepAt: iso(s.lastStepAt),
    stepRunningSeconds: s.stepStartedAt === null ? null : Math.round((now - s.stepStartedAt) / 1000),
    lastError: s.lastError ? { at: iso(s.lastError.at), message: s.lastError.message } : null,
    failingSince: iso(s.failingSince),
  };
}

/**
 * This process's background stages (derivation, projector, jobs, chain sealer, …), each with
 * whether it runs, when its last step ended and its last error. A stage is **stalled** when every
 * step has failed for `stallSeconds` or longer (a store it needs refuses, a bug that throws each
 * time), or when it stopped while the process runs; a stalled stage turns /health 503. A long step
 * is not stalled (a rebuild job runs for hours inside one step of the jobs stage); a lag is not
 * either (see the `lags` section and the alert rules). A process that runs no workers (`serve
 * --no-worker`) says so with `runsHere: false`.
 */
export function workersSection(stages: StageRunner, stallSeconds: number, now: () => number = Date.now): HealthSection {
  return {
    name: 'workers',
    read: async () => {
      if (!stages.started) return { ok: true, runsHere: false, stages: {} };
      const t = now();
      const report: Record<string, unknown> = {};
      let ok = true;
      for (const [name, s] of Object.entries(stages.status())) {
        // A stage that waits for Neo4j to answer (startWhen) has not started yet: it has taken no step.
        const stopped = !s.running && s.steps > 0;
        const failing = s.failingSince !== null && t - s.failingSince >= stallSeconds * 1000;
        if (stopped || failing) ok = false;
        report[name] = stageReport(s, stopped || failing, t);
      }
      return { ok, runsHere: true, stallSeconds, stages: report };
    },
  };
}

/**
 * The pipeline's backlog (the same in every process: it reads the database): how many events wait
 * for derivation and the oldest one's age, how many outbox rows wait for the projector and the
 * oldest one's age, the open dead letters. Informative only: a backlog is normal during a bulk
 * import, so it never turns /health 503; the alert rules (ops/prometheus/alerts.yml) say when it
 * lasts too long.
 */
export function lagsSection(ds: DataSource): HealthSection {
  return {
    name: 'lags',
    read: async () => {
      const b = await readBacklog(ds);
      return {
        ok: true,
        derivation: { pending: b.derivationPending, oldestSeconds: b.derivationLagSeconds },
        outbox: { pending: b.outboxPending, oldestSeconds: b.outboxLagSeconds },
        deadLettersOpen: b.deadLettersOpen,
      };
    },
  };
}

/**
 * The scheduled hash-chain verify (docs/operations.md "Scheduled verify"), as stored: when a run
 * last reached a verdict, how many namespaces were verified and how many of them the latest run
 * found broken (a count: a namespace is client text). Informative, like the lags: a broken chain
 * is altered history, which no restart or rotation repairs, so it never turns /health 503; the
 * `MedallionChainBroken` alert rule (ops/prometheus/alerts.yml) pages on it.
 */
export function chainSection(ds: DataSource): HealthSection {
  return {
    name: 'chain',
    read: async () => {
      const s = await readChainVerifyState(Sql.of(ds));
      return {
        ok: true,
        lastVerifiedAt: s.lastVerifiedAt?.toISOString() ?? null,
        verifiedNamespaces: s.verifiedNamespaces,
        brokenNamespaces: s.brokenNamespaces,
      };
    },
  };
}

/**
 * The worker process `serve` starts (worker-process.ts): whether a child runs now and its pid.
 * Informative, like the lags: between a crash and its restart the API still answers; the child's
 * own stages are not listed here (their stalls show in the lags).
 */
export function workerProcessSection(worker: Pick<WorkerProcess, 'pid'>): HealthSection {
  return { name: 'workerProcess', read: async () => ({ ok: true, running: worker.pid !== undefined, pid: worker.pid ?? null }) };
}
