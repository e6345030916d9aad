import { assertUnreachable } from '../../common/assert-unreachable';
import { Sql } from '../postgres/sql';
import { retryDelaySeconds } from '../backoff';
import { ClaimedJob, ClaimedRow, JobOutcome, Lease, LostLeaseError } from './job';
import { JobContext, JobHandler, JobHandlers } from './job-handler';
import { JobProgress, JobRepository, RetryPolicy } from './job.repository';
import { ScheduleRepository } from './schedule.repository';
import { Stage } from '../stages';
import { CHANNELS } from '../pubsub/topics';
import { pipelineMetrics, secondsSince } from '../telemetry/metrics';
import { StructuredLog } from '../../common/logger';
import { namespaceHash, traced } from '../telemetry/tracing';

export interface JobWorkerSettings<P> {
  workerId: string;
  /** Reads a claimed row's stored params into its kind's payload (throws when they do not fit). */
  parse: <K extends keyof P>(kind: K, raw: unknown) => P[K];
  log?: (msg: string) => void;
  /**
   * The lease of a kind whose handler names none (JOB_LEASE_SECONDS, default 60): a running job is
   * heartbeated every third of it, so a job whose worker died is taken over after at most this long.
   */
  leaseSeconds?: number;
  /** One structured line per job start, end and failure (ids, kind, outcome, duration; never params or content). */
  events?: StructuredLog;
}

/** Every outcome a run ends with: each registered kind's counters start at 0 for all of them. */
const OUTCOMES: ReadonlyArray<JobOutcome['kind']> = ['success', 'failed', 'skipped', 'waiting'];

const DEFAULT_LEASE_SECONDS = 60;
const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 1, baseSeconds: 30, maxSeconds: 3600 };

/**
 * The one loop that runs every kind of job: each step fires due schedules, claims the next due
 * job of a registered kind, parses its payload, runs its handler under a renewed lease, and
 * writes the outcome through the lease (success, skipped, failed with backoff, or waiting).
 * Any number of workers may run side by side: claims never overlap (`SKIP LOCKED`), and a worker
 * that lost its lease can no longer write the job (fencing token).
 */
export class JobWorker<P> {
  private readonly leaseSeconds: Record<string, number>;
  private readonly log: (msg: string) => void;

  constructor(
    private readonly jobs: JobRepository<P>,
    private readonly schedules: ScheduleRepository<P>,
    private readonly handlers: JobHandlers<P>,
    private readonly settings: JobWorkerSettings<P>,
  ) {
    this.leaseSeconds = Object.fromEntries(
      Object.entries<JobHandler<P, keyof P>>(handlers as Record<string, JobHandler<P, keyof P>>).map(([kind, h]) => [
        kind,
        h.leaseSeconds ?? settings.leaseSeconds ?? DEFAULT_LEASE_SECONDS,
      ]),
    );
    this.log = settings.log ?? (() => undefined);
    // A kind that never ran is 0 runs, not a missing series: the first promotion, decay and prune
    // used to appear only after they ran, and an alert on failed runs could not see the kind.
    for (const kind of Object.keys(this.leaseSeconds)) {
      for (const outcome of OUTCOMES) pipelineMetrics.jobRuns.inc({ kind, outcome }, 0);
      pipelineMetrics.jobSeconds.zero({ kind });
    }
  }

  /** One stage step: true when a job ran (so the stage steps again at once). */
  async step(): Promise<boolean> {
    await this.schedules.fireDue(Object.keys(this.leaseSeconds));
    return this.runNext();
  }

  /** Claims and runs the next due job, if any; true when one ran. */
  async runNext(): Promise<boolean> {
    const row = await this.jobs.claim(this.settings.workerId, this.leaseSeconds);
    if (!row) return false;
    await this.run(row);
    return true;
  }

