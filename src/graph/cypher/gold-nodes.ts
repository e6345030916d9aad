import { namespaceKey } from '../../platform/neo4j/namespace-key';
import { assertIdentifier, CypherRunner } from './cypher-runner';
import { GraphKeyCypher, readKeys } from './key-digest';

export interface GoldEntityNodeRow {
  id: string;
  namespace: string;
  type: string;
  /** The type as a label, checked (gold/promotion/resolution-rules.ts `typeLabel`). */
  label: string;
  name: string;
  aliases: string[];
  confidence: number;
  version: number;
  promotedAt: string;
  retiredAt: string | null;
  /** Live Silver members: the MERGED_FROM edges. */
  memberIds: string[];
}

export interface GoldRelationshipEdgeRow {
  id: string;
  namespace: string;
  type: string;
  sourceGoldId: string;
  targetGoldId: string;
  confidence: number;
  validFrom: string;
  validTo: string | null;
  version: number;
  retiredAt: string | null;
}

/**
 * Idempotent upsert of `(:GoldEntity)` nodes with their type as a second label (old type labels
 * removed), and their `MERGED_FROM` edges set to exactly the live members (placeholders for
 * `(:Entity)` nodes not projected yet, as the Silver projection does).
 */
export async function mergeGoldEntityNodes(tx: CypherRunner, rows: readonly GoldEntityNodeRow[]): Promise<void> {
  if (rows.length === 0) return;
  for (const r of rows) assertIdentifier(r.label);
  await tx.run(
    `UNWIND $rows AS r
     MERGE (g:GoldEntity {id: r.id})
     WITH g, r, [l IN labels(g) WHERE l <> 'GoldEntity' AND l <> r.label] AS stale
     REMOVE g:$(stale)
     SET g:$(r.label)
     SET g.namespace = r.namespace, g.nsKey = r.nsKey, g.type = r.type, g.name = r.name, g.aliases = r.aliases,
         g.confidence = r.confidence, g.version = toInteger(r.version), g.promotedAt = datetime(r.promotedAt), g.retiredAt = datetime(r.retiredAt)
     WITH g, r
     CALL (g, r) {
       OPTIONAL MATCH (g)-[m:MERGED_FROM]->(e:Entity) WHERE NOT e.id IN r.memberIds
       DELETE m
     }
     WITH g, r
     UNWIND r.memberIds AS mid
     MERGE (e:Entity {id: mid})
     ON CREATE SET e.namespace = r.namespace
     MERGE (g)-[:MERGED_FROM]->(e)`,
    { rows: rows.map((r) => ({ ...r, nsKey: namespaceKey(r.namespace) })) },
  );
}

/** Idempotent upsert of `(:GoldEntity)-[:GOLD_RELATED {id, type, validity, version}]->(:GoldEntity)`. */
export async function mergeGoldRelationshipEdges(tx: CypherRunner, rows: readonly GoldRelationshipEdgeRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.run(
    `UNWIND $rows AS r
     MERGE (a:GoldEntity {id: r.sourceGoldId})
     ON CREATE SET a.namespace = r.namespace
     MERGE (b:GoldEntity {id: r.targetGoldId})
     ON CREATE SET b.namespace = r.namespace
     MERGE (a)-[x:GOLD_RELATED {id: r.id}]->(b)
     SET x.namespace = r.namespace, x.type = r.type, x.confidence = r.confidence, x.validFrom = datetime(r.validFrom),
         x.validTo = datetime(r.validTo), x.version = toInteger(r.version), x.retiredAt = datetime(r.retiredAt)`,
    { rows },
  );
}

/** How the graph spells the Gold kinds' keys (see `GRAPH_KEY_CYPHER`), as `goldKeys` (gold/promotion) builds them from Postgres rows. */
export const GOLD_GRAPH_KEY_CYPHER: Record<string, GraphKeyCypher> = {
  GoldEntity: {
    match: 'MATCH (g:GoldEntity) WHERE g.namespace = $ns',
    key: "g.id + '@' + toString(g.version) + ':' + [l IN labels(g) WHERE l <> 'GoldEntity'][0] + ':' + g.name",
  },
  MERGED_FROM: { match: 'MATCH (g:GoldEntity)-[:MERGED_FROM]->(e:Entity) WHERE g.namespace = $ns', key: "g.id + '->' + e.id" },
  GOLD_RELATED: { match: 'MATCH (:GoldEntity)-[x:GOLD_RELATED]->(:GoldEntity) WHERE x.namespace = $ns', key: "x.id + '@' + toString(x.version)" },
};

/** Gold node ids and edge keys of a namespace, in the shape `GraphSourceRepository.goldKeys` gives for Postgres. */
export async function readGoldGraphKeys(tx: CypherRunner, namespace: string): Promise<Record<string, string[]>> {
  return readKeys(tx, namespace, GOLD_GRAPH_KEY_CYPHER);
}
