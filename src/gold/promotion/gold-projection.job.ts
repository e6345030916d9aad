import { Driver } from 'neo4j-driver';
import { col, Sql } from '../../platform/postgres/sql';
import { drainOutbox, OUTBOX_DRAINS, OutboxConsumer } from '../../platform/outbox-drain';
import { GoldEntityRow, GoldRelationshipRow, PromotionRepository } from './promotion.repository';
import { typeLabel } from './resolution-rules';
import { GoldEntityNodeRow, GoldRelationshipEdgeRow, mergeGoldEntityNodes, mergeGoldRelationshipEdges } from '../../graph/cypher/gold-nodes';
import { isNeo4jUnavailable, ProjectionResult } from '../../graph/projection.job';

const GOLD_TYPES = ['gold_entity', 'gold_relationship'];

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

interface GoldOutboxRow {
  id: string;
  type: string;
  aggregateId: string;
}

/**
 * Drains the Gold rows of `ops.outbox` a promotion batch at a time, through the one outbox drain
 * (platform/outbox-drain.ts): claims the oldest pending Gold row and every other pending row of
 * its batch together (`FOR UPDATE SKIP LOCKED`), re-reads the batch's Gold entities and
 * relationships from Postgres and writes them in one Neo4j transaction, then marks the rows
 * processed in the same Postgres transaction. On failure the rows stay pending (with backoff
 * unless Neo4j is simply down), as in the Silver projector.
 */
export class GoldProjectionJob {
  constructor(
    private readonly sql: Sql,
    private readonly neo4j: Driver,
  ) {}

  runOnce(): Promise<ProjectionResult> {
    return drainOutbox(this.sql, this.consumer);
  }

  private readonly consumer: OutboxConsumer<GoldOutboxRow, { entities: GoldEntityRow[]; relationships: GoldRelationshipRow[] }> = {
    name: OUTBOX_DRAINS.goldProjector,
    claim: async (tx) => {
      const head = await tx.maybeOne(
        `SELECT payload->>'batch' AS batch FROM ops.outbox
          WHERE processed_at IS NULL AND available_at <= now() AND aggregate_type = ANY($1::text[])
          ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`,
        [GOLD_TYPES],
        (r) => col.string(r, 'batch'),
      );
      if (head === null) return [];
      return tx.rows(
        `SELECT id::text AS id, aggregate_type, aggregate_id FROM ops.outbox
          WHERE processed_at IS NULL AND aggregate_type = ANY($1::text[]) AND payload->>'batch' = $2
          ORDER BY id FOR UPDATE SKIP LOCKED`,
        [GOLD_TYPES, head],
        (r) => ({ id: col.string(r, 'id'), type: col.string(r, 'aggregate_type'), aggregateId: col.string(r, 'aggregate_id') }),
      );
    },
    read: async (tx, rows) => {
      const repo = new PromotionRepository(tx);
      const idsOf = (type: string) => [...new Set(rows.filter((r) => r.type === type).map((r) => r.aggregateId))];
      return {
        entities: await repo.goldEntitiesByIds(idsOf('gold_entity'), tx),
        relationships: await repo.goldRelationshipsByIds(idsOf('gold_relationship'), tx),
      };
    },
    write: async ({ entities, relationships }) => {
      const session = this.neo4j.session();
      try {
        await session.executeWrite(async (w) => {
          await mergeGoldEntityNodes(w, entities.map(toGoldEntityNode));
          await mergeGoldRelationshipEdges(w, relationships.map(toGoldRelationshipEdge));
        });
      } finally {
        await session.close();
      }
    },
    unavailable: isNeo4jUnavailable,
  };
}
