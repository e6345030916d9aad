import { Client } from 'pg';
import { randomUUID } from 'node:crypto';
import { LifecycleService } from '../src/gold/decay/lifecycle.service';
import { LifecycleRepository } from '../src/gold/decay/lifecycle.repository';
import { JobRepository } from '../src/platform/jobs/job.repository';
import { Sql } from '../src/platform/postgres/sql';
import { decaySettings } from '../src/common/config';
import { UsageRecorder } from '../src/silver/usage-recorder';
import { nowMs, report, round, withBenchApp } from './harness';

const DAY = 86_400_000;

/**
 * `npm run bench -- lifecycle`: decay, pruning and restoring over LIFECYCLE_FACTS synthetic facts
 * (default 100 000) in one namespace, each resting on its own Bronze event, a tenth of them used.
 * Prints and writes bench/results/lifecycle.json: ms per step, rows touched, and the plan of the
 * decay statement's per-fact lookups.
 */
export async function lifecycleBench(): Promise<void> {
  const n = Number(process.env.LIFECYCLE_FACTS ?? 100_000);
  await withBenchApp(
    async (env) => {
      const pg = new Client({ connectionString: env.postgresUrl });
      await pg.connect();
      try {
        // The synthetic rows are not in Neo4j, and the bench measures Postgres: the projector stays off.
        await env.app.stages.get('projector')?.stop();
        const ns = `bench-life/${randomUUID().slice(0, 8)}`;
        const runId = randomUUID();
        const load0 = nowMs();
        const month = new Date(Date.now() - 40 * DAY).toISOString().slice(0, 7) + '-01';
        await pg.query(`SELECT bronze.ensure_event_partition($1::date)`, [month]);
        await pg.query(
          `INSERT INTO silver.derivation_runs (id, namespace, kind, extraction_model, judge_model, embedding_model, worker_id, event_count)
           VALUES ($1, $2, 'incremental', 'bench', 'bench', 'bench', 'bench', $3)`,
          [runId, ns, n],
        );
        await pg.query(
          `WITH g AS (SELECT i, gen_random_uuid() AS eid, gen_random_uuid() AS fid, ($3::date + interval '1 day' + i * interval '1 second') AS at
                        FROM generate_series(1, $2::int) AS i),
                k AS (INSERT INTO bronze.event_keys (namespace, source, source_event_id, event_id, occurred_at, checksum)
                      SELECT $1, 'bench', 'e' || i, eid, at, md5(i::text) FROM g),
                e AS (INSERT INTO bronze.events (id, namespace, source, source_event_id, kind, content, checksum, occurred_at, ingested_at)
                      SELECT eid, $1, 'bench', 'e' || i, 'message', 'note ' || i, md5(i::text), at, at FROM g),
                f AS (INSERT INTO silver.facts (id, namespace, statement, fact_type, confidence, importance, valid_from, recorded_at, extraction_model, derivation_run_id)
                      SELECT fid, $1, 'The user noted thing number ' || i, 'other', 0.8, 0.2 + (i % 7) / 10.0, at, at, 'bench', $4 FROM g)
           INSERT INTO silver.fact_sources (fact_id, event_id, span_start, span_end, quote) SELECT fid, eid, 0, 4, 'note' FROM g`,
          [ns, n, month, runId],
        );
        await pg.query(`ANALYZE silver.facts; ANALYZE silver.fact_sources; ANALYZE bronze.event_keys`);
        const loadSeconds = round((nowMs() - load0) / 1000, 1);

        const sql = Sql.of(env.app.ds);
        const clock = { t: Date.now(), now: () => new Date(clock.t) };
        const settings = decaySettings(env.app.config);
        const lifecycle = new LifecycleService(sql, new LifecycleRepository(sql), new JobRepository(sql), settings, clock);
        const time = async <T>(fn: () => Promise<T>): Promise<{ ms: number; r: T }> => {
          const t0 = nowMs();
          const r = await fn();
          return { ms: round(nowMs() - t0, 0), r };
        };

        // A tenth of the facts used, in one flush.
        const usage = new UsageRecorder(sql, clock);
        const used = (
          await pg.query<{ id: string }>(`SELECT id::text FROM silver.facts WHERE namespace = $1 ORDER BY id LIMIT $2`, [ns, Math.ceil(n / 10)])
        ).rows.map((r) => r.id);
        const record0 = nowMs();
        usage.record(used);
        const recordMs = round(nowMs() - record0, 1);
        const flush = await time(() => usage.flush());

        clock.t += 60 * DAY;
        const decay1 = await time(() => lifecycle.decay(ns, null));
        const decay2 = await time(() => lifecycle.decay(ns, null));
        clock.t += 400 * DAY;
        const prune = await time(() => lifecycle.prune(ns, 0.1, 180, null));
        const restore = await time(() => sql.transaction((tx) => new LifecycleRepository(sql).restore(tx, ns, null, null)));
        const plan = (
          await pg.query<{ 'QUERY PLAN': string }>(
            `EXPLAIN SELECT (SELECT max(e.ingested_at) FROM silver.fact_sources s JOIN bronze.event_keys k ON k.event_id = s.event_id
                JOIN bronze.events e ON e.id = k.event_id AND e.occurred_at = k.occurred_at WHERE s.fact_id = f.id)
               FROM silver.facts f WHERE f.namespace = $1 AND f.retired_at IS NULL`,
            [ns],
          )
        ).rows.map((r) => r['QUERY PLAN']);
        await pg.query(`UPDATE ops.outbox SET processed_at = now() WHERE namespace = $1 AND processed_at IS NULL`, [ns]);

        report('lifecycle', {
          facts: n,
          loadSeconds,
          settings,
          usage: { facts: used.length, recordMs, flushMs: flush.ms, rows: flush.r },
          decay: {
            firstRunMs: decay1.ms,
            facts: decay1.r.facts,
            decayed: decay1.r.decayed,
            written: decay1.r.written,
            unchangedRerunMs: decay2.ms,
            rerunWritten: decay2.r.written,
          },
          prune: { ms: prune.ms, facts: prune.r.facts.length, goldEntities: prune.r.goldEntities.length, protectedByOverlay: prune.r.protectedByOverlay },
          restore: { ms: restore.ms, facts: restore.r.facts.length },
          lastSeenLookupPlan: plan,
        });
      } finally {
        await pg.end();
      }
    },
    { worker: false },
  );
}
