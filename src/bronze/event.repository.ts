import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { UUID } from '../common/ids';
import { outboxFrom } from '../platform/outbox';
import { currentTraceparent } from '../platform/telemetry/tracing';
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
 * SQL for Bronze events. Inserting a batch is one statement: key claims, events, derivation queue,
 * outbox, watermarks and the NOTIFY for subscribers all commit together or not at all.
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
          creation = this.sql.execute(`SELECT bronze.ensure_event_partition($1::date)`, [m]).then(() => undefined);
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
    const ids = rows.map(() => randomUUID());
    const column = <T>(f: (e: NormalizedEvent) => T): T[] => rows.map(f);
    const result = await this.sql.rows(
      `WITH input AS (
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                              $9::int[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::timestamptz[], $16::text[])
                  WITH ORDINALITY AS t(id, namespace, source, source_event_id, provenance_root, kind, conversation_id, session_id,
                                       sequence_num, role, actor, content, raw_payload, checksum, occurred_at, tool_call_id, ord)
       ), new_keys AS (
         INSERT INTO bronze.event_keys (namespace, source, source_event_id, event_id, occurred_at, checksum)
         SELECT namespace, source, source_event_id, id, occurred_at, checksum FROM input ORDER BY ord
         ON CONFLICT DO NOTHING
         RETURNING event_id
       ), ins AS (
         INSERT INTO bronze.events (id, namespace, source, source_event_id, provenance_root, kind, conversation_id, session_id,
                                    sequence_num, role, actor, content, raw_payload, tool_call_id, checksum, occurred_at)
         SELECT i.id, i.namespace, i.source, i.source_event_id, i.provenance_root, i.kind, i.conversation_id, i.session_id,
                i.sequence_num, i.role, i.actor, i.content, i.raw_payload::json, i.tool_call_id, i.checksum, i.occurred_at
           FROM input i JOIN new_keys k ON k.event_id = i.id
         RETURNING id, namespace, source, source_event_id, kind, conversation_id, sequence_num, occurred_at, ingested_at
       ), queued AS (
         INSERT INTO ops.derivation_queue (event_id, namespace, occurred_at, conversation_id, sequence_num, traceparent)
         SELECT id, namespace, occurred_at, conversation_id, sequence_num, $17::text FROM ins
       ), outboxed AS (
         ${outboxFrom(`SELECT namespace, 'event' AS type, id::text AS id,
                jsonb_build_object('id', id, 'namespace', namespace, 'source', source, 'kind', kind,
                                   'conversationId', conversation_id, 'occurredAt', occurred_at, 'ingestedAt', ingested_at)
                || CASE WHEN $17::text IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('traceparent', $17::text) END AS payload,
                row_number() OVER (ORDER BY occurred_at, id) AS ord
           FROM ins`)}
       ), marks AS (
         INSERT INTO ops.watermarks AS w (namespace, source, last_source_event_id, last_occurred_at, last_ingested_at, event_count)
         SELECT DISTINCT ON (namespace, source) namespace, source, source_event_id, occurred_at, ingested_at,
                count(*) OVER (PARTITION BY namespace, source)
           FROM ins ORDER BY namespace, source, occurred_at DESC, source_event_id DESC
         ON CONFLICT (namespace, source) DO UPDATE SET
           last_source_event_id = CASE WHEN (EXCLUDED.last_occurred_at, EXCLUDED.last_source_event_id) >= (w.last_occurred_at, w.last_source_event_id)
                                       THEN EXCLUDED.last_source_event_id ELSE w.last_source_event_id END,
           last_occurred_at = GREATEST(w.last_occurred_at, EXCLUDED.last_occurred_at),
           last_ingested_at = GREATEST(w.last_ingested_at, EXCLUDED.last_ingested_at),
           event_count = w.event_count + EXCLUDED.event_count
       ), notified AS (
         -- One notification per namespace and 150 ids (a payload must stay under 8000 bytes).
         SELECT pg_notify('medallion_events', json_build_object('namespace', namespace, 'ids', json_agg(id ORDER BY occurred_at, id))::text)
           FROM (SELECT namespace, id, occurred_at, (row_number() OVER (PARTITION BY namespace ORDER BY occurred_at, id) - 1) / 150 AS chunk FROM ins) c
          GROUP BY namespace, chunk
       )
       SELECT id, ingested_at, (SELECT count(*) FROM notified) AS notified, (SELECT queued FROM outboxed) AS queued FROM ins`,
      [
        ids,
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
      (r) => ({ id: col.string(r, 'id'), ingestedAt: col.date(r, 'ingested_at') }),
    );
    const ingestedAt = new Map(result.map((r) => [r.id, r.ingestedAt]));
    const created = new Map<string, BronzeEvent>();
    keyed.forEach(({ key, e }, i) => {
      const id = ids[i] as string;
      const at = ingestedAt.get(id);
      if (at) {
        const { occurredAtGiven: _given, ...stored } = e;
        created.set(key, { ...stored, id, ingestedAt: at, derivationStatus: DerivationStatus.PENDING, destroyedAt: null });
      }
    });
    return created;
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
