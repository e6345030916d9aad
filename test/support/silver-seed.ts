import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { nameKey } from '../../src/silver/candidate.repository';
import { anEvent } from '../builders/event-input';
import { gqlOk, TestApp } from './test-app';

export interface SeedEntity {
  key: string;
  name: string;
  type: string;
  aliases?: string[];
}

/** One mention: an event in a conversation with a fact about the entity at this confidence. */
export interface SeedMention {
  entity: string;
  conversation: string;
  confidence?: number;
}

export interface SeedRelationship {
  type: string;
  source: string;
  target: string;
  conversation: string;
  confidence?: number;
}

export interface SeededSilver {
  /** Seed key → Silver entity id. */
  ids: Record<string, string>;
  eventIds: string[];
}

/**
 * Writes a Silver state the way a derivation leaves it: Bronze events through the real ingest
 * mutation (content "ok", which no extractor reads anything from), then one derivation run,
 * the entities, one fact per mention resting on its event, and relationships with sources.
 */
export async function seedSilver(
  t: TestApp,
  namespace: string,
  spec: { entities: SeedEntity[]; mentions: SeedMention[]; relationships?: SeedRelationship[] },
  token = t.adminToken,
): Promise<SeededSilver> {
  const rels = spec.relationships ?? [];
  const inputs = [...spec.mentions.map((m) => m.conversation), ...rels.map((r) => r.conversation)].map((c) =>
    anEvent(namespace).inConversation(c).by('USER').saying('ok').build(),
  );
  const res = await gqlOk<{ ingestEvents: Array<{ event: { id: string } }> }>(
    t.url,
    token,
    `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { event { id } } }`,
    { input: inputs },
  );
  const eventIds = res.ingestEvents.map((r) => r.event.id);
  const ids: Record<string, string> = Object.fromEntries(spec.entities.map((e) => [e.key, randomUUID()]));
  const db = new Client({ connectionString: t.databaseUrl });
  await db.connect();
  try {
    await db.query('BEGIN');
    const run = randomUUID();
    await db.query(
      `INSERT INTO silver.derivation_runs (id, namespace, kind, extraction_model, judge_model, embedding_model, worker_id, event_count)
       VALUES ($1, $2, 'incremental', 'seed', 'seed', 'seed', 'seed', $3)`,
      [run, namespace, eventIds.length],
    );
    for (const [i, e] of spec.entities.entries()) {
      await db.query(
        `INSERT INTO silver.entities (id, namespace, type, name, name_key, aliases, alias_keys, derivation_run_id, recorded_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + make_interval(secs => $9))`,
        [ids[e.key], namespace, e.type, e.name, nameKey(e.name), e.aliases ?? [], (e.aliases ?? []).map(nameKey), run, i / 1000],
      );
    }
    for (const [i, m] of spec.mentions.entries()) {
      const fact = randomUUID();
      await db.query(
        `INSERT INTO silver.facts (id, namespace, statement, fact_type, subject_entity_id, confidence, importance, valid_from, extraction_model, derivation_run_id)
         VALUES ($1, $2, $3, 'attribute', $4, $5, 0.5, now(), 'seed', $6)`,
        [fact, namespace, `statement ${i} about ${m.entity}`, ids[m.entity], m.confidence ?? 0.9, run],
      );
      await db.query(`INSERT INTO silver.fact_sources (fact_id, event_id, span_start, span_end, quote) VALUES ($1, $2, 0, 2, 'ok')`, [fact, eventIds[i]]);
    }
    for (const [j, r] of rels.entries()) {
      const rel = randomUUID();
      await db.query(
        `INSERT INTO silver.relationships (id, namespace, type, source_entity_id, target_entity_id, confidence, valid_from, extraction_model, derivation_run_id)
         VALUES ($1, $2, $3, $4, $5, $6, '2026-01-01T00:00:00Z', 'seed', $7)`,
        [rel, namespace, r.type, ids[r.source], ids[r.target], r.confidence ?? 0.9, run],
      );
      await db.query(`INSERT INTO silver.relationship_sources (relationship_id, event_id, span_start, span_end, quote) VALUES ($1, $2, 0, 2, 'ok')`, [
        rel,
        eventIds[spec.mentions.length + j],
      ]);
    }
    await projectNamespace(db, namespace);
    await db.query('COMMIT');
  } finally {
    await db.end();
  }
  return { ids, eventIds };
}

/**
 * What a Silver rebuild leaves: every live row of the namespace retired and re-created with new
 * ids and the same content (the same extractor reads the same events the same way), each new
 * fact linked to the one it replaces in silver.fact_lineage.
 */
