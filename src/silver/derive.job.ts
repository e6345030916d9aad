import { DataSource } from 'typeorm';
import { col, Sql, SqlRow } from '../platform/postgres/sql';
import { EventRepository } from '../bronze/event.repository';
import { BronzeEvent } from '../bronze/event.types';
import { retryDelaySql } from '../platform/backoff';
import { FencedLease, Leases, LeaseTable } from '../platform/lease';
import { Stage } from '../platform/stages';
import { CHANNELS } from '../platform/pubsub/topics';
import { DeriveService } from './derive.service';
import { ModelException } from './model.exception';
import { LostClaimError, writePlan } from './silver-writer';
import { ATTR, namespaceHash, traced } from '../platform/telemetry/tracing';

export interface DeriveJobSettings {
  workerId: string;
  /** N: a namespace is derived once it has this many pending events… */
  batchSize: number;
  /** …or its oldest pending event has waited this long (T)… */
  maxWaitMs: number;
  /**
   * …or nothing was queued for it this long (Q; 0 or unset: off): a chat that went quiet is
   * derived at once instead of T after its first message, and a namespace that keeps receiving
   * events (a bulk import) still waits for N or T.
   */
  quietMs?: number;
  leaseSeconds: number;
  maxAttempts: number;
  /** Base of the exponential retry delay of a failed event. */
  retryBaseSeconds: number;
}

export type DeriveResult =
  | {
      kind: 'success';
      namespace: string;
      /** Events whose effect committed. */
      events: number;
      facts: number;
      superseded: number;
      deadLettered: number;
      /** The batch failed as a whole and was retried event by event. */
      fallback: boolean;
    }
  | { kind: 'skipped' }
  | { kind: 'failed'; namespace: string; error: string };

/** Receives what a batch changed (tests and metrics); subscribers hear it through NOTIFY. */
export type DeriveObserver = (r: DeriveResult) => void;

/**
 * A namespace's derivation lane is leased (platform/lease.ts) on its own row: one holder per
 * namespace, across workers. Erasing an event (`bronze.destroy_event`) bumps the namespace's
 * generation too, so a batch planned before the erasure cannot commit.
 */
const DERIVATION_LEASES: LeaseTable = { table: 'ops.derivation_leases', key: 'namespace', holder: 'worker_id', until: 'lease_until', token: 'generation' };

/**
 * The micro-batch derivation job. One namespace at a time per call, under a lease with a fencing
 * generation: a killed worker's lease expires and another takes over; a worker whose lease was
 * taken cannot commit (its write transaction checks the generation and the queue rows), so each
 * event's effect lands exactly once.
 */
export class DeriveJob {
  private readonly sql: Sql;
  private readonly leases: Leases;

  constructor(
    private readonly ds: DataSource,
    private readonly events: EventRepository,
    private readonly derive: DeriveService,
    private readonly settings: DeriveJobSettings,
    private readonly log: (msg: string) => void = () => undefined,
  ) {
    this.sql = Sql.of(ds);
    this.leases = new Leases(this.sql, DERIVATION_LEASES);
  }

  /** Namespaces with work that is due, oldest first. */
  async readyNamespaces(limit: number): Promise<string[]> {
    return this.sql.rows(
      `SELECT namespace FROM ops.derivation_queue
        WHERE status IN ('pending', 'failed') AND available_at <= now() AND attempts < $1
        GROUP BY namespace
       HAVING count(*) FILTER (WHERE status = 'pending') >= $2
           OR min(enqueued_at) <= now() - make_interval(secs => $3::float / 1000)
           OR ($5::int > 0 AND max(enqueued_at) <= now() - make_interval(secs => $5::float / 1000))
           OR bool_or(job_id IS NOT NULL) OR bool_or(status = 'failed')
        ORDER BY min(enqueued_at)
        LIMIT $4`,
      [this.settings.maxAttempts, this.settings.batchSize, this.settings.maxWaitMs, limit, this.settings.quietMs ?? 0],
      (r) => col.string(r, 'namespace'),
    );
  }

