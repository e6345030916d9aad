import { ManagedTransaction } from 'neo4j-driver';
import { visibleCypher } from '../../silver/visibility';

/** What the read-side queries need: a managed read transaction. */
export type CypherReader = Pick<ManagedTransaction, 'run'>;

/** A RELATED edge as the read side returns it (timestamps as ISO strings). */
export interface RelatedEdge {
  id: string;
  type: string;
  sourceEntityId: string;
  targetEntityId: string;
  confidence: number;
  validFrom: string;
  validTo: string | null;
  retiredAt: string | null;
}

/** Cypher map projection of a RELATED edge `x` between `a` (start) and `b` (end): the RelatedEdge shape. */
export const RELATED_EDGE = (x: string) =>
  `{id: ${x}.id, type: ${x}.type, sourceEntityId: startNode(${x}).id, targetEntityId: endNode(${x}).id, confidence: ${x}.confidence,
    validFrom: toString(${x}.validFrom), validTo: toString(${x}.validTo), retiredAt: toString(${x}.retiredAt)}`;

/**
 * The validity rule for RELATED edges, the same as Entity.relationships(asOf) (the shared rule of
 * src/silver/visibility.ts, retired edges never): with $asOf, valid at that instant
 * (validFrom <= asOf < validTo); without, current (no validTo). Every query using it passes `$asOf`
 * (an ISO string or null) and `$types` (a list or null).
 */
export const RELATED_IS_VISIBLE = (x: string) =>
  `${x}.namespace = $ns
   AND ($types IS NULL OR ${x}.type IN $types)
   AND ${visibleCypher(x, { asOf: 'asOf', includeRetired: false })}`;
