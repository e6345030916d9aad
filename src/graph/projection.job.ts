import { Driver } from 'neo4j-driver';
import { DataSource } from 'typeorm';
import { col, Sql, SqlRow } from '../platform/postgres/sql';
import { DrainResult, drainOutbox, drainStep, OUTBOX_DRAINS, OutboxConsumer } from '../platform/outbox-drain';
import { Stage } from '../platform/stages';
import { CHANNELS } from '../platform/pubsub/topics';
import { EntityNodeRow, mergeEntityNodes } from './cypher/entity-nodes';
import { EventNodeRow, mergeEventNodes } from './cypher/event-nodes';
import { syncFactEdges } from './cypher/fact-edges';
import { FactNodeRow, mergeFactNodes } from './cypher/fact-nodes';
import { deleteErasedNodes } from './cypher/erased-nodes';
import { mergeRelationshipEdges, RelationshipEdgeRow } from './cypher/relationship-edges';
import { GraphSourceRepository } from './graph-source.repository';
import { EventEmbeddingRepository } from '../silver/event-embedding.repository';
import { currentEventModel, embedMissing, EventEmbedding } from '../silver/event-embedding.service';
import { composeEntityRows, composeEventRows, composeFactRows, ProjectionOverlays } from './overlay-projection';
import { pipelineMetrics } from '../platform/telemetry/metrics';
import { ATTR, SpanStatusCode, startSpan } from '../platform/telemetry/tracing';

type AggregateType = 'event' | 'fact' | 'entity' | 'relationship';

interface OutboxRow {
  id: string;
  aggregate_type: AggregateType;
  op: string;
  /** Every row is re-read from Postgres by `payload.id` (event rows carry a few more fields, unused here). */
  payload: { id: string; traceparent?: string };
  attempts: number;
  /** When the row was written (epoch ms): the projection lag is measured from it. */
  createdAt: number;
}

/** What one batch did (the outbox drain's result). */
export type ProjectionResult = DrainResult;

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

type BatchMarks = Pick<ProjectionTrace, 'events' | 'facts' | 'claimedMs' | 'eventsEmbeddedMs' | 'composedMs' | 'graphMs'> & {
  /** The claimed rows' write times (the lag metric) and the batch's span (tracing on). */
  created?: number[];
  span?: ReturnType<typeof startSpan>;
};

/** Aggregate types this projector writes. */
const PROJECTED_TYPES: readonly AggregateType[] = ['event', 'fact', 'entity', 'relationship'];

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
    createdAt: col.date(r, 'created_at').getTime(),
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

/** What the projector is handed by the composition root (src/app/app.ts). */
export interface ProjectionPorts {
  /**
   * The overlay spans of a batch's facts and events, read in the batch's transaction (Gold
   * implements it: gold/overlay/overlay.repository.ts). Neo4j holds what readers see.
   */
  overlays: (tx: Sql) => ProjectionOverlays;
  /** Embeds new events on their way into the graph (Silver's event embeddings); unset: events go without vectors. */
  embedding?: EventEmbedding;
  /** Each batch's timings (`LOG_LEVEL=debug`). */
  trace?: (t: ProjectionTrace) => void;
}

/** A claimed batch, re-read from Postgres and composed as readers see it. */
interface ProjectionBatch {
  events: EventNodeRow[];
  entities: EntityNodeRow[];
  facts: FactNodeRow[];
  relationships: RelationshipEdgeRow[];
  erasedEvents: string[];
  erasedFacts: string[];
}

/**
 * Drains `ops.outbox` into Neo4j through the one outbox drain (platform/outbox-drain.ts): claims a
 * batch (`FOR UPDATE SKIP LOCKED`, oldest first), MERGEs it in one Neo4j transaction and marks it
 * processed in the same Postgres transaction. When Neo4j fails the rows stay pending with
 * exponential backoff, so nothing is lost while it is down.
 * Silver rows carry ids only: the batch re-reads the current facts, entities and relationships
 * (one query per type), so a replayed or out-of-order row writes the current state, idempotently.
 * Events are embedded here (Silver's `embedMissing`), on their way into the graph, so a raw turn
 * is findable by meaning as soon as it is projected, ahead of its derivation; the vectors are kept
 * in `silver.event_embeddings` so a rebuild or a replay does not embed again.
 */
export class ProjectionJob {
  private readonly sql: Sql;

  constructor(
    ds: DataSource,
    private readonly neo4j: Driver,
    private readonly batchSize: number,
    private readonly ports: ProjectionPorts,
  ) {
    this.sql = Sql.of(ds);
  }

  async runOnce(): Promise<ProjectionResult> {
    const startedAt = Date.now();
    const marks: BatchMarks = { events: 0, facts: 0, claimedMs: 0, eventsEmbeddedMs: 0, composedMs: 0, graphMs: 0 };
    const result = await drainOutbox(this.sql, this.consumer(startedAt, marks)).catch((err: unknown) => {
      marks.span?.end();
      throw err;
    });
    if (result.kind === 'success') {
      const now = Date.now();
      for (const at of marks.created ?? []) pipelineMetrics.projectionLagSeconds.observe(Math.max(0, now - at) / 1000);
      pipelineMetrics.projectionRows.inc({ outcome: 'projected' }, result.projected);
    } else if (result.kind === 'failed') pipelineMetrics.projectionRows.inc({ outcome: 'failed' }, result.rows);
    if (marks.span) {
      marks.span.setAttributes({ [ATTR.events]: marks.events, [ATTR.facts]: marks.facts, 'medallion.outcome': result.kind });
      if (result.kind === 'failed') marks.span.setStatus({ code: SpanStatusCode.ERROR, message: 'projection failed' });
      marks.span.end();
    }
    if (result.kind !== 'skipped')
      this.ports.trace?.({
        startedAt,
        rows: result.kind === 'success' ? result.projected : result.rows,
        ...marks,
        committedMs: Date.now() - startedAt,
        outcome: result.kind,
      });
    return result;
  }

