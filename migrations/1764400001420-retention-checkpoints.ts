import { randomBytes } from 'node:crypto';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { FunctionEdit, rewriteFunction } from './function-edit';

/**
 * A hash chain that survives Bronze retention (issue 43 item 4, docs/operations.md "Retention
 * checkpoints", docs/lifecycle.md). Dropping a monthly partition removed events whose chain links
 * stay, so `verify` failed at the first of them ("event … is missing") for every namespace with
 * events in the dropped months, for good. Now, for every namespace with events in a partition about
 * to be dropped, in the same transaction as the drop, `bronze.retain_events` records a checkpoint:
 *
 * - the namespace's chain head at the cut (`cut_seq`, `cut_hash`; 0 and 64 zeros for an empty chain),
 * - the partition, its range, how many of the namespace's events it held and how many of them were
 *   sealed, and the seqs of their links (`dropped_links`, a multirange),
 * - the approval and the executor,
 * - `signature`: HMAC-SHA-256 of all of that (`bronze.checkpoint_message`) under a key kept in
 *   `bronze.chain_key`, which only the owner reads (the runtime role has no privilege on it, nor
 *   EXECUTE on the signing function; `bronze.checkpoint_signature_ok(id)` tells it whether a stored
 *   signature is right). The key is drawn here, at migration time, from Node's CSPRNG.
 *
 * `verify` accepts a missing event whose link a valid checkpoint lists, and checks that the chain's
 * link at `cut_seq` still has the signed `cut_hash` (docs/operations.md). The checkpoint table is
 * append-only like the rest of Bronze; the runtime role may only read it.
 *
 * The same transaction queues an outbox row per dropped event: the projector finds the event gone
 * from Postgres and detaches it from the graph (graph/cypher/erased-nodes.ts), as for an erasure.
 * Facts and relationships derived from dropped events stay, current and searchable; their source
 * rows stay too, marked `event_dropped_at`, so a fact says so (`Fact.sourcesDroppedByRetention`)
 * and lists as `sources` only the events Bronze still holds.
 *
 * `bronze.retain_events_as(secret, before, approval)` is the runtime role's way in: the executor is
 * the secret's principal (admin on "*"), the EXECUTED line of the approval log is written in its
 * name, and the chains of every namespace with events before `before` are locked (the sealer's
 * per-namespace advisory lock, in namespace order) before any partition is, so a sealer round and
 * a retention never wait on each other in a cycle. The runtime role loses EXECUTE on
 * `bronze.retain_events(date, uuid, uuid)`, which names its executor by id.
 */
export class RetentionCheckpoints1764400001420 implements MigrationInterface {
  name = 'RetentionCheckpoints1764400001420';

  async up(q: QueryRunner): Promise<void> {
    // HMAC-SHA-256 with a 64-byte key (RFC 2104): the key XOR ipad and XOR opad, kept ready for sha256().
    const key = randomBytes(64);
    const pad = (byte: number) => Buffer.from(key.map((b) => b ^ byte));
    await q.query(`
      CREATE TABLE bronze.chain_key (
        singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        inner_pad   bytea NOT NULL CHECK (length(inner_pad) = 64),
        outer_pad   bytea NOT NULL CHECK (length(outer_pad) = 64),
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`INSERT INTO bronze.chain_key (inner_pad, outer_pad) VALUES ($1, $2)`, [pad(0x36), pad(0x5c)]);
    await q.query(`REVOKE ALL ON TABLE bronze.chain_key FROM PUBLIC`);
    await q.query(`CREATE TRIGGER chain_key_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON bronze.chain_key
                     FOR EACH STATEMENT EXECUTE FUNCTION bronze.reject_mutation()`);

    await q.query(`
      CREATE TABLE bronze.chain_checkpoints (
        id              bigserial PRIMARY KEY,
        namespace       text NOT NULL,
        partition_name  text NOT NULL,
        range_from      timestamptz NOT NULL,
        range_to        timestamptz NOT NULL,
        dropped_events  bigint NOT NULL CHECK (dropped_events > 0),
        sealed_events   bigint NOT NULL CHECK (sealed_events >= 0 AND sealed_events <= dropped_events),
        dropped_links   int8multirange NOT NULL,
        cut_seq         bigint NOT NULL CHECK (cut_seq >= 0),
        cut_hash        text NOT NULL CHECK (cut_hash ~ '^[0-9a-f]{64}$'),
        approval_id     uuid NOT NULL,
        executed_by     uuid NOT NULL,
        created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
        signature       text NOT NULL CHECK (signature ~ '^[0-9a-f]{64}$'),
        UNIQUE (namespace, partition_name, approval_id)
      )`);
    await q.query(`CREATE INDEX chain_checkpoints_ns_idx ON bronze.chain_checkpoints (namespace, id)`);
    for (const [name, op] of [
      ['no_update_delete', 'UPDATE OR DELETE'],
      ['no_truncate', 'TRUNCATE'],
    ] as const)
      await q.query(
        `CREATE TRIGGER chain_checkpoints_${name} BEFORE ${op} ON bronze.chain_checkpoints FOR EACH STATEMENT EXECUTE FUNCTION bronze.reject_mutation()`,
      );
    await q.query(`REVOKE ALL ON TABLE bronze.chain_checkpoints FROM PUBLIC`);

    // Facts and relationships keep sources whose events retention dropped, marked (Fact.sourcesDroppedByRetention).
    for (const t of ['silver.fact_sources', 'silver.relationship_sources']) await q.query(`ALTER TABLE ${t} ADD COLUMN event_dropped_at timestamptz`);

    await q.query(CHECKPOINT_MESSAGE);
    await q.query(CHAIN_MAC);
    await q.query(CHECKPOINT_SIGNATURE_OK);
    await q.query(RECORD_CHECKPOINTS);
    await rewriteFunction(q, RETAIN_EDIT);
    await q.query(RETAIN_EVENTS_AS);
    for (const sig of FUNCTIONS) await q.query(`REVOKE ALL ON FUNCTION ${sig} FROM PUBLIC`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION bronze.retain_events_as(text, date, uuid)`);
    await rewriteFunction(q, { ...RETAIN_EDIT, from: RETAIN_EDIT.to, to: RETAIN_EDIT.from });
    for (const sig of [...FUNCTIONS].reverse().filter((f) => !f.startsWith('bronze.retain_events_as'))) await q.query(`DROP FUNCTION ${sig}`);
    await q.query(`DROP TABLE bronze.chain_checkpoints`);
    await q.query(`DROP TABLE bronze.chain_key`);
    for (const t of ['silver.fact_sources', 'silver.relationship_sources']) await q.query(`ALTER TABLE ${t} DROP COLUMN event_dropped_at`);
  }
}

