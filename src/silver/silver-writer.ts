import { EntityManager } from 'typeorm';
import { DerivationPlan } from './derivation-plan';

export interface RunMeta {
  kind: 'incremental' | 'rebuild';
  jobId: string | null;
  workerId: string;
}

export interface WriteOutcome {
  runId: string;
  added: string[];
  superseded: Array<{ oldId: string; newId: string }>;
}

/** Thrown when the queue rows were no longer ours to complete: the transaction rolls back. */
export class LostClaimError extends Error {}

const pgArray = (v: number[] | null): string | null => (v ? `{${v.join(',')}}` : null);
const NOTIFY_CHUNK = 60; // ids per notification, well under the 8000-byte payload limit

/**
 * Writes a DerivationPlan inside the caller's transaction: run, entities, facts and their
 * sources, the judge's decisions and their effects on older facts, relationships, outbox rows,
 * subscriber notifications, and the completion of the events' queue rows. All or nothing.
 */
export async function writePlan(em: EntityManager, plan: DerivationPlan, meta: RunMeta): Promise<WriteOutcome> {
  const ns = plan.namespace;
  const done: unknown[] = await em.query(
    `UPDATE ops.derivation_queue SET status = 'done', processed_at = now(), last_error = NULL, locked_by = NULL, locked_until = NULL
      WHERE event_id = ANY($1::uuid[]) AND status <> 'done' RETURNING event_id`,
    [plan.eventIds],
  );
  const completed = Array.isArray(done[0]) ? (done[0] as unknown[]).length : done.length;
  if (completed !== plan.eventIds.length) throw new LostClaimError(`only ${completed} of ${plan.eventIds.length} events were still pending`);

  const stored = plan.facts.filter((f) => f.action !== 'SKIP');
  const [run] = (await em.query(
    `INSERT INTO silver.derivation_runs (namespace, kind, job_id, extraction_model, judge_model, embedding_model, worker_id, event_count, fact_count, model_calls, gate_notes)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
    [
      ns,
      meta.kind,
      meta.jobId,
      plan.models.extraction,
      plan.models.judge,
      plan.models.embedding,
      meta.workerId,
      plan.eventIds.length,
      stored.length,
      plan.modelCalls,
      JSON.stringify(plan.gateNotes),
    ],
  )) as Array<{ id: string }>;
  const runId = (run as { id: string }).id;

  const newEntities = plan.entities.filter((e) => e.isNew);
  if (newEntities.length > 0) {
    await em.query(
      `INSERT INTO silver.entities (id, namespace, type, name, name_key, aliases, alias_keys, derivation_run_id)
       SELECT x.id, $1, x.type, x.name, x.name_key, ARRAY(SELECT jsonb_array_elements_text(x.aliases)), ARRAY(SELECT jsonb_array_elements_text(x.alias_keys)), $2
         FROM jsonb_to_recordset($3::jsonb) AS x(id uuid, type text, name text, name_key text, aliases jsonb, alias_keys jsonb)`,
      [
        ns,
        runId,
        JSON.stringify(newEntities.map((e) => ({ id: e.id, type: e.type, name: e.name, name_key: e.nameKey, aliases: e.aliases, alias_keys: e.aliasKeys }))),
      ],
    );
  }
  const renamed = plan.entities.filter((e) => !e.isNew && e.aliasesChanged);
  if (renamed.length > 0) {
    await em.query(
      `UPDATE silver.entities e SET aliases = ARRAY(SELECT jsonb_array_elements_text(x.aliases)), alias_keys = ARRAY(SELECT jsonb_array_elements_text(x.alias_keys))
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, aliases jsonb, alias_keys jsonb) WHERE e.id = x.id`,
      [JSON.stringify(renamed.map((e) => ({ id: e.id, aliases: e.aliases, alias_keys: e.aliasKeys })))],
    );
  }

  if (stored.length > 0) {
    await em.query(
      `INSERT INTO silver.facts (id, namespace, statement, fact_type, subject_entity_id, predicate, object_value, object_entity_id, is_negation,
                                 confidence, importance, valid_from, valid_to, extraction_model, derivation_run_id, embedding, embedding_model)
       SELECT x.id, $1, x.statement, x.fact_type, x.subject_entity_id, x.predicate, x.object_value, x.object_entity_id, x.is_negation,
              x.confidence, x.importance, x.valid_from, x.valid_to, $2, $3, x.embedding::real[], $4
         FROM jsonb_to_recordset($5::jsonb) AS x(id uuid, statement text, fact_type text, subject_entity_id uuid, predicate text, object_value text,
              object_entity_id uuid, is_negation boolean, confidence real, importance real, valid_from timestamptz, valid_to timestamptz, embedding text, ord int)
        ORDER BY x.ord`,
      [
        ns,
        plan.models.extraction,
        runId,
        plan.models.embedding,
        JSON.stringify(
          stored.map((f, ord) => ({
            id: f.id,
            statement: f.statement,
            fact_type: f.factType,
            subject_entity_id: f.subjectEntityId,
            predicate: f.predicate,
            object_value: f.objectValue,
            object_entity_id: f.objectEntityId,
            is_negation: f.isNegation,
            confidence: f.confidence,
            importance: f.importance,
            valid_from: f.validFrom.toISOString(),
            valid_to: f.validTo?.toISOString() ?? null,
            embedding: pgArray(f.embedding),
            ord,
          })),
        ),
      ],
    );
  }

  // Effects on the targets, in decision order (a later fact may supersede an earlier one of this batch).
  const superseded: WriteOutcome['superseded'] = [];
  for (const f of plan.facts) {
    if (!f.targetId) continue;
    if (f.action === 'SUPERSEDE') {
      // The judge saw the batch's facts side by side; when its target was already replaced by a
      // later fact of this batch, the new fact replaces the head of that chain instead.
      const [rows] = (await em.query(
        `WITH RECURSIVE chain(id, depth) AS (
           SELECT $1::uuid, 0
           UNION ALL
           SELECT f.superseded_by, c.depth + 1 FROM chain c JOIN silver.facts f ON f.id = c.id
            WHERE f.superseded_by IS NOT NULL AND f.superseded_by <> $3 AND c.depth < 100
         )
         UPDATE silver.facts SET valid_to = GREATEST(valid_from, $2::timestamptz), superseded_by = $3
          WHERE id = (SELECT id FROM chain ORDER BY depth DESC LIMIT 1) AND valid_to IS NULL AND retired_at IS NULL
          RETURNING id`,
        [f.targetId, f.validFrom, f.id],
      )) as [Array<{ id: string }>, number];
      if (rows[0]) superseded.push({ oldId: rows[0].id, newId: f.id });
    } else if (f.action === 'UPDATE') {
      const rows: unknown[] = await em.query(
        `UPDATE silver.facts SET retired_at = now(), superseded_by = $2 WHERE id = $1 AND retired_at IS NULL RETURNING id`,
        [f.targetId, f.id],
      );
      if ((Array.isArray(rows[0]) ? (rows[0] as unknown[]) : rows).length > 0) superseded.push({ oldId: f.targetId, newId: f.id });
    }
  }
  const corroborated = plan.facts.filter((f) => f.action === 'SKIP' && f.targetId);
  if (corroborated.length > 0) {
    // One more source: the same +0.05 the scoring rule gives each corroboration.
    await em.query(
      `UPDATE silver.facts f SET confidence = LEAST(0.99, f.confidence + 0.05 * x.n), importance = LEAST(1, f.importance + 0.05 * x.n)
         FROM (SELECT t AS id, count(*) AS n FROM unnest($1::uuid[]) t GROUP BY t) x WHERE f.id = x.id`,
      [corroborated.map((f) => f.targetId)],
    );
  }

  const sources = plan.facts.flatMap((f) => {
    const factId = f.action === 'SKIP' ? f.targetId : f.id;
    return factId ? f.sources.map((s) => ({ fact_id: factId, event_id: s.eventId, span_start: s.start, span_end: s.end, quote: s.quote })) : [];
  });
  if (sources.length > 0) {
    await em.query(
      `INSERT INTO silver.fact_sources (fact_id, event_id, span_start, span_end, quote)
       SELECT x.fact_id, x.event_id, x.span_start, x.span_end, x.quote FROM jsonb_to_recordset($1::jsonb) AS x(fact_id uuid, event_id uuid, span_start int, span_end int, quote text)
       ON CONFLICT DO NOTHING`,
      [JSON.stringify(sources)],
    );
  }

  if (plan.facts.length > 0) {
    await em.query(
      `INSERT INTO silver.judge_decisions (namespace, derivation_run_id, fact_id, statement, action, target_fact_id, reason, candidates, judge_model)
       SELECT $1, $2, x.fact_id, x.statement, x.action, x.target_fact_id, x.reason, x.candidates, $3
         FROM jsonb_to_recordset($4::jsonb) AS x(fact_id uuid, statement text, action text, target_fact_id uuid, reason text, candidates jsonb, ord int)
        ORDER BY x.ord`,
      [
        ns,
        runId,
        plan.models.judge,
        JSON.stringify(
          plan.facts.map((f, ord) => ({
            fact_id: f.action === 'SKIP' ? null : f.id,
            statement: f.statement,
            action: f.action,
            target_fact_id: f.targetId,
            reason: f.reason,
            candidates: f.candidates.map((c) => ({ id: c.id, statement: c.statement, similarity: Math.round(c.similarity * 1000) / 1000 })),
            ord,
          })),
        ),
      ],
    );
  }

  await writeRelationships(em, plan, runId);

  const outbox = [
    ...plan.entities.filter((e) => e.isNew || e.aliasesChanged).map((e) => ({ type: 'entity', id: e.id, op: 'upsert' })),
    ...stored.map((f) => ({ type: 'fact', id: f.id, op: 'upsert' })),
    ...superseded.map((s) => ({ type: 'fact', id: s.oldId, op: 'upsert' })),
    // A corroborated fact gained a source and confidence: the graph needs its new DERIVED_FROM edge.
    ...[...new Set(corroborated.map((f) => f.targetId as string))].map((id) => ({ type: 'fact', id, op: 'upsert' })),
  ];
  if (outbox.length > 0) {
    await em.query(
      `INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload)
       SELECT $1, x.type, x.id, x.op, jsonb_build_object('id', x.id, 'runId', $2::text) FROM jsonb_to_recordset($3::jsonb) AS x(type text, id text, op text, ord int) ORDER BY x.ord`,
      [ns, runId, JSON.stringify(outbox.map((o, ord) => ({ ...o, ord })))],
    );
  }

  await em.query(`UPDATE silver.dead_letters SET resolved_at = now(), updated_at = now() WHERE event_id = ANY($1::uuid[]) AND resolved_at IS NULL`, [
    plan.eventIds,
  ]);

  const added = stored.map((f) => f.id);
  for (let i = 0; i < Math.max(added.length, superseded.length); i += NOTIFY_CHUNK) {
    const payload = {
      namespace: ns,
      added: added.slice(i, i + NOTIFY_CHUNK),
      superseded: superseded.slice(i, i + NOTIFY_CHUNK).map((s) => [s.oldId, s.newId]),
    };
    await em.query(`SELECT pg_notify('medallion_facts', $1)`, [JSON.stringify(payload)]);
  }
  return { runId, added, superseded };
}

async function writeRelationships(em: EntityManager, plan: DerivationPlan, runId: string): Promise<void> {
  if (plan.relationships.length === 0) return;
  // An identical live relationship gains sources instead of a twin.
  const rows: Array<{ planned: string; id: string }> = await em.query(
    `WITH x AS (
       SELECT * FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, type text, source_entity_id uuid, target_entity_id uuid, confidence real, valid_from timestamptz, ord int)
     ), existing AS (
       SELECT DISTINCT ON (x.id) x.id AS planned, r.id FROM x JOIN silver.relationships r
         ON r.namespace = $1 AND r.type = x.type AND r.source_entity_id = x.source_entity_id AND r.target_entity_id = x.target_entity_id
        AND r.retired_at IS NULL AND r.valid_to IS NULL
     ), fresh AS (
       SELECT DISTINCT ON (x.type, x.source_entity_id, x.target_entity_id) x.* FROM x WHERE x.id NOT IN (SELECT planned FROM existing) ORDER BY x.type, x.source_entity_id, x.target_entity_id, x.ord
     ), ins AS (
       INSERT INTO silver.relationships (id, namespace, type, source_entity_id, target_entity_id, confidence, valid_from, extraction_model, derivation_run_id)
       SELECT id, $1, type, source_entity_id, target_entity_id, confidence, valid_from, $3, $4 FROM fresh RETURNING id, type, source_entity_id, target_entity_id
     )
     SELECT planned, id FROM existing
     UNION ALL
     SELECT x.id AS planned, ins.id FROM x JOIN ins ON ins.type = x.type AND ins.source_entity_id = x.source_entity_id AND ins.target_entity_id = x.target_entity_id`,
    [
      plan.namespace,
      JSON.stringify(
        plan.relationships.map((r, ord) => ({
          id: r.id,
          type: r.type,
          source_entity_id: r.sourceEntityId,
          target_entity_id: r.targetEntityId,
          confidence: r.confidence,
          valid_from: r.validFrom.toISOString(),
          ord,
        })),
      ),
      plan.models.extraction,
      runId,
    ],
  );
  const target = new Map(rows.map((r) => [r.planned, r.id]));
  const sources = plan.relationships.flatMap((r) =>
    r.sources.map((s) => ({ relationship_id: target.get(r.id), event_id: s.eventId, span_start: s.start, span_end: s.end, quote: s.quote })),
  );
  await em.query(
    `INSERT INTO silver.relationship_sources (relationship_id, event_id, span_start, span_end, quote)
     SELECT x.relationship_id, x.event_id, x.span_start, x.span_end, x.quote FROM jsonb_to_recordset($1::jsonb) AS x(relationship_id uuid, event_id uuid, span_start int, span_end int, quote text)
     WHERE x.relationship_id IS NOT NULL
     ON CONFLICT DO NOTHING`,
    [JSON.stringify(sources)],
  );
  await em.query(
    `INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload)
     SELECT $1, 'relationship', id::text, 'upsert', jsonb_build_object('id', id) FROM unnest($2::uuid[]) AS id`,
    [plan.namespace, [...new Set(target.values())]],
  );
}
