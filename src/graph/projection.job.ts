import { Driver } from 'neo4j-driver';
import { DataSource } from 'typeorm';
import { mergeEntityNodes } from './cypher/entity-nodes';
import { EventNodeRow, mergeEventNodes } from './cypher/event-nodes';
import { syncFactEdges } from './cypher/fact-edges';
import { mergeFactNodes } from './cypher/fact-nodes';
import { mergeRelationshipEdges } from './cypher/relationship-edges';
import { GraphSourceRepository } from './graph-source.repository';

type AggregateType = 'event' | 'fact' | 'entity' | 'relationship';

interface OutboxRow {
  id: string;
  aggregate_type: AggregateType;
  op: string;
  /** Events carry their node row; Silver aggregates carry only `{id}` (the handler re-reads Postgres). */
  payload: EventNodeRow | { id: string };
  attempts: number;
}

export type ProjectionResult = { kind: 'success'; projected: number } | { kind: 'skipped' } | { kind: 'failed'; error: string; rows: number };

/** Aggregate types this projector writes. */
const PROJECTED_TYPES: readonly AggregateType[] = ['event', 'fact', 'entity', 'relationship'];

/** Retry delay after a failed write: 2^attempts seconds, capped. */
const MAX_BACKOFF_SECONDS = 300;

/** Connection-level failures (server down, restarting, network), as opposed to a bad row. */
export function isNeo4jUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ServiceUnavailable' || code === 'SessionExpired' || (typeof code === 'string' && code.startsWith('Neo.TransientError.'));
}

function idsOf(rows: readonly OutboxRow[], type: AggregateType): string[] {
  return [...new Set(rows.filter((r) => r.aggregate_type === type && r.op === 'upsert').map((r) => r.payload.id))];
}

/**
 * Drains `ops.outbox` into Neo4j: claims a batch (`FOR UPDATE SKIP LOCKED`, oldest first), MERGEs
 * it in one Neo4j transaction and marks it processed in the same Postgres transaction. When Neo4j
 * fails the rows stay pending with exponential backoff, so nothing is lost while it is down.
 * Silver rows carry ids only: the batch re-reads the current facts, entities and relationships
 * (one query per type), so a replayed or out-of-order row writes the current state, idempotently.
 */
export class ProjectionJob {
  constructor(
    private readonly ds: DataSource,
    private readonly neo4j: Driver,
    private readonly batchSize: number,
  ) {}

  async runOnce(): Promise<ProjectionResult> {
    return this.ds.transaction(async (em) => {
      const rows: OutboxRow[] = await em.query(
        `SELECT id, aggregate_type, op, payload, attempts FROM ops.outbox
          WHERE processed_at IS NULL AND available_at <= now() AND aggregate_type = ANY($2::text[])
          ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [this.batchSize, PROJECTED_TYPES],
      );
      if (rows.length === 0) return { kind: 'skipped' } as const;
      const ids = rows.map((r) => r.id);
      // Postgres reads stay outside the try: an SQL error aborts this transaction, so it cannot record a retry.
      const events = rows.filter((r) => r.aggregate_type === 'event' && r.op === 'upsert').map((r) => r.payload as EventNodeRow);
      const source = new GraphSourceRepository(em);
      const entities = await source.entitiesByIds(idsOf(rows, 'entity'));
      const facts = await source.factsByIds(idsOf(rows, 'fact'));
      const relationships = await source.relationshipsByIds(idsOf(rows, 'relationship'));
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
          });
        } finally {
          await session.close();
        }
        await em.query(`UPDATE ops.outbox SET processed_at = now(), last_error = NULL WHERE id = ANY($1::bigint[])`, [ids]);
        return { kind: 'success', projected: rows.length } as const;
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        // Neo4j unreachable: the rows did nothing wrong. Leave them as they are (the loop polls
        // again), so the backlog drains the moment Neo4j is back instead of after a long backoff.
        if (isNeo4jUnavailable(err)) return { kind: 'failed', error, rows: rows.length } as const;
        await em.query(
          `UPDATE ops.outbox SET attempts = attempts + 1, last_error = $2,
                  available_at = now() + make_interval(secs => least(power(2, attempts + 1), $3))
            WHERE id = ANY($1::bigint[])`,
          [ids, error.slice(0, 2000), MAX_BACKOFF_SECONDS],
        );
        return { kind: 'failed', error, rows: rows.length } as const;
      }
    });
  }
}

/** One projector step for a PollingLoop: true when it projected something. */
export function projectorStep(job: ProjectionJob, log: (msg: string) => void): () => Promise<boolean> {
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
