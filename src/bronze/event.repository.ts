import { DataSource } from 'typeorm';
import { UUID } from '../common/ids';
import { currentTraceparent } from '../platform/telemetry/tracing';
import { ensureEventPartition } from '../platform/postgres/partitions';
import { col, Sql, SqlRow } from '../platform/postgres/sql';
import { BronzeEvent, DerivationStatus, EventKind, NormalizedEvent, Role } from './event.types';

export const EVENT_COLUMNS = `e.id, e.namespace, e.source, e.source_event_id, e.provenance_root, e.kind, e.conversation_id,
  e.session_id, e.sequence_num, e.role, e.actor, e.content, e.raw_payload::text AS raw_payload_text, e.tool_call_id, e.checksum,
  e.occurred_at, e.ingested_at,
  (SELECT upper(q.status) FROM ops.derivation_queue q WHERE q.event_id = e.id) AS derivation_status,
  (SELECT t.destroyed_at FROM bronze.event_tombstones t WHERE t.event_id = e.id) AS destroyed_at`;

export function toBronzeEvent(r: SqlRow): BronzeEvent {
  return {
    id: col.string(r, 'id'),
    namespace: col.string(r, 'namespace'),
    source: col.string(r, 'source'),
    sourceEventId: col.string(r, 'source_event_id'),
    provenanceRoot: col.stringOrNull(r, 'provenance_root'),
    kind: col.string(r, 'kind') as EventKind,
    conversationId: col.stringOrNull(r, 'conversation_id'),
    sessionId: col.stringOrNull(r, 'session_id'),
    sequenceNum: col.numberOrNull(r, 'sequence_num'),
    role: col.stringOrNull(r, 'role') as Role | null,
    actor: col.stringOrNull(r, 'actor'),
    content: col.string(r, 'content'),
    rawPayloadText: col.stringOrNull(r, 'raw_payload_text'),
    toolCallId: col.stringOrNull(r, 'tool_call_id'),
    checksum: col.string(r, 'checksum'),
    occurredAt: col.date(r, 'occurred_at'),
    ingestedAt: col.date(r, 'ingested_at'),
    derivationStatus: (col.stringOrNull(r, 'derivation_status') as DerivationStatus | null) ?? DerivationStatus.PENDING,
    destroyedAt: col.dateOrNull(r, 'destroyed_at'),
  };
}

export interface EventKey {
  namespace: string;
  source: string;
  sourceEventId: string;
}

export const keyString = (k: EventKey): string => JSON.stringify([k.namespace, k.source, k.sourceEventId]);

const monthOf = (d: Date): string => `${d.getUTCFullYear().toString().padStart(4, '0')}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-01`;

/**
 * SQL for Bronze events. Inserting a batch is one call of `bronze.ingest_events`: key claims,
 * events, derivation queue, outbox, watermarks and the NOTIFY for subscribers all commit together
 * or not at all.
 */
export class EventRepository {
  /** Months whose partition exists or is being created by this process. */
  private readonly partitions = new Map<string, Promise<void>>();

  private readonly sql: Sql;

  constructor(ds: DataSource) {
    this.sql = Sql.of(ds);
  }

  /** Creates the monthly partitions these events need; concurrent callers share one creation per month. */
  async ensurePartitions(events: readonly NormalizedEvent[]): Promise<void> {
    const months = [...new Set(events.map((e) => monthOf(e.occurredAt)))];
    await Promise.all(
      months.map((m) => {
        let creation = this.partitions.get(m);
        if (!creation) {
          // Without queueing the readers of bronze.events behind the new partition's lock (see there).
          creation = ensureEventPartition(this.sql, m);
          creation.catch(() => this.partitions.delete(m)); // a failure is retried by the next batch
          this.partitions.set(m, creation);
        }
        return creation;
      }),
    );
  }