  private consumer(startedAt: number, marks: BatchMarks): OutboxConsumer<OutboxRow, ProjectionBatch> {
    return {
      name: OUTBOX_DRAINS.silverProjector,
      claim: async (tx) => {
        const rows = await tx.rows(
          `SELECT id, aggregate_type, op, payload, attempts, created_at FROM ops.outbox
            WHERE processed_at IS NULL AND available_at <= now() AND aggregate_type = ANY($2::text[])
            ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
          [this.batchSize, PROJECTED_TYPES],
          toOutboxRow,
        );
        marks.claimedMs = Date.now() - startedAt;
        marks.created = rows.map((r) => r.createdAt);
        if (rows.length > 0) {
          // Tracing on: the batch continues the trace of the first ingest among its rows (the
          // API's request, through the outbox payload) and links the others.
          const traceparents = rows.map((r) => r.payload.traceparent ?? null);
          marks.span = startSpan(
            'medallion.projection.batch',
            { [ATTR.rows]: rows.length },
            { parent: traceparents.find((t) => t !== null) ?? null, links: traceparents },
          );
        }
        return rows;
      },
      read: (tx, rows) => this.read(tx, rows, startedAt, marks),
      write: async (batch) => {
        await this.neo4j.executeQuery('RETURN 1'); // fail fast before opening a write transaction
        const session = this.neo4j.session();
        try {
          await session.executeWrite(async (tx) => {
            await mergeEventNodes(tx, batch.events);
            await mergeEntityNodes(tx, batch.entities);
            await mergeFactNodes(tx, batch.facts);
            await syncFactEdges(tx, batch.facts);
            await mergeRelationshipEdges(tx, batch.relationships);
            await deleteErasedNodes(tx, 'Fact', batch.erasedFacts);
            await deleteErasedNodes(tx, 'Event', batch.erasedEvents);
          });
        } finally {
          await session.close();
        }
        marks.graphMs = Date.now() - startedAt;
      },
      unavailable: isNeo4jUnavailable,
    };
  }

  private async read(tx: Sql, rows: readonly OutboxRow[], startedAt: number, marks: BatchMarks): Promise<ProjectionBatch> {
    const source = new GraphSourceRepository(tx);
    const eventIds = idsOf(rows, 'event');
    const factIds = idsOf(rows, 'fact');
    // Neo4j gets what readers see: overlaid facts and redacted events with their composed text and its embedding.
    const overlays = this.ports.overlays(tx);
    const embedding = this.ports.embedding;
    const warn = embedding?.warn ?? (() => undefined);
    const embedded = await this.eventsWithEmbeddings(tx, source, eventIds);
    marks.eventsEmbeddedMs = Date.now() - startedAt;
    const events = await composeEventRows(embedded, overlays, embedding?.embedder, warn);
    const entities = await composeEntityRows(await source.entitiesByIds(idsOf(rows, 'entity')), overlays, (ns, r) => source.hiddenNames(ns, r));
    const facts = await composeFactRows(await source.factsByIds(factIds), overlays, embedding?.embedder, warn);
    // An id Postgres no longer projects was erased (destroyEvent): its node leaves the graph.
    const erasedEvents = absent(eventIds, events);
    const erasedFacts = absent(factIds, facts);
    const relationships = await source.relationshipsByIds(idsOf(rows, 'relationship'));
    Object.assign(marks, { composedMs: Date.now() - startedAt, events: events.length, facts: facts.length });
    return { events, entities, facts, relationships, erasedEvents, erasedFacts };
  }

  private async eventsWithEmbeddings(tx: Sql, source: GraphSourceRepository, ids: string[]): Promise<EventNodeRow[]> {
    if (ids.length === 0) return [];
    const embedding = this.ports.embedding;
    const events = await source.eventsByIds(ids, await currentEventModel(embedding));
    return embedding ? embedMissing(new EventEmbeddingRepository(tx), events, embedding) : events;
  }
}

/**
 * The projector as a stage of the one runner (platform/stages.ts): each step drains the first of
 * `drains` that has work, in order (the Silver projector before Gold's, so MERGED_FROM finds the
 * projected (:Entity) nodes). Woken by the NOTIFY of ingested events and changed facts; it starts
 * once the graph's schema is applied (`startWhen`: the MERGEs rely on its constraints).
 */
export function projectorStage(
  drains: ReadonlyArray<Pick<ProjectionJob, 'runOnce'>>,
  settings: { pollMs: number; startWhen?: Promise<boolean> },
  log: (msg: string) => void,
): Stage {
  const steps = drains.map((d) => drainStep(() => d.runOnce(), 'projector', log));
  return {
    name: 'projector',
    wakeOn: [CHANNELS.events, CHANNELS.facts],
    pollMs: settings.pollMs,
    startWhen: settings.startWhen,
    step: async () => {
      for (const step of steps) if (await step()) return true;
      return false;
    },
  };
}