  /** Derives the next batch of one namespace if its lease can be had. */
  async runNamespace(namespace: string): Promise<DeriveResult> {
    const lease = await this.leases.acquire(namespace, this.settings.workerId, this.settings.leaseSeconds);
    if (lease === null) return { kind: 'skipped' };
    try {
      const batch = await this.nextBatch(namespace);
      if (batch.events.length === 0) return { kind: 'skipped' };
      // Tracing on: the batch continues the trace of its first event's ingest (another process's
      // request, through the queue row's traceparent) and links the other events' traces.
      return await traced(
        'medallion.derive.batch',
        { [ATTR.store]: namespaceHash(namespace), [ATTR.events]: batch.events.length, 'medallion.rebuild': batch.jobId !== null },
        async (span) => {
          const r = await this.process(namespace, batch.events, batch.jobId, lease);
          if (span && r.kind === 'success') {
            span.setAttributes({
              [ATTR.facts]: r.facts,
              'medallion.superseded': r.superseded,
              'medallion.dead_lettered': r.deadLettered,
              'medallion.fallback': r.fallback,
            });
          }
          return r;
        },
        { parent: batch.traceparents.find((t) => t !== null) ?? null, links: batch.traceparents },
      );
    } catch (err) {
      return { kind: 'failed', namespace, error: err instanceof Error ? err.message : String(err) };
    } finally {
      await this.leases.release(lease).catch(() => undefined);
    }
  }

  /**
   * Pending events in the order they reached Bronze: by ingest transaction (`enqueued_at`, its start;
   * kept when a rebuild or an erasure re-queues an event), within one in time order (conversation
   * sequence, then id, breaking ties). So live derivation, a rebuild and a fresh instance fed the
   * same requests derive in one order however the events are cut into batches (docs/silver.md
   * "Order"). A failed event is retried alone.
   */
  private async nextBatch(namespace: string): Promise<{ events: BronzeEvent[]; jobId: string | null; traceparents: Array<string | null> }> {
    const toQueued = (r: SqlRow): { event_id: string; job_id: string | null; traceparent: string | null } => ({
      event_id: col.string(r, 'event_id'),
      job_id: col.stringOrNull(r, 'job_id'),
      traceparent: col.stringOrNull(r, 'traceparent'),
    });
    let rows = await this.sql.rows(
      `SELECT event_id, job_id, traceparent FROM ops.derivation_queue q
        WHERE namespace = $1 AND status = 'pending' AND available_at <= now() AND ${NOT_DESTROYED}
        ORDER BY enqueued_at, occurred_at, conversation_id, sequence_num, event_id LIMIT $2`,
      [namespace, this.settings.batchSize],
      toQueued,
    );
    if (rows.length === 0) {
      rows = await this.sql.rows(
        `SELECT event_id, job_id, traceparent FROM ops.derivation_queue q
          WHERE namespace = $1 AND status = 'failed' AND available_at <= now() AND attempts < $2 AND ${NOT_DESTROYED}
          ORDER BY occurred_at, event_id LIMIT 1`,
        [namespace, this.settings.maxAttempts],
        toQueued,
      );
    }
    const events = await this.events.findByIds(rows.map((r) => r.event_id));
    const order = new Map(rows.map((r, i) => [r.event_id, i]));
    events.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
    return { events, jobId: rows.find((r) => r.job_id)?.job_id ?? null, traceparents: rows.map((r) => r.traceparent) };
  }

  private async process(namespace: string, events: BronzeEvent[], jobId: string | null, lease: FencedLease): Promise<DeriveResult> {
    try {
      const out = await this.planAndWrite(namespace, events, jobId, lease);
      return { kind: 'success', namespace, events: events.length, facts: out.added, superseded: out.superseded, deadLettered: 0, fallback: false };
    } catch (err) {
      if (err instanceof LostClaimError) throw err;
      if (events.length === 1) {
        await this.deadLetter(namespace, events[0] as BronzeEvent, err);
        return { kind: 'success', namespace, events: 0, facts: 0, superseded: 0, deadLettered: 1, fallback: false };
      }
      // Isolate the bad event: derive one by one so the others still land.
      this.log(`derive: batch of ${events.length} in ${namespace} failed (${String(err)}); retrying event by event`);
      let facts = 0;
      let superseded = 0;
      let dead = 0;
      for (const e of events) {
        try {
          const out = await this.planAndWrite(namespace, [e], jobId, lease);
          facts += out.added;
          superseded += out.superseded;
        } catch (one) {
          if (one instanceof LostClaimError) throw one;
          await this.deadLetter(namespace, e, one);
          dead += 1;
        }
      }
      return { kind: 'success', namespace, events: events.length - dead, facts, superseded, deadLettered: dead, fallback: true };
    }
  }

  private async planAndWrite(
    namespace: string,
    events: BronzeEvent[],
    jobId: string | null,
    lease: FencedLease,
  ): Promise<{ added: number; superseded: number }> {
    const earlier = await this.events.earlierTurns(namespace, events, EARLIER_TURNS);
    const plan = await this.derive.plan(namespace, events, earlier);
    return this.ds.transaction(async (em) => {
      if (!(await this.leases.fence(lease, Sql.within(em)))) throw new LostClaimError(`lease on ${namespace} was taken over`);
      const out = await writePlan(em, plan, { kind: jobId ? 'rebuild' : 'incremental', jobId, workerId: this.settings.workerId });
      return { added: out.added.length, superseded: out.superseded.length };
    });
  }

