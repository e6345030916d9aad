import { Driver } from 'neo4j-driver';
import { DataSource } from 'typeorm';
import { col, Sql, SqlRow } from '../platform/postgres/sql';
import { mergeEntityNodes } from './cypher/entity-nodes';
import { Embedder } from '../silver/model-ports';
import { EventNodeRow, mergeEventNodes } from './cypher/event-nodes';
import { syncFactEdges } from './cypher/fact-edges';
import { mergeFactNodes } from './cypher/fact-nodes';
import { deleteErasedNodes } from './cypher/erased-nodes';
import { mergeRelationshipEdges } from './cypher/relationship-edges';
import { GraphSourceRepository } from './graph-source.repository';
import { retryDelaySql } from '../platform/jobs/backoff';
import { OverlayRepository } from '../gold/overlay/overlay.repository';
import { composeEventRows, composeFactRows } from './overlay-projection';

type AggregateType = 'event' | 'fact' | 'entity' | 'relationship';

interface OutboxRow {
  id: string;
  aggregate_type: AggregateType;
  op: string;
  /** Every row is re-read from Postgres by `payload.id` (event rows carry a few more fields, unused here). */
  payload: { id: string };
  attempts: number;
}

export type ProjectionResult = { kind: 'success'; projected: number } | { kind: 'skipped' } | { kind: 'failed'; error: string; rows: number };

/**
 * Where one batch's time went, in ms since the batch began (it began at `startedAt`, epoch ms):
 * the outbox rows claimed, the rows read and the new events embedded, the Neo4j transaction
 * committed, the Postgres transaction committed. What `LOG_LEVEL=debug` logs per batch, so a slow
 * first answer can be attributed to a stage (bench/start-stop.ts reads it).
 */
export interface ProjectionTrace {
  startedAt: number;
  rows: number;
  events: number;
  facts: number;
  claimedMs: number;
  /** The batch's events read, and those without a stored vector embedded. */
  eventsEmbeddedMs: number;
  composedMs: number;
  graphMs: number;
  committedMs: number;
  outcome: 'success' | 'failed';
}

type BatchMarks = Pick<ProjectionTrace, 'events' | 'facts' | 'claimedMs' | 'eventsEmbeddedMs' | 'composedMs' | 'graphMs'>;

/** Aggregate types this projector writes. */
const PROJECTED_TYPES: readonly AggregateType[] = ['event', 'fact', 'entity', 'relationship'];

/** Retry delay after a failed write: 2 × 2^attempts seconds (jobs/backoff.ts), capped. */
const MAX_BACKOFF_SECONDS = 300;

/** Connection-level failures (server down, restarting, network), as opposed to a bad row. */
export function isNeo4jUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ServiceUnavailable' || code === 'SessionExpired' || (typeof code === 'string' && code.startsWith('Neo.TransientError.'));
}

function toOutboxRow(r: SqlRow): OutboxRow {
  return {
    id: col.string(r, 'id'),
    aggregate_type: col.string(r, 'aggregate_type') as AggregateType,
    op: col.string(r, 'op'),
    payload: r.payload as OutboxRow['payload'],
    attempts: col.number(r, 'attempts'),
  };
}

function idsOf(rows: readonly OutboxRow[], type: AggregateType): string[] {
  return [...new Set(rows.filter((r) => r.aggregate_type === type && r.op === 'upsert').map((r) => r.payload.id))];
}

/** The ids of `wanted` that `found` has no row for. */
function absent(wanted: readonly string[], found: ReadonlyArray<{ id: string }>): string[] {
  const have = new Set(found.map((r) => r.id));
  return wanted.filter((id) => !have.has(id));
}

/** Embeds event contents for the event channel of searchMemory (the process's shared embedder). */
export interface EventEmbedding {
  embedder: () => Promise<Embedder>;
  warn: (msg: string) => void;
}

