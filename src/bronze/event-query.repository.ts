import { DataSource } from 'typeorm';
import { Position } from '../common/cursor';
import { col, Sql, SqlRow } from '../platform/postgres/sql';
import { EVENT_COLUMNS, toBronzeEvent } from './event.repository';
import { BronzeEvent, EventKind } from './event.types';

export interface EventListFilter {
  sources?: readonly string[] | null;
  kinds?: readonly EventKind[] | null;
  conversationId?: string | null;
  sessionId?: string | null;
  /** occurredAt >= from */
  from?: Date | null;
  /** occurredAt < to */
  to?: Date | null;
  /** case-insensitive substring of content */
  contains?: string | null;
}

export interface Watermark {
  namespace: string;
  source: string;
  lastSourceEventId: string;
  lastOccurredAt: Date;
  lastIngestedAt: Date;
  eventCount: number;
}

const escapeLike = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

const toWatermark = (r: SqlRow): Watermark => ({
  namespace: col.string(r, 'namespace'),
  source: col.string(r, 'source'),
  lastSourceEventId: col.string(r, 'last_source_event_id'),
  lastOccurredAt: col.date(r, 'last_occurred_at'),
  lastIngestedAt: col.date(r, 'last_ingested_at'),
  eventCount: col.number(r, 'event_count'),
});

/** Read-side SQL for Bronze: filtered pages, conversations, tool-call links, watermarks. */
export class EventQueryRepository {
  private readonly sql: Sql;

  constructor(ds: DataSource) {
    this.sql = Sql.of(ds);
  }

  /** One page in (occurred_at, id) order, `limit` rows after `after`; each with its position. */
  async list(namespace: string, filter: EventListFilter, limit: number, after?: Position): Promise<Array<{ event: BronzeEvent; position: Position }>> {
    const where = ['e.namespace = $1'];
    const params: unknown[] = [namespace];
    const add = (sql: (p: string) => string, value: unknown) => {
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    if (filter.sources?.length) add((p) => `e.source = ANY(${p}::text[])`, filter.sources);
    if (filter.kinds?.length) add((p) => `e.kind = ANY(${p}::text[])`, filter.kinds);
    if (filter.conversationId) add((p) => `e.conversation_id = ${p}`, filter.conversationId);
    if (filter.sessionId) add((p) => `e.session_id = ${p}`, filter.sessionId);
    if (filter.from) add((p) => `e.occurred_at >= ${p}`, filter.from);
    if (filter.to) add((p) => `e.occurred_at < ${p}`, filter.to);
    // Candidates only: EventService.list keeps those whose content as the caller sees it matches (an event with a redaction is one).
    if (filter.contains)
      add((p) => `(e.content ILIKE '%' || ${p} || '%' OR EXISTS (SELECT 1 FROM gold.overlays o WHERE o.event_id = e.id))`, escapeLike(filter.contains));
    if (after) {
      params.push(after.micros, after.id);
      where.push(`(e.occurred_at, e.id) > (timestamptz 'epoch' + $${params.length - 1}::bigint * interval '1 microsecond', $${params.length}::uuid)`);
    }
    params.push(limit);
    return this.sql.rows(
      `SELECT ${EVENT_COLUMNS}, ((extract(epoch FROM e.occurred_at) * 1000000)::bigint)::text AS pos_us
         FROM bronze.events e
        WHERE ${where.join(' AND ')}
        ORDER BY e.occurred_at, e.id
        LIMIT $${params.length}`,
      params,
      (r) => ({ event: toBronzeEvent(r), position: { micros: col.string(r, 'pos_us'), id: col.string(r, 'id') } }),
    );
  }

  /** A conversation in order: sequenceNum (unnumbered last), then occurredAt, then id. */
  async conversation(namespace: string, conversationId: string, limit: number): Promise<BronzeEvent[]> {
    return this.sql.rows(
      `SELECT ${EVENT_COLUMNS} FROM bronze.events e
        WHERE e.namespace = $1 AND e.conversation_id = $2
        ORDER BY e.sequence_num NULLS LAST, e.occurred_at, e.id
        LIMIT $3`,
      [namespace, conversationId, limit],
      toBronzeEvent,
    );
  }

  /** Tool calls and results sharing these (namespace, toolCallId) pairs, in one round trip. */
  async byToolCallIds(keys: ReadonlyArray<{ namespace: string; toolCallId: string }>): Promise<BronzeEvent[]> {
    if (keys.length === 0) return [];
    return this.sql.rows(
      `SELECT ${EVENT_COLUMNS} FROM bronze.events e
         JOIN unnest($1::text[], $2::text[]) AS k(namespace, tool_call_id)
           ON e.namespace = k.namespace AND e.tool_call_id = k.tool_call_id
        ORDER BY e.occurred_at, e.id`,
      [keys.map((k) => k.namespace), keys.map((k) => k.toolCallId)],
      toBronzeEvent,
    );
  }

  async watermark(namespace: string, source: string): Promise<Watermark | undefined> {
    return (await this.sql.maybeOne(`SELECT * FROM ops.watermarks WHERE namespace = $1 AND source = $2`, [namespace, source], toWatermark)) ?? undefined;
  }

  /** Every namespace that holds an event (each has a watermark row), sorted. */
  async namespaces(): Promise<string[]> {
    return this.sql.rows(`SELECT DISTINCT namespace FROM ops.watermarks ORDER BY namespace`, [], (r) => col.string(r, 'namespace'));
  }
}