const FUNCTIONS = [
  'bronze.checkpoint_message(text, text, timestamptz, timestamptz, bigint, bigint, int8multirange, bigint, text, uuid, uuid)',
  'bronze.chain_mac(text)',
  'bronze.checkpoint_signature_ok(bigint)',
  'bronze.record_retention_checkpoints(text, uuid, uuid)',
  'bronze.retain_events_as(text, date, uuid)',
];

/** What a checkpoint's signature covers, as text (times in UTC with microseconds). */
const CHECKPOINT_MESSAGE = `
CREATE FUNCTION bronze.checkpoint_message(p_namespace text, p_partition text, p_from timestamptz, p_to timestamptz, p_dropped bigint,
                                          p_sealed bigint, p_links int8multirange, p_cut_seq bigint, p_cut_hash text, p_approval uuid,
                                          p_executor uuid) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT concat_ws('|', 'medallion-retention-checkpoint/v1', to_json(p_namespace)::text, p_partition,
                   to_char(p_from AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), to_char(p_to AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                   p_dropped::text, p_sealed::text, p_links::text, p_cut_seq::text, p_cut_hash, p_approval::text, p_executor::text)
$$`;

/** HMAC-SHA-256 (hex) under the instance's chain key. The owner's alone: whoever may call it may sign. */
const CHAIN_MAC = `
CREATE FUNCTION bronze.chain_mac(p_message text) RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT encode(sha256(k.outer_pad || sha256(k.inner_pad || convert_to(p_message, 'UTF8'))), 'hex') FROM bronze.chain_key k
$$`;

/** Whether a stored checkpoint's signature is the key's over its fields (the runtime role may ask; it cannot sign). */
const CHECKPOINT_SIGNATURE_OK = `
CREATE FUNCTION bronze.checkpoint_signature_ok(p_id bigint) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT c.signature = bronze.chain_mac(bronze.checkpoint_message(c.namespace, c.partition_name, c.range_from, c.range_to, c.dropped_events,
                                                                    c.sealed_events, c.dropped_links, c.cut_seq, c.cut_hash, c.approval_id, c.executed_by))
    FROM bronze.chain_checkpoints c WHERE c.id = p_id
$$`;

/**
 * For each namespace with events in partition \`p_partition\` (about to be dropped): the signed
 * checkpoint, under the namespace's chain lock, and an outbox row per event so the graph lets go of
 * it. Returns the number of checkpoints.
 */