  private async run(row: ClaimedRow): Promise<void> {
    const kind = row.kind as keyof P & string;
    const handler = (this.handlers as Record<string, JobHandler<P, keyof P>>)[kind] as JobHandler<P, keyof P>;
    const lease: Lease = { jobId: row.id, token: row.leaseToken };
    const leaseSeconds = this.leaseSeconds[kind] ?? DEFAULT_LEASE_SECONDS;
    const retry = { ...DEFAULT_RETRY, ...handler.retry };
    let params: P[keyof P];
    try {
      params = this.settings.parse(kind, row.params);
    } catch (err) {
      await this.jobs.fail(lease, `the job's params do not fit kind ${kind}: ${errorText(err)}`, { ...retry, maxAttempts: 1 });
      return;
    }
    const job: ClaimedJob<P, keyof P> = { ...row, kind, params, lease };
    const ctx = new RunContext(this.jobs, lease, leaseSeconds, this.settings.workerId);
    const heartbeat = setInterval(() => void ctx.heartbeat(), (leaseSeconds * 1000) / 3);
    heartbeat.unref();
    let outcome: JobOutcome;
    const started = process.hrtime.bigint();
    const ids = { job: row.id, kind, attempt: row.attempts + 1, worker: this.settings.workerId };
    this.settings.events?.info(ids, 'job started');
    try {
      // Every kind (rebuilds, promotion, re-embedding, kinds added later) is a span and a count by kind.
      outcome = await traced(
        `medallion.job ${kind}`,
        { 'medallion.job.kind': kind, ...(row.namespace === null ? {} : { 'gen_ai.memory.store.id': namespaceHash(row.namespace) }) },
        async (span) => {
          const o = await handler.run(job, ctx);
          span?.setAttribute('medallion.outcome', o.kind);
          return o;
        },
      );
    } catch (err) {
      outcome = err instanceof LostLeaseError ? { kind: 'skipped', message: 'lease lost' } : { kind: 'failed', error: errorText(err) };
      if (err instanceof LostLeaseError) ctx.markLost();
    } finally {
      clearInterval(heartbeat);
      pipelineMetrics.jobSeconds.observe({ kind }, secondsSince(started));
    }
    const seconds = secondsSince(started);
    pipelineMetrics.jobRuns.inc({ kind, outcome: outcome.kind });
    await ctx.settled();
    const ms = Math.round(seconds * 1000);
    if (ctx.leaseLost || !(await this.finish(lease, outcome, retry))) {
      this.settings.events?.warn({ ...ids, outcome: outcome.kind, ms }, 'job taken over by another worker: this run is dropped');
      this.log(`jobs: ${kind} ${row.id}: another worker took the job over; this run's outcome (${outcome.kind}) was dropped`);
      return;
    }
    if (outcome.kind === 'failed') {
      const retryInSeconds = row.attempts + 1 < retry.maxAttempts ? retryDelaySeconds(row.attempts, retry.baseSeconds, retry.maxSeconds) : null;
      this.settings.events?.warn({ ...ids, outcome: 'failed', ms, maxAttempts: retry.maxAttempts, retryInSeconds, error: outcome.error }, 'job failed');
      if (!this.settings.events) {
        const next = retryInSeconds === null ? 'no retry left' : `retry in ${retryInSeconds} s`;
        this.log(`jobs: ${kind} ${row.id} failed (attempt ${row.attempts + 1} of ${retry.maxAttempts}, ${next}): ${outcome.error}`);
      }
      return;
    }
    this.settings.events?.info({ ...ids, outcome: outcome.kind, ms }, 'job finished');
  }

  private finish(lease: Lease, outcome: JobOutcome, retry: RetryPolicy): Promise<boolean> {
    switch (outcome.kind) {
      case 'success':
        return this.jobs.succeed(lease, outcome.message, outcome.progressDone);
      case 'skipped':
        return this.jobs.succeed(lease, `skipped: ${outcome.message}`);
      case 'failed':
        return this.jobs.fail(lease, outcome.error, retry);
      case 'waiting':
        return this.jobs.wait(lease, outcome.checkAfterMs);
      default:
        return assertUnreachable(outcome);
    }
  }
}

/** A handler's view of its lease: ordered progress writes, heartbeats, the fence. */
class RunContext<P> implements JobContext {
  private chain: Promise<void> = Promise.resolve();
  private lost = false;

  constructor(
    private readonly jobs: JobRepository<P>,
    private readonly lease: Lease,
    private readonly leaseSeconds: number,
    readonly workerId: string,
  ) {}

  get leaseLost(): boolean {
    return this.lost;
  }

  markLost(): void {
    this.lost = true;
  }

  progress(p: JobProgress, tx?: Sql): Promise<void> {
    if (tx) return this.write(() => this.jobs.progress(this.lease, p, this.leaseSeconds, tx));
    const next = this.chain.then(() => this.write(() => this.jobs.progress(this.lease, p, this.leaseSeconds)));
    this.chain = next.catch(() => undefined);
    return next;
  }

  async fence(tx: Sql): Promise<void> {
    await this.write(() => this.jobs.holds(this.lease, tx));
  }

  async heartbeat(): Promise<void> {
    if (this.lost) return;
    await this.write(() => this.jobs.heartbeat(this.lease, this.leaseSeconds)).catch(() => undefined);
  }

  /** Every progress report queued so far has been written (or failed). */
  settled(): Promise<void> {
    return this.chain;
  }

  private async write(op: () => Promise<boolean>): Promise<void> {
    if (this.lost) throw new LostLeaseError(this.lease.jobId);
    if (!(await op())) {
      this.lost = true;
      throw new LostLeaseError(this.lease.jobId);
    }
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The job kernel as a stage of the one runner (platform/stages.ts): woken by the NOTIFY of any job
 * change. `beforeStep` runs first each time (keeping schedules up to date); its failure is logged
 * and the step goes on.
 */
export function jobStage<P>(worker: JobWorker<P>, settings: { pollMs: number; beforeStep?: () => Promise<void> }, log: (msg: string) => void): Stage {
  return {
    name: 'jobs',
    wakeOn: [CHANNELS.jobs],
    pollMs: settings.pollMs,
    step: async () => {
      await settings.beforeStep?.().catch((err: unknown) => log(`jobs: before the step: ${errorText(err)}`));
      return worker.step();
    },
  };
}