/**
 * Drains `ops.outbox` into Neo4j: claims a batch (`FOR UPDATE SKIP LOCKED`, oldest first), MERGEs
 * it in one Neo4j transaction and marks it processed in the same Postgres transaction. When Neo4j
 * fails the rows stay pending with exponential backoff, so nothing is lost while it is down.
 * Silver rows carry ids only: the batch re-reads the current facts, entities and relationships
 * (one query per type), so a replayed or out-of-order row writes the current state, idempotently.
 * Events are embedded here, on their way into the graph, so a raw turn is findable by meaning as
 * soon as it is projected, ahead of its derivation; the vectors are kept in
 * `silver.event_embeddings` so a rebuild or a replay does not embed again.
 */
export class ProjectionJob {
  constructor(
    private readonly ds: DataSource,
    private readonly neo4j: Driver,
    private readonly batchSize: number,
    private readonly embedding?: EventEmbedding,
    private readonly trace?: (t: ProjectionTrace) => void,
  ) {}

  async runOnce(): Promise<ProjectionResult> {
    const startedAt = Date.now();
    const marks: BatchMarks = { events: 0, facts: 0, claimedMs: 0, eventsEmbeddedMs: 0, composedMs: 0, graphMs: 0 };
    const result = await this.batch(startedAt, marks);
    if (result.kind !== 'skipped')
      this.trace?.({
        startedAt,
        rows: result.kind === 'success' ? result.projected : result.rows,
        ...marks,
        committedMs: Date.now() - startedAt,
        outcome: result.kind,
      });
    return result;
  }