const RECORD_CHECKPOINTS = `
CREATE FUNCTION bronze.record_retention_checkpoints(p_partition text, p_approval uuid, p_executor uuid) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  lo timestamptz;
  hi timestamptz;
  ns text;
  ids text[];
  head_seq bigint;
  head_hash text;
  links int8multirange;
  sealed bigint;
  n integer := 0;
BEGIN
  SELECT (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\) TO \\(''([^'']+)''\\)'))[1]::timestamptz,
         (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\) TO \\(''([^'']+)''\\)'))[2]::timestamptz
    INTO lo, hi
    FROM pg_class c WHERE c.oid = format('bronze.%I', p_partition)::regclass;
  FOR ns IN EXECUTE format('SELECT DISTINCT namespace FROM bronze.%I ORDER BY 1', p_partition) LOOP
    -- The sealer's lock: no link is appended to this chain until the drop commits.
    PERFORM pg_advisory_xact_lock(hashtextextended('ops.hash_chain:' || ns, 0));
    EXECUTE format('SELECT array_agg(id::text ORDER BY id) FROM bronze.%I WHERE namespace = $1', p_partition) INTO ids USING ns;
    SELECT h.seq, h.hash INTO head_seq, head_hash FROM ops.hash_chain h WHERE h.namespace = ns ORDER BY h.seq DESC LIMIT 1;
    SELECT coalesce(range_agg(int8range(h.seq, h.seq, '[]')), '{}'::int8multirange), count(*) INTO links, sealed
      FROM ops.hash_chain h WHERE h.namespace = ns AND h.kind = 'event' AND h.item_id = ANY (ids);
    INSERT INTO bronze.chain_checkpoints (namespace, partition_name, range_from, range_to, dropped_events, sealed_events, dropped_links,
                                          cut_seq, cut_hash, approval_id, executed_by, signature)
    VALUES (ns, p_partition, lo, hi, cardinality(ids), sealed, links, coalesce(head_seq, 0), coalesce(head_hash, repeat('0', 64)), p_approval, p_executor,
            bronze.chain_mac(bronze.checkpoint_message(ns, p_partition, lo, hi, cardinality(ids), sealed, links, coalesce(head_seq, 0),
                                                       coalesce(head_hash, repeat('0', 64)), p_approval, p_executor)));
    PERFORM ops.enqueue_outbox((
      SELECT jsonb_agg(jsonb_build_object('namespace', ns, 'type', 'event', 'id', x.id, 'payload', jsonb_build_object('id', x.id, 'retention', p_approval::text))
                       ORDER BY x.id)
        FROM unnest(ids) AS x(id)));
    UPDATE silver.fact_sources s SET event_dropped_at = clock_timestamp() WHERE s.event_id = ANY (ids::uuid[]) AND s.event_dropped_at IS NULL;
    UPDATE silver.relationship_sources s SET event_dropped_at = clock_timestamp() WHERE s.event_id = ANY (ids::uuid[]) AND s.event_dropped_at IS NULL;
    n := n + 1;
  END LOOP;
  RETURN n;
END $$`;

/** bronze.retain_events (migration 1764400001050) records the checkpoints of each partition just before dropping it. */
const RETAIN_EDIT: FunctionEdit = {
  signature: 'bronze.retain_events(date, uuid, uuid)',
  from: `    EXECUTE format('DROP TABLE bronze.%I', p.name);`,
  to: `    PERFORM bronze.record_retention_checkpoints(p.name, p_approval_id, p_executor);
    EXECUTE format('DROP TABLE bronze.%I', p.name);`,
};

const NAME = `CASE WHEN length(t.name) > 200 THEN left(t.name, 199) || '…' ELSE t.name END`;

/** Retention for the runtime role: the executor proven by its secret (admin on "*"), the chains locked first, the EXECUTED line in its name. */
const RETAIN_EVENTS_AS = `
CREATE FUNCTION bronze.retain_events_as(p_secret text, p_before date, p_approval_id uuid)
RETURNS TABLE (partition_name text, range_from timestamptz, range_to timestamptz, events bigint, per_namespace jsonb)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t access.tokens;
  ns text;
  dropped bigint;
BEGIN
  t := access.live_token(p_secret);
  IF t.id IS NULL OR NOT access.token_can(t.id, 'admin', '*') THEN
    RAISE EXCEPTION 'retain_events_as: the executing token lacks admin on *' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF p_before IS NOT NULL THEN
    FOR ns IN SELECT DISTINCT e.namespace FROM bronze.events e WHERE e.occurred_at < (p_before::timestamp AT TIME ZONE 'UTC') ORDER BY 1 LOOP
      PERFORM pg_advisory_xact_lock(hashtextextended('ops.hash_chain:' || ns, 0));
    END LOOP;
  END IF;
  RETURN QUERY SELECT r.partition_name, r.range_from, r.range_to, r.events, r.per_namespace FROM bronze.retain_events(p_before, p_approval_id, t.principal_id) r;
  GET DIAGNOSTICS dropped = ROW_COUNT;
  INSERT INTO access.approval_log (request_id, namespace, step, principal_id, principal_name, detail)
  VALUES (p_approval_id, '*', 'EXECUTED', t.principal_id::text, ${NAME},
          format('dropped %s Bronze partition(s) before %s; a signed chain checkpoint per namespace', dropped, to_char(p_before, 'YYYY-MM-DD')));
END $$`;
