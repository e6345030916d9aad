import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { Clock } from '../common/clock';
import { BronzeException, BronzeExceptionCode } from './bronze.exception';
import { EventRepository, keyString } from './event.repository';
import { BronzeEvent, EventSubmission, IngestOutcome, IngestStatus, NormalizedEvent, RejectCode } from './event.types';
import { IngestLimits, validateSubmission } from './event-validation';
import { activeSpan, ATTR, namespaceHash, traced } from '../platform/telemetry/tracing';

/** Postgres refused a value (SQLSTATE class 22: data exception), not the statement or the server. */
function isDataException(err: unknown): boolean {
  const code =
    (err as { code?: unknown; driverError?: { code?: unknown } } | null)?.code ?? (err as { driverError?: { code?: unknown } } | null)?.driverError?.code;
  return typeof code === 'string' && code.startsWith('22');
}

export interface IngestServiceOptions extends IngestLimits {
  maxBatchSize: number;
}

/** Observes ingest outcomes (metrics). */
export type IngestObserver = (outcomes: readonly IngestOutcome[]) => void;

/**
 * Writes events to Bronze. Each item gets its own result, in input order: CREATED, DUPLICATE
 * (same key, same checksum: the original event) or REJECTED with a code and a reason. A bad item
 * never keeps the good ones of its batch out.
 */
export class IngestService {
  constructor(
    private readonly events: EventRepository,
    private readonly clock: Clock,
    private readonly options: IngestServiceOptions,
    private readonly observe: IngestObserver = () => undefined,
  ) {}

  async ingestOne(auth: AuthContext, input: EventSubmission): Promise<IngestOutcome> {
    const [result] = await this.ingestBatch(auth, [input]);
    return result as IngestOutcome;
  }

  /**
   * One `update_memory` span per batch (tracing on): the stored events' queue and outbox rows
   * carry its traceparent, so the worker's derivation and projection continue this trace.
   */
  async ingestBatch(auth: AuthContext, inputs: readonly EventSubmission[]): Promise<IngestOutcome[]> {
    return traced('update_memory', { [ATTR.operation]: 'update_memory', 'medallion.batch.size': inputs.length }, () => this.ingestUntraced(auth, inputs));
  }

  private async ingestUntraced(auth: AuthContext, inputs: readonly EventSubmission[]): Promise<IngestOutcome[]> {
    auth.requirePrincipal();
    if (inputs.length === 0) throw new BronzeException(BronzeExceptionCode.EMPTY_BATCH, 'the batch is empty: send at least one event');
    if (inputs.length > this.options.maxBatchSize) {
      throw new BronzeException(
        BronzeExceptionCode.BATCH_TOO_LARGE,
        `the batch has ${inputs.length} events; the limit is ${this.options.maxBatchSize} (MAX_BATCH_SIZE): split it`,
      );
    }
    const now = this.clock.now();
    const outcomes: Array<IngestOutcome | undefined> = new Array(inputs.length);
    const firstIndexOfKey = new Map<string, number>();
    const accepted: Array<{ index: number; key: string; event: NormalizedEvent }> = [];
    const repeats: Array<{ index: number; key: string; event: NormalizedEvent }> = [];

    inputs.forEach((input, index) => {
      const v = validateSubmission(input, this.options, now);
      if (!v.ok) {
        outcomes[index] = { index, status: IngestStatus.REJECTED, code: v.code, reason: v.reason };
        return;
      }
      if (!auth.can(Capability.INGEST, v.event.namespace)) {
        outcomes[index] = {
          index,
          status: IngestStatus.REJECTED,
          code: RejectCode.FORBIDDEN,
          reason: `this token lacks the "ingest" capability on namespace "${v.event.namespace}"`,
        };
        return;
      }
      const key = keyString(v.event);
      if (firstIndexOfKey.has(key)) repeats.push({ index, key, event: v.event });
      else {
        firstIndexOfKey.set(key, index);
        accepted.push({ index, key, event: v.event });
      }
    });

    const { created, refused } = await this.insertIsolatingRefused(accepted.map((a) => a.event));
    const existingKeys = [...accepted, ...repeats].filter((a) => !created.has(a.key) && !refused.has(a.key)).map((a) => a.event);
    const existing = await this.events.findByKeys(existingKeys);

    for (const { index, key, event } of [...accepted, ...repeats]) {
      const reason = refused.get(key);
      const mine = created.get(key);
      if (reason) outcomes[index] = { index, status: IngestStatus.REJECTED, code: RejectCode.INVALID_FIELD, reason };
      else if (mine && firstIndexOfKey.get(key) === index) outcomes[index] = { index, status: IngestStatus.CREATED, event: mine };
      else outcomes[index] = this.againstStored(auth, index, event, mine ?? existing.get(key));
    }
    const results = outcomes as IngestOutcome[];
    const span = activeSpan();
    if (span) {
      const namespaces = new Set(accepted.map((a) => a.event.namespace));
      if (namespaces.size === 1) span.setAttribute(ATTR.store, namespaceHash([...namespaces][0] as string));
      span.setAttribute('medallion.events.created', results.filter((r) => r.status === IngestStatus.CREATED).length);
      span.setAttribute('medallion.events.rejected', results.filter((r) => r.status === IngestStatus.REJECTED).length);
    }
    this.observe(results);
    return results;
  }

  /**
   * Inserts the batch in one statement. Should Postgres refuse a value that validation let
   * through (a data exception, SQLSTATE class 22), the rows are retried one by one so that only
   * the offending ones are rejected: one bad item never loses the batch.
   */
  private async insertIsolatingRefused(events: NormalizedEvent[]): Promise<{ created: Map<string, BronzeEvent>; refused: Map<string, string> }> {
    const refused = new Map<string, string>();
    try {
      return { created: await this.events.insertNew(events), refused };
    } catch (err) {
      if (!isDataException(err)) throw err;
    }
    const created = new Map<string, BronzeEvent>();
    for (const event of events) {
      try {
        for (const [key, stored] of await this.events.insertNew([event])) created.set(key, stored);
      } catch (err) {
        if (!isDataException(err)) throw err;
        refused.set(keyString(event), `Postgres cannot store this event as sent (${(err as Error).message}): remove or encode the offending value`);
      }
    }
    return { created, refused };
  }

  /**
   * A submission whose key is taken: DUPLICATE when identical, CONFLICT otherwise. The stored
   * event is shown only to a caller who may read it ("read" on its namespace): an ingest-only
   * token learns that the key is taken, never what is stored under it. An erased event's key takes
   * every resend as a DUPLICATE of its tombstone whatever its content: comparing would confirm or
   * refute a guess of the erased content (and nothing is stored either way). No answer names the
   * stored checksum (Event.checksum is shown under its own rule).
   */
  private againstStored(auth: AuthContext, index: number, event: NormalizedEvent, stored: BronzeEvent | undefined): IngestOutcome {
    if (!stored) {
      // Only possible if a key row existed without its event, which the single-statement insert rules out.
      throw new Error(`event key ${keyString(event)} exists but its event could not be read`);
    }
    const readable = auth.can(Capability.READ, stored.namespace);
    const shown = readable ? { event: stored } : {};
    if (stored.destroyedAt !== null || stored.checksum === event.checksum) return { index, status: IngestStatus.DUPLICATE, ...shown };
    return {
      index,
      status: IngestStatus.REJECTED,
      code: RejectCode.CONFLICT,
      reason: `an event with namespace "${event.namespace}", source "${event.source}" and sourceEventId "${event.sourceEventId}" already exists with different content; Bronze never overwrites: use a new sourceEventId`,
      ...shown,
    };
  }
}
