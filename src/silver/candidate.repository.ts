import { DataSource } from 'typeorm';
import { col, Sql, SqlRow } from '../platform/postgres/sql';
import { CURRENT, visibleSql } from './visibility';

export interface ExistingEntity {
  id: string;
  type: string;
  name: string;
  nameKey: string;
  aliases: string[];
  aliasKeys: string[];
}

export interface CandidateFactRow {
  queryIndex: number;
  id: string;
  statement: string;
  factType: string;
  subjectEntityId: string | null;
  subjectName: string | null;
  predicate: string | null;
  objectValue: string | null;
  isNegation: boolean;
  validFrom: Date;
  embedding: number[] | null;
  embeddingModel: string | null;
  trigram: number;
  /** When the fact was last said: the latest `occurredAt` of its source events (its validFrom when none is left). */
  lastStatedAt: Date;
  /** The quote of its latest source (what was said then), or null. */
  lastQuote: string | null;
}

/** Normalised lookup key of an entity name or alias: case, spacing and punctuation folded. */
export function nameKey(name: string): string {
  return name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}+#.]+/gu, ' ')
    .trim();
}

/** What planning reads of the current Silver state: the repository, or an in-memory fake in service tests. */
export type CandidateReader = Pick<CandidateRepository, 'entitiesByKeys' | 'candidates' | 'similarities'>;

/** A real[] column as numbers (pg parses float4 arrays into numbers). */
const numbersOrNull = (r: SqlRow, name: string): number[] | null => {
  const v = r[name];
  if (v === null || v === undefined) return null;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number')) throw new Error(`column ${name}: expected real[]`);
  return v as number[];
};

/** Reads the current Silver state a micro-batch is judged against. */
export class CandidateRepository {
  private readonly sql: Sql;

  constructor(ds: DataSource) {
    this.sql = Sql.of(ds);
  }

  /** Live entities of the namespace whose name or an alias has one of these keys. */
  async entitiesByKeys(namespace: string, keys: string[]): Promise<ExistingEntity[]> {
    if (keys.length === 0) return [];
    return this.sql.rows(
      `SELECT id, type, name, name_key, aliases, alias_keys FROM silver.entities
        WHERE namespace = $1 AND retired_at IS NULL AND (name_key = ANY($2::text[]) OR alias_keys && $2::text[])
        ORDER BY recorded_at, id`,
      [namespace, keys],
      (r) => ({
        id: col.string(r, 'id'),
        type: col.string(r, 'type'),
        name: col.string(r, 'name'),
        nameKey: col.string(r, 'name_key'),
        aliases: col.strings(r, 'aliases'),
        aliasKeys: col.strings(r, 'alias_keys'),
      }),
    );
  }