  /**
   * Inserts the events whose keys are not taken yet (keys must be unique within the batch).
   * Returns the new events by key; keys missing from the result already existed.
   */
  async insertNew(events: readonly NormalizedEvent[]): Promise<Map<string, BronzeEvent>> {
    if (events.length === 0) return new Map();
    await this.ensurePartitions(events);
    // Sorted by key so concurrent batches take row locks in the same order (no deadlocks).
    const keyed = events.map((e) => ({ key: keyString(e), e })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const rows = keyed.map((k) => k.e);
    const column = <T>(f: (e: NormalizedEvent) => T): T[] => rows.map(f);
    // bronze.ingest_events (migration 1764400001400): the owner's function, the runtime role's only
    // way to write Bronze. It draws each event's id and ingest time itself.
    const result = await this.sql.rows(
      `SELECT ord::int AS ord, id::text AS id, ingested_at
         FROM bronze.ingest_events($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[],
                                   $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::timestamptz[], $15::text[], $16::text)`,
      [
        column((e) => e.namespace),
        column((e) => e.source),
        column((e) => e.sourceEventId),
        column((e) => e.provenanceRoot),
        column((e) => e.kind),
        column((e) => e.conversationId),
        column((e) => e.sessionId),
        column((e) => e.sequenceNum),
        column((e) => e.role),
        column((e) => e.actor),
        column((e) => e.content),
        column((e) => e.rawPayloadText),
        column((e) => e.checksum),
        column((e) => e.occurredAt),
        column((e) => e.toolCallId),
        // The ingest span's context (tracing on; null otherwise): derivation and projection continue its trace.
        currentTraceparent(),
      ],
      (r) => ({ ord: col.number(r, 'ord'), id: col.string(r, 'id'), ingestedAt: col.date(r, 'ingested_at') }),
    );
    const created = new Map<string, BronzeEvent>();
    for (const r of result) {
      const k = keyed[r.ord - 1];
      if (!k) throw new Error(`bronze.ingest_events returned position ${r.ord} of a batch of ${keyed.length}`);
      const { occurredAtGiven: _given, ...stored } = k.e;
      created.set(k.key, { ...stored, id: r.id, ingestedAt: r.ingestedAt, derivationStatus: DerivationStatus.PENDING, destroyedAt: null });
    }
    return created;
  }

  /** Of these events, those an import created from a file whose hash chain did not verify (ops.imported_events). */
  async unverifiedImports(ids: readonly string[]): Promise<Set<string>> {
    const valid = ids.filter((id) => UUID.test(id));
    if (valid.length === 0) return new Set();
    const rows = await this.sql.rows(`SELECT event_id::text AS id FROM ops.imported_events WHERE event_id = ANY($1::uuid[]) AND NOT verified`, [valid], (r) =>
      col.string(r, 'id'),
    );
    return new Set(rows);
  }

  /** The stored events for these idempotency keys (one round trip). */
  async findByKeys(keys: readonly EventKey[]): Promise<Map<string, BronzeEvent>> {
    if (keys.length === 0) return new Map();
    const rows = await this.sql.rows(
      `SELECT ${EVENT_COLUMNS}
         FROM unnest($1::text[], $2::text[], $3::text[]) AS k(namespace, source, source_event_id)
         JOIN bronze.event_keys ek USING (namespace, source, source_event_id)
         JOIN bronze.events e ON e.id = ek.event_id AND e.occurred_at = ek.occurred_at`,
      [keys.map((k) => k.namespace), keys.map((k) => k.source), keys.map((k) => k.sourceEventId)],
      toBronzeEvent,
    );
    return new Map(rows.map((e) => [keyString(e), e]));
  }

  /** Events by id, in any namespace: callers filter by grants. One round trip. */
  async findByIds(ids: readonly string[]): Promise<BronzeEvent[]> {
    const valid = ids.filter((id) => UUID.test(id));
    if (valid.length === 0) return [];
    return this.sql.rows(
      `SELECT ${EVENT_COLUMNS}
         FROM bronze.event_keys ek
         JOIN bronze.events e ON e.id = ek.event_id AND e.occurred_at = ek.occurred_at
        WHERE ek.event_id = ANY($1::uuid[])`,
      [valid],
      toBronzeEvent,
    );
  }

  /**
   * The turns just before `batch` in each of its conversations (events without a conversation are
   * one stream): at most `limit` per conversation, none more than `withinMs` before the
   * conversation's first turn in the batch, not erased, oldest first. Derivation reads them as
   * context (ExtractionContext.earlier). One round trip.
   */
  async earlierTurns(namespace: string, batch: readonly BronzeEvent[], opts: { limit: number; withinMs: number }): Promise<BronzeEvent[]> {
    const firsts = new Map<string | null, BronzeEvent>();
    for (const e of batch) {
      const seen = firsts.get(e.conversationId);
      if (!seen || e.occurredAt < seen.occurredAt || (+e.occurredAt === +seen.occurredAt && (e.sequenceNum ?? -1) < (seen.sequenceNum ?? -1))) {
        firsts.set(e.conversationId, e);
      }
    }
    if (firsts.size === 0 || opts.limit <= 0) return [];
    const heads = [...firsts.values()];
    const rows = await this.sql.rows(
      `SELECT ${EVENT_COLUMNS}
         FROM unnest($2::text[], $3::timestamptz[], $4::int[]) AS f(conversation_id, first_at, first_seq)
         CROSS JOIN LATERAL (
           SELECT x.* FROM bronze.events x
            WHERE x.namespace = $1 AND x.conversation_id IS NOT DISTINCT FROM f.conversation_id
              AND x.occurred_at >= f.first_at - make_interval(secs => $5::float / 1000)
              AND (x.occurred_at, coalesce(x.sequence_num, -1)) < (f.first_at, coalesce(f.first_seq, -1))
              AND x.id <> ALL($6::uuid[])
              AND NOT EXISTS (SELECT 1 FROM bronze.event_tombstones t WHERE t.event_id = x.id)
            ORDER BY x.occurred_at DESC, x.sequence_num DESC NULLS LAST, x.id DESC
            LIMIT $7) e
        ORDER BY e.occurred_at, e.sequence_num NULLS FIRST, e.id`,
      [
        namespace,
        heads.map((e) => e.conversationId),
        heads.map((e) => e.occurredAt),
        heads.map((e) => e.sequenceNum),
        opts.withinMs,
        batch.map((e) => e.id),
        opts.limit,
      ],
      toBronzeEvent,
    );
    return rows;
  }
}