  /** Records the failure; the event is retried with exponential backoff until maxAttempts. */
  private async deadLetter(namespace: string, event: BronzeEvent, err: unknown): Promise<void> {
    const code = err instanceof ModelException ? err.code : 'DERIVATION_ERROR';
    const message = (err instanceof Error ? err.message : String(err)).slice(0, 4000);
    const raw = err instanceof ModelException ? (err.rawOutput?.slice(0, 20_000) ?? null) : null;
    await this.sql.transaction(async (tx) => {
      const [state] = await tx.returning(
        `UPDATE ops.derivation_queue SET status = 'failed', attempts = attempts + 1, last_error = $2,
                available_at = now() + ${retryDelaySql('attempts', '$3', '3600')}
          WHERE event_id = $1 RETURNING attempts, available_at`,
        [event.id, `${code}: ${message}`, this.settings.retryBaseSeconds],
        (r) => ({ attempts: col.number(r, 'attempts'), available_at: col.date(r, 'available_at') }),
      );
      const nextRetry = state && state.attempts < this.settings.maxAttempts ? state.available_at : null;
      await tx.execute(
        `INSERT INTO silver.dead_letters (namespace, event_id, error_code, error, raw_output, attempts, next_retry_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (event_id) WHERE resolved_at IS NULL
         DO UPDATE SET error_code = EXCLUDED.error_code, error = EXCLUDED.error, raw_output = EXCLUDED.raw_output,
                       attempts = EXCLUDED.attempts, next_retry_at = EXCLUDED.next_retry_at, updated_at = now()`,
        [namespace, event.id, code, message, raw, state?.attempts ?? 1, nextRetry],
      );
    });
    this.log(`derive: event ${event.id} in ${namespace} dead-lettered (${code}: ${message})`);
  }
}

/**
 * The turns read as context before a batch, per conversation (ExtractionContext.earlier): a chat
 * that arrives a message at a time is derived a message at a time, and a note typed as fragments
 * ("meeting w/ legal", "thurs 2pm", "room 4b") is joined only if the extractor sees the turns
 * before. The offline extractor joins fragments at most 10 minutes apart.
 */
const EARLIER_TURNS = { limit: 6, withinMs: 30 * 60_000 };

/** Derivation skips events an approved destroyEvent erased (docs/approvals.md), whatever their queue row says. */
const NOT_DESTROYED = `NOT EXISTS (SELECT 1 FROM bronze.event_tombstones t WHERE t.event_id = q.event_id)`;

/** Batches one lane derives per step before the step returns (so stopping the loop waits for a few at most). */
const BATCHES_PER_LANE = 4;

/**
 * Derivation as a stage of the one runner (platform/stages.ts): woken by the ingest's NOTIFY,
 * `DERIVE_POLL_MS` otherwise.
 */
export function deriveStage(job: DeriveJob, settings: { concurrency: number; pollMs: number }, observe: DeriveObserver, log: (msg: string) => void): Stage {
  return { name: 'derivation', wakeOn: [CHANNELS.events], pollMs: settings.pollMs, step: deriveStep(job, settings.concurrency, observe, log) };
}

/**
 * One derive step: `concurrency` lanes, each taking the next due namespace no
 * other lane holds, batch after batch, so a lane whose batch ended early does not wait for the
 * others. True when any worked.
 */
export function deriveStep(job: DeriveJob, concurrency: number, observe: DeriveObserver, log: (msg: string) => void): () => Promise<boolean> {
  return async () => {
    const held = new Set<string>();
    let worked = false;
    // Lanes pick one at a time: two lanes of one worker must never take the same namespace (its lease is the worker's).
    let picking: Promise<unknown> = Promise.resolve();
    const pick = (): Promise<string | undefined> => {
      const next = picking.then(async () => {
        const namespace = (await job.readyNamespaces(concurrency + held.size)).find((ns) => !held.has(ns));
        if (namespace) held.add(namespace);
        return namespace;
      });
      picking = next.catch(() => undefined);
      return next;
    };
    const lane = async (): Promise<void> => {
      for (let i = 0; i < BATCHES_PER_LANE; i++) {
        const namespace = await pick();
        if (!namespace) return;
        let r: DeriveResult;
        try {
          r = await job.runNamespace(namespace);
        } finally {
          held.delete(namespace);
        }
        observe(r);
        if (r.kind === 'failed') log(`derive: ${r.namespace}: ${r.error}`);
        if (r.kind !== 'success') return;
        worked = true;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, lane));
    return worked;
  };
}
