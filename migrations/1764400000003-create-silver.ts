import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Silver: facts with two clocks (valid_from/valid_to: world time; recorded_at/retired_at: system
 * time), their sources (event + span), entities with aliases, relationships, the judge's
 * decisions, dead letters, derivation runs; plus jobs and derivation leases in ops.
 * No foreign keys point into the partitioned bronze.events (STACK.md trap 4): event ids are
 * checked by the writer, which reads them from Bronze in the same transaction.
 */
export class CreateSilver1764400000003 implements MigrationInterface {
  name = 'CreateSilver1764400000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await q.query(`
      CREATE TABLE ops.jobs (
        id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        kind            text NOT NULL,
        namespace       text,
        params          jsonb NOT NULL DEFAULT '{}',
        reason          text NOT NULL,
        status          text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
        progress_done   integer NOT NULL DEFAULT 0,
        progress_total  integer,
        message         text,
        error           text,
        created_by      uuid,
        created_at      timestamptz NOT NULL DEFAULT now(),
        started_at      timestamptz,
        finished_at     timestamptz,
        locked_by       text,
        locked_until    timestamptz
      )`);
    await q.query(`CREATE INDEX jobs_queued_idx ON ops.jobs (created_at) WHERE status IN ('queued', 'running')`);
    await q.query(`
      CREATE TABLE ops.derivation_leases (
        namespace    text PRIMARY KEY,
        worker_id    text NOT NULL,
        generation   bigint NOT NULL,
        lease_until  timestamptz NOT NULL
      )`);
    // Rebuild jobs re-queue events with their job id, so the job can count its progress.
    await q.query(`ALTER TABLE ops.derivation_queue ADD COLUMN job_id uuid`);

    await q.query(`
      CREATE TABLE silver.derivation_runs (
        id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        namespace         text NOT NULL,
        kind              text NOT NULL CHECK (kind IN ('incremental', 'rebuild')),
        job_id            uuid,
        extraction_model  text NOT NULL,
        judge_model       text NOT NULL,
        embedding_model   text NOT NULL,
        worker_id         text NOT NULL,
        event_count       integer NOT NULL,
        fact_count        integer NOT NULL DEFAULT 0,
        model_calls       integer NOT NULL DEFAULT 0,
        gate_notes        jsonb NOT NULL DEFAULT '[]',
        created_at        timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE silver.entities (
        id                 uuid PRIMARY KEY,
        namespace          text NOT NULL,
        type               text NOT NULL,
        name               text NOT NULL,
        name_key           text NOT NULL,
        aliases            text[] NOT NULL DEFAULT '{}',
        alias_keys         text[] NOT NULL DEFAULT '{}',
        recorded_at        timestamptz NOT NULL DEFAULT now(),
        retired_at         timestamptz,
        derivation_run_id  uuid NOT NULL REFERENCES silver.derivation_runs(id)
      )`);
    // One live entity per (namespace, type, name); retired ones (after a rebuild) stay for history.
    await q.query(`CREATE UNIQUE INDEX entities_live_name_idx ON silver.entities (namespace, type, name_key) WHERE retired_at IS NULL`);
    await q.query(`CREATE INDEX entities_alias_keys_idx ON silver.entities USING gin (alias_keys)`);
    await q.query(`CREATE INDEX entities_ns_idx ON silver.entities (namespace, recorded_at, id)`);

    await q.query(`
      CREATE TABLE silver.facts (
        id                 uuid PRIMARY KEY,
        namespace          text NOT NULL,
        statement          text NOT NULL,
        fact_type          text NOT NULL,
        subject_entity_id  uuid REFERENCES silver.entities(id),
        predicate          text,
        object_value       text,
        object_entity_id   uuid REFERENCES silver.entities(id),
        is_negation        boolean NOT NULL DEFAULT false,
        confidence         real NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
        importance         real NOT NULL CHECK (importance >= 0 AND importance <= 1),
        valid_from         timestamptz NOT NULL,
        valid_to           timestamptz,
        recorded_at        timestamptz NOT NULL DEFAULT now(),
        retired_at         timestamptz,
        superseded_by      uuid REFERENCES silver.facts(id),
        extraction_model   text NOT NULL,
        derivation_run_id  uuid NOT NULL REFERENCES silver.derivation_runs(id),
        embedding          real[],
        embedding_model    text,
        CHECK (valid_to IS NULL OR valid_to >= valid_from)
      )`);
    await q.query(`CREATE INDEX facts_ns_idx ON silver.facts (namespace, recorded_at, id)`);
    await q.query(
      `CREATE INDEX facts_current_subject_idx ON silver.facts (namespace, subject_entity_id, predicate) WHERE retired_at IS NULL AND valid_to IS NULL`,
    );
    await q.query(`CREATE INDEX facts_statement_trgm_idx ON silver.facts USING gin (statement gin_trgm_ops)`);
    await q.query(`CREATE INDEX facts_superseded_by_idx ON silver.facts (superseded_by) WHERE superseded_by IS NOT NULL`);
    await q.query(`CREATE INDEX facts_run_idx ON silver.facts (derivation_run_id)`);

    await q.query(`
      CREATE TABLE silver.fact_sources (
        fact_id     uuid NOT NULL REFERENCES silver.facts(id),
        event_id    uuid NOT NULL,
        span_start  integer,
        span_end    integer,
        quote       text,
        added_at    timestamptz NOT NULL DEFAULT now(),
        UNIQUE (fact_id, event_id, span_start, span_end)
      )`);
    await q.query(`CREATE INDEX fact_sources_event_idx ON silver.fact_sources (event_id)`);

    await q.query(`
      CREATE TABLE silver.relationships (
        id                 uuid PRIMARY KEY,
        namespace          text NOT NULL,
        type               text NOT NULL,
        source_entity_id   uuid NOT NULL REFERENCES silver.entities(id),
        target_entity_id   uuid NOT NULL REFERENCES silver.entities(id),
        confidence         real NOT NULL,
        valid_from         timestamptz NOT NULL,
        valid_to           timestamptz,
        recorded_at        timestamptz NOT NULL DEFAULT now(),
        retired_at         timestamptz,
        extraction_model   text NOT NULL,
        derivation_run_id  uuid NOT NULL REFERENCES silver.derivation_runs(id)
      )`);
    await q.query(`CREATE INDEX relationships_source_idx ON silver.relationships (source_entity_id) WHERE retired_at IS NULL`);
    await q.query(`CREATE INDEX relationships_target_idx ON silver.relationships (target_entity_id) WHERE retired_at IS NULL`);
    await q.query(`
      CREATE TABLE silver.relationship_sources (
        relationship_id  uuid NOT NULL REFERENCES silver.relationships(id),
        event_id         uuid NOT NULL,
        span_start       integer,
        span_end         integer,
        quote            text,
        UNIQUE (relationship_id, event_id, span_start, span_end)
      )`);
    await q.query(`CREATE INDEX relationship_sources_event_idx ON silver.relationship_sources (event_id)`);

    await q.query(`
      CREATE TABLE silver.judge_decisions (
        id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        namespace          text NOT NULL,
        derivation_run_id  uuid NOT NULL REFERENCES silver.derivation_runs(id),
        fact_id            uuid REFERENCES silver.facts(id),
        statement          text NOT NULL,
        action             text NOT NULL CHECK (action IN ('ADD', 'UPDATE', 'SUPERSEDE', 'SKIP')),
        target_fact_id     uuid REFERENCES silver.facts(id),
        reason             text NOT NULL,
        candidates         jsonb NOT NULL,
        judge_model        text NOT NULL,
        decided_at         timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX judge_decisions_fact_idx ON silver.judge_decisions (fact_id)`);
    await q.query(`CREATE INDEX judge_decisions_target_idx ON silver.judge_decisions (target_fact_id)`);

    await q.query(`
      CREATE TABLE silver.dead_letters (
        id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        namespace      text NOT NULL,
        event_id       uuid NOT NULL,
        error_code     text NOT NULL,
        error          text NOT NULL,
        raw_output     text,
        attempts       integer NOT NULL,
        next_retry_at  timestamptz,
        created_at     timestamptz NOT NULL DEFAULT now(),
        updated_at     timestamptz NOT NULL DEFAULT now(),
        resolved_at    timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX dead_letters_open_idx ON silver.dead_letters (event_id) WHERE resolved_at IS NULL`);
    await q.query(`CREATE INDEX dead_letters_ns_idx ON silver.dead_letters (namespace) WHERE resolved_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['dead_letters', 'judge_decisions', 'relationship_sources', 'relationships', 'fact_sources', 'facts', 'entities', 'derivation_runs']) {
      await q.query(`DROP TABLE silver.${t}`);
    }
    await q.query(`ALTER TABLE ops.derivation_queue DROP COLUMN job_id`);
    await q.query(`DROP TABLE ops.derivation_leases`);
    await q.query(`DROP TABLE ops.jobs`);
  }
}