  /**
   * Current facts (the visibility rule with no asOf: not retired, not superseded) that each query
   * fact may conflict with: same subject entity, or a statement similar by trigram (pg_trgm's
   * `%`, threshold set per call). One round trip for the whole batch; at most `limit` per query fact,
   * each query fact's rows best first (same subject and predicate, then trigram similarity, then
   * statement, then id): `candidateRank`, which planning applies to the batch's own facts too.
   */
  async candidates(
    namespace: string,
    queries: Array<{ index: number; subjectEntityId: string | null; predicate: string | null; statement: string }>,
    limit: number,
    trigramThreshold: number,
  ): Promise<CandidateFactRow[]> {
    if (queries.length === 0) return [];
    const rows = await this.sql.transaction(async (tx) => {
      await tx.execute(`SELECT set_config('pg_trgm.similarity_threshold', $1, true)`, [String(trigramThreshold)]);
      return tx.rows(
        `WITH q AS (
           SELECT * FROM unnest($2::int[], $3::uuid[], $4::text[], $5::text[]) AS q(idx, subject, predicate, statement)
         )
         SELECT q.idx, f.id, f.statement, f.fact_type, f.subject_entity_id, e.name AS subject_name, f.predicate, f.object_value,
                f.is_negation, f.valid_from, f.embedding_model, f.trgm, last.occurred_at AS last_stated_at, last.quote AS last_quote,
                -- A fact is often a candidate of many new facts: its embedding travels (and is parsed) once.
                CASE WHEN row_number() OVER (PARTITION BY f.id ORDER BY q.idx) = 1 THEN f.embedding END AS embedding
           FROM q
           CROSS JOIN LATERAL (
             SELECT c.*, similarity(c.statement, q.statement) AS trgm,
                    row_number() OVER (ORDER BY (q.subject IS NOT NULL AND c.subject_entity_id = q.subject AND c.predicate IS NOT DISTINCT FROM q.predicate) DESC,
                                                similarity(c.statement, q.statement) DESC, c.statement COLLATE "C", c.id) AS rank
               FROM silver.facts c
              WHERE c.namespace = $1 AND ${visibleSql('c', CURRENT, [])}
                AND ((q.subject IS NOT NULL AND c.subject_entity_id = q.subject) OR c.statement % q.statement)
              ORDER BY rank
              LIMIT $6
           ) f
           -- When it was last said (a late older statement is judged in the order things were said: docs/silver.md "Order").
           LEFT JOIN LATERAL (
             SELECT dq.occurred_at, s.quote FROM silver.fact_sources s JOIN ops.derivation_queue dq ON dq.event_id = s.event_id
              WHERE s.fact_id = f.id ORDER BY dq.occurred_at DESC, s.event_id DESC LIMIT 1
           ) last ON true
           LEFT JOIN silver.entities e ON e.id = f.subject_entity_id
          ORDER BY q.idx, f.rank`,
        [
          namespace,
          queries.map((q) => q.index),
          queries.map((q) => q.subjectEntityId),
          queries.map((q) => q.predicate),
          queries.map((q) => q.statement),
          limit,
        ],
        (r) => ({
          queryIndex: col.number(r, 'idx'),
          id: col.string(r, 'id'),
          statement: col.string(r, 'statement'),
          factType: col.string(r, 'fact_type'),
          subjectEntityId: col.stringOrNull(r, 'subject_entity_id'),
          subjectName: col.stringOrNull(r, 'subject_name'),
          predicate: col.stringOrNull(r, 'predicate'),
          objectValue: col.stringOrNull(r, 'object_value'),
          isNegation: col.boolean(r, 'is_negation'),
          validFrom: col.date(r, 'valid_from'),
          embedding: numbersOrNull(r, 'embedding'),
          embeddingModel: col.stringOrNull(r, 'embedding_model'),
          trigram: col.number(r, 'trgm'),
          lastStatedAt: col.dateOrNull(r, 'last_stated_at') ?? col.date(r, 'valid_from'),
          lastQuote: col.stringOrNull(r, 'last_quote'),
        }),
      );
    });
    const embeddingOf = new Map<string, number[]>();
    for (const r of rows) if (r.embedding) embeddingOf.set(r.id, r.embedding);
    return rows.map((r) => ({ ...r, embedding: embeddingOf.get(r.id) ?? null }));
  }

  /**
   * pg_trgm similarity of each pair of statements (`i` < `j`), and whether it reaches the threshold
   * (`%`): the batch's own facts become each other's candidates by the rule stored facts do.
   */
  async similarities(statements: readonly string[], trigramThreshold: number): Promise<Array<{ i: number; j: number; trigram: number; similar: boolean }>> {
    if (statements.length < 2) return [];
    return this.sql.transaction(async (tx) => {
      await tx.execute(`SELECT set_config('pg_trgm.similarity_threshold', $1, true)`, [String(trigramThreshold)]);
      return tx.rows(
        `SELECT a.i, b.j, similarity(a.s, b.s) AS trgm, a.s % b.s AS similar
           FROM unnest($1::text[]) WITH ORDINALITY AS a(s, i) JOIN unnest($1::text[]) WITH ORDINALITY AS b(s, j) ON a.i < b.j`,
        [statements],
        (r) => ({ i: col.number(r, 'i') - 1, j: col.number(r, 'j') - 1, trigram: col.number(r, 'trgm'), similar: col.boolean(r, 'similar') }),
      );
    });
  }
}

/** What ranks a candidate of one new fact (`candidateRank`). */
export interface CandidateRankKey {
  sameSubjectAndPredicate: boolean;
  trigram: number;
  statement: string;
  id: string;
}

/**
 * The order candidates of one new fact are ranked in before the first `limit` are taken: same
 * subject and predicate first, then trigram similarity, then statement (code-point order, as
 * `COLLATE "C"`), then id. Stored facts and the batch's own are ranked alike, so which facts the
 * judge sees does not depend on whether they were derived in an earlier batch (docs/silver.md "Order").
 */
export function candidateRank(a: CandidateRankKey, b: CandidateRankKey): number {
  const order = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return Number(b.sameSubjectAndPredicate) - Number(a.sameSubjectAndPredicate) || b.trigram - a.trigram || order(a.statement, b.statement) || order(a.id, b.id);
}
