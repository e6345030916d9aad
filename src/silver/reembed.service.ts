import { DataSource } from 'typeorm';
import { enqueueOutbox, outboxFrom } from '../platform/outbox';
import { col, Sql } from '../platform/postgres/sql';
import { AccessException, AccessExceptionCode } from '../access/access.exception';
import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { requireWithin } from '../common/input';
import { MAX_JOB_REASON } from '../common/limits';
import { Embedder } from './model-ports';
import { JobRow } from '../platform/jobs/job';
import { JobRepository } from '../platform/jobs/job.repository';
import { EventEmbeddingRepository } from './event-embedding.repository';

export interface ReembedProgress {
  phase: 'facts' | 'events';
  done: number;
}

export interface ReembedResult {
  model: string;
  facts: number;
  events: number;
}

/** Texts embedded per call (one batch through the embedder, one UPDATE, one outbox INSERT). */
const PAGE = 256;
const FIRST_UUID = '00000000-0000-0000-0000-000000000000';

/**
 * Vectors are only comparable within one model, and search compares a query only with vectors of
 * the current model: after a model change (OFFLINE_EMBEDDER, EMBEDDING_MODEL) everything embedded
 * by the old one would be invisible to the vector channels. Re-embedding gives every current fact
 * and every event a vector of the current model, page by page, and queues their re-projection
 * through the outbox (the projector writes them to Neo4j as usual).
 */
export class ReembedService {
  private readonly sql: Sql;

  constructor(
    ds: DataSource,
    private readonly embedder: () => Promise<Embedder>,
    private readonly jobs: JobRepository,
  ) {
    this.sql = Sql.of(ds);
  }

  /** Queues a `reembed` job for a namespace, or every namespace (needs "admin"; on "*" for all). */
  async request(auth: AuthContext, namespace: string | null, reason: string | null): Promise<JobRow> {
    const principal = namespace ? auth.require(Capability.ADMIN, namespace) : auth.requirePrincipal();
    if (!namespace && !auth.can(Capability.ADMIN, '*')) {
      throw new AccessException(AccessExceptionCode.FORBIDDEN, 're-embedding every namespace needs "admin" on "*"; pass a namespace to re-embed one');
    }
    // One already queued or running for the namespace does the same: it is returned instead.
    return (
      await this.jobs.enqueue({
        kind: 'reembed',
        namespace,
        params: {},
        reason: requireWithin(reason?.trim() || 're-embedding requested', 'reason', MAX_JOB_REASON),
        createdBy: principal.tokenId,
      })
    ).job;
  }

  /**
   * At worker start: when anything was embedded by another model than the current one, queue one
   * job for everything (unless one is already queued or running). Returns its id, if queued.
   */
  async enqueueIfModelChanged(): Promise<string | null> {
    const model = (await this.embedder()).model;
    const changed = await this.sql.one(
      `SELECT EXISTS (SELECT 1 FROM silver.facts WHERE embedding_model IS DISTINCT FROM $1 AND embedding_model IS NOT NULL AND retired_at IS NULL)
              OR EXISTS (SELECT 1 FROM silver.event_embeddings x WHERE x.model <> $1
                          AND NOT EXISTS (SELECT 1 FROM silver.event_embeddings y WHERE y.event_id = x.event_id AND y.model = $1)) AS changed`,
      [model],
      (r) => col.boolean(r, 'changed'),
    );
    if (!changed || (await this.jobs.anyActive('reembed'))) return null;
    const { job, created } = await this.jobs.enqueue({ kind: 'reembed', namespace: null, params: {}, reason: `embedding model is now ${model}` });
    return created ? job.id : null;
  }

  /** Re-embeds what is not embedded by the current model; idempotent (a second run finds nothing to do). */
  async run(namespace: string | null, onProgress: (p: ReembedProgress) => void = () => undefined): Promise<ReembedResult> {
    const embedder = await this.embedder();
    const model = embedder.model;
    let facts = 0;
    for (let after = FIRST_UUID; ;) {
      const rows = await this.sql.rows(
        `SELECT id::text AS id, namespace, statement FROM silver.facts
          WHERE ($1::text IS NULL OR namespace = $1) AND retired_at IS NULL AND embedding_model IS DISTINCT FROM $2 AND id > $3::uuid
          ORDER BY id LIMIT $4`,
        [namespace, model, after, PAGE],
        (r) => ({ id: col.string(r, 'id'), namespace: col.string(r, 'namespace'), statement: col.string(r, 'statement') }),
      );
      if (rows.length === 0) break;
      const vectors = await embedder.embed(rows.map((r) => r.statement));
      const payload = JSON.stringify(rows.map((r, i) => ({ id: r.id, embedding: vectors[i] })));
      await this.sql.transaction(async (tx) => {
        await tx.execute(
          `UPDATE silver.facts f SET embedding = v.embedding::real[], embedding_model = $2
             FROM json_to_recordset($1::json) AS v(id uuid, embedding float8[]) WHERE f.id = v.id`,
          [payload, model],
        );
        await tx.execute(
          outboxFrom(`SELECT namespace, 'fact' AS type, id::text AS id, jsonb_build_object('id', id) AS payload, id AS ord
                        FROM silver.facts WHERE id = ANY($1::uuid[])`),
          [rows.map((r) => r.id)],
        );
      });
      facts += rows.length;
      after = (rows[rows.length - 1] as (typeof rows)[number]).id;
      onProgress({ phase: 'facts', done: facts });
    }

    let events = 0;
    for (let after = FIRST_UUID; ;) {
      const rows = await this.sql.rows(
        `SELECT e.id::text AS id, e.namespace, e.content FROM bronze.events e
          WHERE ($1::text IS NULL OR e.namespace = $1) AND e.id > $3::uuid
            AND NOT EXISTS (SELECT 1 FROM silver.event_embeddings x WHERE x.event_id = e.id AND x.model = $2)
            AND NOT EXISTS (SELECT 1 FROM bronze.event_tombstones t WHERE t.event_id = e.id)
          ORDER BY e.id LIMIT $4`,
        [namespace, model, after, PAGE],
        (r) => ({ id: col.string(r, 'id'), namespace: col.string(r, 'namespace'), content: col.string(r, 'content') }),
      );
      if (rows.length === 0) break;
      const vectors = await embedder.embed(rows.map((r) => r.content));
      await this.sql.transaction(async (tx) => {
        await new EventEmbeddingRepository(tx).save(rows.map((r, i) => ({ eventId: r.id, namespace: r.namespace, model, embedding: vectors[i] as number[] })));
        await enqueueOutbox(
          tx,
          rows.map((r) => ({ namespace: r.namespace, type: 'event', id: r.id, payload: { id: r.id } })),
        );
      });
      events += rows.length;
      after = (rows[rows.length - 1] as (typeof rows)[number]).id;
      onProgress({ phase: 'events', done: events });
    }
    // Vectors of other models stay (the runtime role deletes nothing); search never compares across models.
    return { model, facts, events };
  }
}
