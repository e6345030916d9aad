import { DataSource } from 'typeorm';

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
}

/** Normalised lookup key of an entity name or alias: case, spacing and punctuation folded. */
export function nameKey(name: string): string {
  return name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}+#.]+/gu, ' ')
    .trim();
}

/** Reads the current Silver state a micro-batch is judged against. */
export class CandidateRepository {
  constructor(private readonly ds: DataSource) {}

  /** Live entities of the namespace whose name or an alias has one of these keys. */
  async entitiesByKeys(namespace: string, keys: string[]): Promise<ExistingEntity[]> {
    if (keys.length === 0) return [];
    const rows: Array<{ id: string; type: string; name: string; name_key: string; aliases: string[]; alias_keys: string[] }> = await this.ds.query(
      `SELECT id, type, name, name_key, aliases, alias_keys FROM silver.entities
        WHERE namespace = $1 AND retired_at IS NULL AND (name_key = ANY($2::text[]) OR alias_keys && $2::text[])
        ORDER BY recorded_at, id`,
      [namespace, keys],
    );
    return rows.map((r) => ({ id: r.id, type: r.type, name: r.name, nameKey: r.name_key, aliases: r.aliases, aliasKeys: r.alias_keys }));
  }

  /**
   * Current facts (not retired, not superseded) that each query fact may conflict with: same
   * subject entity, or a statement similar by trigram (pg_trgm's `%`, threshold set per call).
   * One round trip for the whole batch; at most `limit` per query fact.
   */
  async candidates(
    namespace: string,
    queries: Array<{ index: number; subjectEntityId: string | null; predicate: string | null; statement: string }>,
    limit: number,
    trigramThreshold: number,
  ): Promise<CandidateFactRow[]> {
    if (queries.length === 0) return [];
    const rows: Array<Record<string, unknown>> = await this.ds.transaction(async (em) => {
      await em.query(`SELECT set_config('pg_trgm.similarity_threshold', $1, true)`, [String(trigramThreshold)]);
      return em.query(
        `WITH q AS (
           SELECT * FROM unnest($2::int[], $3::uuid[], $4::text[], $5::text[]) AS q(idx, subject, predicate, statement)
         )
         SELECT q.idx, f.id, f.statement, f.fact_type, f.subject_entity_id, e.name AS subject_name, f.predicate, f.object_value,
                f.is_negation, f.valid_from, f.embedding_model, f.trgm,
                -- A fact is often a candidate of many new facts: its embedding travels (and is parsed) once.
                CASE WHEN row_number() OVER (PARTITION BY f.id ORDER BY q.idx) = 1 THEN f.embedding END AS embedding
           FROM q
           CROSS JOIN LATERAL (
             SELECT c.*, similarity(c.statement, q.statement) AS trgm
               FROM silver.facts c
              WHERE c.namespace = $1 AND c.retired_at IS NULL AND c.valid_to IS NULL
                AND ((q.subject IS NOT NULL AND c.subject_entity_id = q.subject) OR c.statement % q.statement)
              ORDER BY (q.subject IS NOT NULL AND c.subject_entity_id = q.subject AND c.predicate IS NOT DISTINCT FROM q.predicate) DESC,
                       similarity(c.statement, q.statement) DESC, c.id
              LIMIT $6
           ) f
           LEFT JOIN silver.entities e ON e.id = f.subject_entity_id`,
        [
          namespace,
          queries.map((q) => q.index),
          queries.map((q) => q.subjectEntityId),
          queries.map((q) => q.predicate),
          queries.map((q) => q.statement),
          limit,
        ],
      );
    });
    const embeddingOf = new Map<string, number[]>();
    for (const r of rows) if (r.embedding) embeddingOf.set(r.id as string, r.embedding as number[]);
    return rows.map((r) => ({
      queryIndex: r.idx as number,
      id: r.id as string,
      statement: r.statement as string,
      factType: r.fact_type as string,
      subjectEntityId: r.subject_entity_id as string | null,
      subjectName: r.subject_name as string | null,
      predicate: r.predicate as string | null,
      objectValue: r.object_value as string | null,
      isNegation: r.is_negation as boolean,
      validFrom: r.valid_from as Date,
      embedding: embeddingOf.get(r.id as string) ?? null,
      embeddingModel: r.embedding_model as string | null,
      trigram: Number(r.trgm),
    }));
  }
}
