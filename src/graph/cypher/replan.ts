import { CypherRunner } from './cypher-runner';

/**
 * Cypher's `replan` query option (Neo4j's "Cypher replanning"): `skip` uses a cached plan even when
 * the store's statistics have moved past `cypher.statistics_divergence_threshold`; `force` plans
 * the statement again and puts the new plan in the cache in place of the old one (the option is
 * not part of the plan's cache key); `default` leaves it to Neo4j.
 */
export type Replan = 'default' | 'skip' | 'force';

/** `tx` with every statement sent with `CYPHER replan=<replan>` (unchanged for `default`). */
export function withReplan(tx: CypherRunner, replan: Replan): CypherRunner {
  if (replan === 'default') return tx;
  const prefix = `CYPHER replan=${replan} `;
  return {
    run: ((query: unknown, parameters?: unknown) =>
      typeof query === 'string'
        ? tx.run(prefix + query, parameters as Record<string, unknown>)
        : tx.run(query as never, parameters as never)) as CypherRunner['run'],
  };
}

/** The label and relationship counts Neo4j's planner reads, from its count store (no scan). */
export interface GraphCounts {
  facts: number;
  events: number;
  entities: number;
  relationships: number;
}

export async function graphCounts(tx: CypherRunner): Promise<GraphCounts> {
  const res = await tx.run(
    `CALL () { MATCH (n:Fact) RETURN count(n) AS facts }
     CALL () { MATCH (n:Event) RETURN count(n) AS events }
     CALL () { MATCH (n:Entity) RETURN count(n) AS entities }
     CALL () { MATCH ()-[r]->() RETURN count(r) AS relationships }
     RETURN facts, events, entities, relationships`,
  );
  const r = res.records[0];
  const n = (k: keyof GraphCounts): number => Number(r?.get(k) ?? 0);
  return { facts: n('facts'), events: n('events'), entities: n('entities'), relationships: n('relationships') };
}

/**
 * Whether any count moved by more than `threshold` of what it was when the plans were made (any
 * count from zero does): those statistics no longer describe the store.
 */
export function countsDiverged(planned: GraphCounts, now: GraphCounts, threshold: number): boolean {
  return (Object.keys(now) as Array<keyof GraphCounts>).some((k) => Math.abs(now[k] - planned[k]) > threshold * planned[k]);
}
