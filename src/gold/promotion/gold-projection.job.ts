import { Driver } from 'neo4j-driver';
import { col, Sql } from '../../platform/postgres/sql';
import { retryDelaySql } from '../../platform/jobs/backoff';
import { GoldEntityRow, GoldRelationshipRow, PromotionRepository } from './promotion.repository';
import { typeLabel } from './resolution-rules';
import { GoldEntityNodeRow, GoldRelationshipEdgeRow, mergeGoldEntityNodes, mergeGoldRelationshipEdges } from '../../graph/cypher/gold-nodes';
import { isNeo4jUnavailable, ProjectionResult } from '../../graph/projection.job';

const GOLD_TYPES = ['gold_entity', 'gold_relationship'];
const MAX_BACKOFF_SECONDS = 300;

export const toGoldEntityNode = (g: GoldEntityRow): GoldEntityNodeRow => ({
  id: g.id,
  namespace: g.namespace,
  type: g.type,
  label: typeLabel(g.type),
  name: g.name,
  aliases: g.aliases,
  confidence: g.confidence,
  version: g.version,
  promotedAt: g.promotedAt.toISOString(),
  retiredAt: g.retiredAt?.toISOString() ?? null,
  memberIds: g.memberIds,
});

export const toGoldRelationshipEdge = (r: GoldRelationshipRow): GoldRelationshipEdgeRow => ({
  id: r.id,
  namespace: r.namespace,
  type: r.type,
  sourceGoldId: r.sourceGoldId,
  targetGoldId: r.targetGoldId,
  confidence: r.confidence,
  validFrom: r.validFrom.toISOString(),
  validTo: r.validTo?.toISOString() ?? null,
  version: r.version,
  retiredAt: r.retiredAt?.toISOString() ?? null,
});

/** The consistency check's keys for Gold, Postgres side (same shape as `readGoldGraphKeys`). */
export function goldKeys(entities: readonly GoldEntityRow[], relationships: readonly GoldRelationshipRow[]): Record<string, string[]> {
  return {
    GoldEntity: entities.map((g) => `${g.id}@${g.version}:${typeLabel(g.type)}:${g.name}`),
    MERGED_FROM: entities.flatMap((g) => g.memberIds.map((m) => `${g.id}->${m}`)),
    GOLD_RELATED: relationships.map((r) => `${r.id}@${r.version}`),
  };
}

/**
 * Drains the Gold rows of `ops.outbox` a promotion batch at a time: claims the oldest pending
 * Gold row and every other pending row of its batch together (`FOR UPDATE SKIP LOCKED`), re-reads
 * the batch's Gold entities and relationships from Postgres and writes them in one Neo4j
 * transaction, then marks the rows processed in the same Postgres transaction. On failure the
 * rows stay pending (with backoff unless Neo4j is simply down), as in the Silver projector.
 */
export class GoldProjectionJob {
  constructor(
    private readonly sql: Sql,
    private readonly neo4j: Driver,
  ) {}

  async runOnce(): Promise<ProjectionResult> {
    return this.sql.transaction(async (tx) => {
      const head = await tx.maybeOne(
        `SELECT payload->>'batch' AS batch FROM ops.outbox
          WHERE processed_at IS NULL AND available_at <= now() AND aggregate_type = ANY($1::text[])
          ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`,
        [GOLD_TYPES],
        (r) => col.string(r, 'batch'),
      );
      if (head === null) return { kind: 'skipped' } as const;
      const rows = await tx.rows(
        `SELECT id::text AS id, aggregate_type, aggregate_id FROM ops.outbox
          WHERE processed_at IS NULL AND aggregate_type = ANY($1::text[]) AND payload->>'batch' = $2
          ORDER BY id FOR UPDATE SKIP LOCKED`,
        [GOLD_TYPES, head],
        (r) => ({ id: col.string(r, 'id'), type: col.string(r, 'aggregate_type'), aggregateId: col.string(r, 'aggregate_id') }),
      );
      const ids = rows.map((r) => r.id);
      const repo = new PromotionRepository(tx);
      const entities = await repo.goldEntitiesByIds([...new Set(rows.filter((r) => r.type === 'gold_entity').map((r) => r.aggregateId))], tx);
      const relationships = await repo.goldRelationshipsByIds([...new Set(rows.filter((r) => r.type === 'gold_relationship').map((r) => r.aggregateId))], tx);
      try {
        const session = this.neo4j.session();
        try {
          await session.executeWrite(async (w) => {
            await mergeGoldEntityNodes(w, entities.map(toGoldEntityNode));
            await mergeGoldRelationshipEdges(w, relationships.map(toGoldRelationshipEdge));
          });
        } finally {
          await session.close();
        }
        await tx.execute(`UPDATE ops.outbox SET processed_at = now(), last_error = NULL WHERE id = ANY($1::bigint[])`, [ids]);
        return { kind: 'success', projected: rows.length } as const;
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        if (isNeo4jUnavailable(err)) return { kind: 'failed', error, rows: rows.length } as const;
        await tx.execute(
          `UPDATE ops.outbox SET attempts = attempts + 1, last_error = $2, available_at = now() + ${retryDelaySql('attempts', '2', '$3')} WHERE id = ANY($1::bigint[])`,
          [ids, error.slice(0, 2000), MAX_BACKOFF_SECONDS],
        );
        return { kind: 'failed', error, rows: rows.length } as const;
      }
    });
  }
}
