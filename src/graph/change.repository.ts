import { DataSource } from 'typeorm';
import { col, Sql, SqlRow } from '../platform/postgres/sql';

/** What happened. Facts: ADDED, SUPERSEDED, RETIRED. Gold entities and relationships: ADDED (created), UPDATED, MERGED, SPLIT, RETIRED. */
export type ChangeKind = 'ADDED' | 'SUPERSEDED' | 'RETIRED' | 'UPDATED' | 'MERGED' | 'SPLIT';

/** What changed: a Silver fact, a Gold entity or a Gold relationship. */
export type ChangeSubject = 'FACT' | 'GOLD_ENTITY' | 'GOLD_RELATIONSHIP';

export const CHANGE_SUBJECTS: readonly ChangeSubject[] = ['FACT', 'GOLD_ENTITY', 'GOLD_RELATIONSHIP'];

export interface ChangeRow {
  subject: ChangeSubject;
  kind: ChangeKind;
  at: Date;
  /** FACT only. */
  factId: string | null;
  /** GOLD_ENTITY only. */
  goldEntityId: string | null;
  /** GOLD_RELATIONSHIP only. */
  goldRelationshipId: string | null;
  /** Gold only: the Silver entities (or, for relationships, Silver relationships) the decision concerns. */
  silverIds: string[];
  /** Gold only: the promotion log's reason. */
  reason: string | null;
}

const KINDS: readonly ChangeKind[] = ['ADDED', 'SUPERSEDED', 'RETIRED', 'UPDATED', 'MERGED', 'SPLIT'];

/** The promotion log's actions that change Gold, and the change kind each is (keep_apart changes nothing). */
const GOLD_ACTION_KIND = `CASE l.action WHEN 'create' THEN 'ADDED' WHEN 'update' THEN 'UPDATED' WHEN 'merge' THEN 'MERGED'
                                        WHEN 'split' THEN 'SPLIT' WHEN 'retire' THEN 'RETIRED' END`;
const GOLD_ACTIONS = ['create', 'update', 'merge', 'split', 'retire'];

function toChange(r: SqlRow): ChangeRow {
  const kind = col.string(r, 'kind') as ChangeKind;
  if (!KINDS.includes(kind)) throw new Error(`column kind: unexpected change kind ${kind}`);
  const subject = col.string(r, 'subject') as ChangeSubject;
  if (!CHANGE_SUBJECTS.includes(subject)) throw new Error(`column subject: unexpected change subject ${subject}`);
  return {
    subject,
    kind,
    at: col.date(r, 'at'),
    factId: col.stringOrNull(r, 'fact_id'),
    goldEntityId: col.stringOrNull(r, 'gold_entity_id'),
    goldRelationshipId: col.stringOrNull(r, 'gold_relationship_id'),
    silverIds: col.strings(r, 'silver_ids'),
    reason: col.stringOrNull(r, 'reason'),
  };
}

/**
 * The change log of a namespace. Facts from Silver's two clocks: recorded_at (ADDED), the
 * superseding fact's recorded_at (SUPERSEDED: the supersession commits with it) and retired_at
 * (RETIRED). Gold from `gold.promotion_log` (created_at): one change per decision that changed a
 * Gold entity or relationship. Strictly after `since`, oldest first, only the subjects asked for.
 */
export class ChangeRepository {
  private readonly sql: Sql;

  constructor(ds: DataSource) {
    this.sql = Sql.of(ds);
  }

  async since(namespace: string, since: Date, limit: number, subjects: readonly ChangeSubject[] = ['FACT']): Promise<ChangeRow[]> {
    const facts = subjects.includes('FACT');
    const gold = subjects.filter((s) => s !== 'FACT');
    const none = `NULL::text, NULL::text, '{}'::text[], NULL::text`;
    return this.sql.rows(
      `SELECT subject, kind, fact_id, gold_entity_id, gold_relationship_id, silver_ids, reason, at FROM (
         SELECT 'FACT' AS subject, 'ADDED' AS kind, 0 AS ord, f.id::text AS fact_id,
                NULL::text AS gold_entity_id, NULL::text AS gold_relationship_id, '{}'::text[] AS silver_ids, NULL::text AS reason,
                f.recorded_at AS at, f.id::text AS tie
           FROM silver.facts f WHERE $4::boolean AND f.namespace = $1 AND f.recorded_at > $2
         UNION ALL
         SELECT 'FACT', 'SUPERSEDED', 1, f.id::text, ${none}, n.recorded_at, f.id::text
           FROM silver.facts f JOIN silver.facts n ON n.id = f.superseded_by
          WHERE $4::boolean AND f.namespace = $1 AND n.namespace = $1 AND n.recorded_at > $2
         UNION ALL
         SELECT 'FACT', 'RETIRED', 2, f.id::text, ${none}, f.retired_at, f.id::text
           FROM silver.facts f WHERE $4::boolean AND f.namespace = $1 AND f.retired_at > $2
         UNION ALL
         SELECT g.subject, ${GOLD_ACTION_KIND}, 3, NULL, l.gold_entity_id::text, l.gold_relationship_id::text, l.silver_ids::text[], l.reason,
                l.created_at, lpad(l.id::text, 20, '0')
           FROM gold.promotion_log l
          CROSS JOIN LATERAL (SELECT CASE WHEN l.gold_relationship_id IS NULL THEN 'GOLD_ENTITY' ELSE 'GOLD_RELATIONSHIP' END AS subject) g
          WHERE l.namespace = $1 AND l.created_at > $2 AND l.action = ANY($6::text[]) AND g.subject = ANY($5::text[])
       ) c ORDER BY at, ord, tie LIMIT $3`,
      [namespace, since, limit, facts, gold, GOLD_ACTIONS],
      toChange,
    );
  }
}