export async function reDeriveSilver(t: TestApp, namespace: string): Promise<void> {
  const db = new Client({ connectionString: t.databaseUrl });
  await db.connect();
  try {
    await db.query('BEGIN');
    const run = randomUUID();
    await db.query(
      `INSERT INTO silver.derivation_runs (id, namespace, kind, extraction_model, judge_model, embedding_model, worker_id, event_count)
       VALUES ($1, $2, 'rebuild', 'seed', 'seed', 'seed', 'seed', 0)`,
      [run, namespace],
    );
    await db.query(
      `CREATE TEMP TABLE remap ON COMMIT DROP AS SELECT id AS old_id, gen_random_uuid() AS new_id FROM silver.entities WHERE namespace = $1 AND retired_at IS NULL`,
      [namespace],
    );
    await db.query(
      `CREATE TEMP TABLE fremap ON COMMIT DROP AS SELECT id AS old_id, gen_random_uuid() AS new_id FROM silver.facts WHERE namespace = $1 AND retired_at IS NULL`,
      [namespace],
    );
    await db.query(
      `CREATE TEMP TABLE rremap ON COMMIT DROP AS SELECT id AS old_id, gen_random_uuid() AS new_id FROM silver.relationships WHERE namespace = $1 AND retired_at IS NULL`,
      [namespace],
    );
    for (const t2 of ['facts', 'relationships', 'entities'])
      await db.query(`UPDATE silver.${t2} SET retired_at = now() WHERE namespace = $1 AND retired_at IS NULL`, [namespace]);
    // The partial unique index on live names allows the re-created rows now that the old ones are retired.
    await db.query(
      `INSERT INTO silver.entities (id, namespace, type, name, name_key, aliases, alias_keys, derivation_run_id, recorded_at)
       SELECT r.new_id, e.namespace, e.type, e.name, e.name_key, e.aliases, e.alias_keys, $1, e.recorded_at + interval '1 hour'
         FROM silver.entities e JOIN remap r ON r.old_id = e.id`,
      [run],
    );
    await db.query(
      `INSERT INTO silver.facts (id, namespace, statement, fact_type, subject_entity_id, predicate, object_value, is_negation, confidence, importance,
                                 valid_from, valid_to, extraction_model, derivation_run_id)
       SELECT fr.new_id, f.namespace, f.statement, f.fact_type, r.new_id, f.predicate, f.object_value, f.is_negation, f.confidence, f.importance,
              f.valid_from, f.valid_to, f.extraction_model, $1
         FROM silver.facts f JOIN fremap fr ON fr.old_id = f.id LEFT JOIN remap r ON r.old_id = f.subject_entity_id`,
      [run],
    );
    await db.query(
      `UPDATE silver.facts n SET superseded_by = s.new_id FROM fremap fr, silver.facts o, fremap s
        WHERE n.id = fr.new_id AND o.id = fr.old_id AND s.old_id = o.superseded_by`,
    );
    // The lineage a rebuild's derivation writes: each re-created fact descends from the one it replaces.
    await db.query(
      `INSERT INTO silver.fact_lineage (old_fact_id, new_fact_id, namespace, derivation_run_id, shared_events, similarity)
       SELECT old_id, new_id, $1, $2, 1, 1 FROM fremap`,
      [namespace, run],
    );
    await db.query(
      `INSERT INTO silver.fact_sources (fact_id, event_id, span_start, span_end, quote)
       SELECT fr.new_id, s.event_id, s.span_start, s.span_end, s.quote FROM silver.fact_sources s JOIN fremap fr ON fr.old_id = s.fact_id`,
    );
    await db.query(
      `INSERT INTO silver.relationships (id, namespace, type, source_entity_id, target_entity_id, confidence, valid_from, extraction_model, derivation_run_id)
       SELECT rr.new_id, x.namespace, x.type, a.new_id, b.new_id, x.confidence, x.valid_from, x.extraction_model, $1
         FROM silver.relationships x JOIN rremap rr ON rr.old_id = x.id JOIN remap a ON a.old_id = x.source_entity_id JOIN remap b ON b.old_id = x.target_entity_id`,
      [run],
    );
    await db.query(
      `INSERT INTO silver.relationship_sources (relationship_id, event_id, span_start, span_end, quote)
       SELECT rr.new_id, s.event_id, s.span_start, s.span_end, s.quote FROM silver.relationship_sources s JOIN rremap rr ON rr.old_id = s.relationship_id`,
    );
    await projectNamespace(db, namespace);
    await db.query('COMMIT');
  } finally {
    await db.end();
  }
}

/** Outbox rows for every Silver row of the namespace, as the derivation's write transaction adds them. */
async function projectNamespace(db: Client, namespace: string): Promise<void> {
  for (const [type, table] of [
    ['entity', 'entities'],
    ['fact', 'facts'],
    ['relationship', 'relationships'],
  ] as const) {
    await db.query(
      `INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload)
       SELECT $1, $2::text, id::text, 'upsert', jsonb_build_object('id', id) FROM silver.${table} WHERE namespace = $1`,
      [namespace, type],
    );
  }
}