  private async batch(startedAt: number, marks: BatchMarks): Promise<ProjectionResult> {
    return this.ds.transaction(async (em) => {
      const tx = Sql.within(em);
      const rows = await tx.rows(
        `SELECT id, aggregate_type, op, payload, attempts FROM ops.outbox
          WHERE processed_at IS NULL AND available_at <= now() AND aggregate_type = ANY($2::text[])
          ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [this.batchSize, PROJECTED_TYPES],
        toOutboxRow,
      );
      if (rows.length === 0) return { kind: 'skipped' } as const;
      marks.claimedMs = Date.now() - startedAt;
      const ids = rows.map((r) => r.id);
      // Postgres reads stay outside the try: an SQL error aborts this transaction, so it cannot record a retry.
      const source = new GraphSourceRepository(em);
      const eventIds = idsOf(rows, 'event');
      const factIds = idsOf(rows, 'fact');
      // Neo4j gets what readers see: overlaid facts and redacted events with their composed text and its embedding.
      const overlays = new OverlayRepository(tx);
      const warn = this.embedding?.warn ?? (() => undefined);
      const embedded = await this.eventsWithEmbeddings(source, eventIds);
      marks.eventsEmbeddedMs = Date.now() - startedAt;
      const events = await composeEventRows(embedded, overlays, this.embedding?.embedder, warn);
      const entities = await source.entitiesByIds(idsOf(rows, 'entity'));
      const facts = await composeFactRows(await source.factsByIds(factIds), overlays, this.embedding?.embedder, warn);
      // An id Postgres no longer projects was erased (destroyEvent): its node leaves the graph.
      const erasedEvents = absent(eventIds, events);
      const erasedFacts = absent(factIds, facts);
      const relationships = await source.relationshipsByIds(idsOf(rows, 'relationship'));
      Object.assign(marks, { composedMs: Date.now() - startedAt, events: events.length, facts: facts.length });
      try {
        await this.neo4j.executeQuery('RETURN 1'); // fail fast before opening a write transaction
        const session = this.neo4j.session();
        try {
          await session.executeWrite(async (tx) => {
            await mergeEventNodes(tx, events);
            await mergeEntityNodes(tx, entities);
            await mergeFactNodes(tx, facts);
            await syncFactEdges(tx, facts);
            await mergeRelationshipEdges(tx, relationships);
            await deleteErasedNodes(tx, 'Fact', erasedFacts);
            await deleteErasedNodes(tx, 'Event', erasedEvents);
          });
        } finally {
          await session.close();
        }
        marks.graphMs = Date.now() - startedAt;
        await tx.execute(`UPDATE ops.outbox SET processed_at = now(), last_error = NULL WHERE id = ANY($1::bigint[])`, [ids]);
        return { kind: 'success', projected: rows.length } as const;
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        // Neo4j unreachable: the rows did nothing wrong. Leave them as they are (the loop polls
        // again), so the backlog drains the moment Neo4j is back instead of after a long backoff.
        if (isNeo4jUnavailable(err)) return { kind: 'failed', error, rows: rows.length } as const;
        await tx.execute(
          `UPDATE ops.outbox SET attempts = attempts + 1, last_error = $2,
                  available_at = now() + ${retryDelaySql('attempts', '2', '$3')}
            WHERE id = ANY($1::bigint[])`,
          [ids, error.slice(0, 2000), MAX_BACKOFF_SECONDS],
        );
        return { kind: 'failed', error, rows: rows.length } as const;
      }
    });
  }

  private async eventsWithEmbeddings(source: GraphSourceRepository, ids: string[]): Promise<EventNodeRow[]> {
    if (ids.length === 0) return [];
    const model = this.embedding ? await this.currentModel() : null;
    const events = await source.eventsByIds(ids, model);
    return this.embedding ? embedMissing(source, events, this.embedding) : events;
  }

  /** The embedder's model name, or null when it cannot be loaded (then no stored vector is read). */
  private async currentModel(): Promise<string | null> {
    try {
      return (await (this.embedding as EventEmbedding).embedder()).model;
    } catch {
      return null;
    }
  }
}

/**
 * The batch's events with an embedding of the current model: stored ones are reused, the rest are
 * embedded in one call and stored. When the embedder fails, events are projected without a
 * vector (the keyword channel still finds them) and a later projection or re-embedding fills it.
 */
export async function embedMissing(source: GraphSourceRepository, events: EventNodeRow[], embedding: EventEmbedding): Promise<EventNodeRow[]> {
  let embedder: Embedder;
  try {
    embedder = await embedding.embedder();
  } catch (err) {
    embedding.warn(`projector: embedder unavailable, events projected without vectors: ${err instanceof Error ? err.message : String(err)}`);
    return events;
  }
  const missing = events.filter((e) => e.embedding === null || e.embeddingModel !== embedder.model);
  if (missing.length === 0) return events;
  let vectors: number[][];
  try {
    vectors = await embedder.embed(missing.map((e) => e.content));
  } catch (err) {
    embedding.warn(`projector: embedding ${missing.length} events failed, projected without vectors: ${err instanceof Error ? err.message : String(err)}`);
    return events;
  }
  // Stored as real[]: project the same float32 values a rebuild will read back.
  const fresh = new Map(missing.map((e, i) => [e.id, vectors[i]?.map(Math.fround) ?? null]));
  await source.saveEventEmbeddings(
    missing.flatMap((e) => {
      const v = fresh.get(e.id);
      return v ? [{ eventId: e.id, namespace: e.namespace, model: embedder.model, embedding: v }] : [];
    }),
  );
  return events.map((e) => (fresh.has(e.id) ? { ...e, embedding: fresh.get(e.id) ?? null, embeddingModel: embedder.model } : e));
}

/** One projector step for a PollingLoop: true when it projected something. */
export function projectorStep(job: Pick<ProjectionJob, 'runOnce'>, log: (msg: string) => void): () => Promise<boolean> {
  let failures = 0;
  return async () => {
    const result = await job.runOnce();
    if (result.kind === 'failed') {
      failures += 1;
      if (failures === 1 || failures % 20 === 0) log(`projector: Neo4j write failed (${result.error}); will retry`);
      return false;
    }
    failures = 0;
    return result.kind === 'success';
  };
}
