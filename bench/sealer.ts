import { Client } from 'pg';
import { chainSealerStage } from '../src/gold/portability/chain-sealer';
import { ChainRepository } from '../src/gold/portability/chain.repository';
import { connectPostgres } from '../src/platform/postgres/data-source';
import { Sql } from '../src/platform/postgres/sql';
import { nowMs, report, round, summarize, withBenchApp } from './harness';

const SIZES = [10, 100, 1000];
const ROUNDS = 20;
/** Chained records per namespace (approval log lines: the cheapest kind to write in bulk). */
const PER_NAMESPACE = 5;

/**
 * The hash-chain sealer's idle round (docs/operations.md "Sealing") at 10, 100 and 1000
 * namespaces, everything sealed: statements and ms per round of the stage (after) and of the loop
 * it replaced (before: list every namespace with a UNION, then a transaction per namespace with a
 * lock, the head and four anti-joins), plus the ms of the one-statement listing a busy round runs.
 * Writes bench/results/sealer.json.
 */
export async function sealerBench(): Promise<void> {
  await withBenchApp(
    async ({ postgresUrl }) => {
      const owner = new Client({ connectionString: postgresUrl });
      await owner.connect();
      const { ds, counter } = await connectPostgres({ url: postgresUrl, poolSize: 2, applicationName: 'bench-sealer' });
      const repo = new ChainRepository(Sql.of(ds));
      const sql = Sql.of(ds);
      const stage = chainSealerStage(repo, { sweepMs: 3_600_000 });
      // The loop before this change, kept here to compare.
      const before = async () => {
        const namespaces = await sql.rows(
          `SELECT namespace FROM ops.watermarks UNION SELECT namespace FROM gold.overlays
           UNION SELECT namespace FROM access.approval_log UNION SELECT namespace FROM silver.derivation_runs`,
          [],
          (r) => String(r.namespace),
        );
        let sealed = 0;
        for (const ns of namespaces) sealed += await repo.seal(ns);
        return sealed > 0;
      };
      const measure = async (oneRound: () => Promise<boolean>) => {
        const ms: number[] = [];
        const statements: number[] = [];
        for (let i = 0; i < ROUNDS; i++) {
          counter.reset();
          const t0 = nowMs();
          if (await oneRound()) throw new Error('sealer bench: an idle round sealed something');
          ms.push(nowMs() - t0);
          statements.push(counter.count);
        }
        const s = summarize(ms);
        return {
          statementsMax: Math.max(...statements),
          statementsMean: round(statements.reduce((a, b) => a + b, 0) / ROUNDS),
          msP50: round(s.p50),
          msMean: round(s.mean),
        };
      };
      const rows: Array<Record<string, unknown>> = [];
      let have = 0;
      try {
        for (const n of SIZES) {
          const more = Array.from({ length: n - have }, (_, i) => `bench-sealer-${have + i}`);
          have = n;
          await owner.query(
            `INSERT INTO access.approval_log (request_id, namespace, step, principal_id, principal_name)
             SELECT gen_random_uuid(), ns, 'REQUESTED', 'bench', 'bench' FROM unnest($1::text[]) ns, generate_series(1, $2::int)`,
            [more, PER_NAMESPACE],
          );
          const s0 = nowMs();
          let busyRounds = 0;
          while (await stage.step()) busyRounds += 1;
          const sealSeconds = (nowMs() - s0) / 1000;
          await stage.step(); // the listing after the writers' bound settles, if due
          const after = await measure(() => stage.step());
          const old = await measure(before);
          const l0 = nowMs();
          for (let i = 0; i < 5; i++) await repo.unsealedNamespaces();
          const listingMs = round((nowMs() - l0) / 5);
          const row = {
            namespaces: n,
            records: n * PER_NAMESPACE,
            before: old,
            after,
            busyListingMs: listingMs,
            firstSealRounds: busyRounds,
            firstSealSeconds: round(sealSeconds),
          };
          rows.push(row);
          process.stdout.write(
            `sealer: ${n} namespaces: idle round before ${old.statementsMax} statements ${old.msP50} ms, after ${after.statementsMax} statement(s) ${after.msP50} ms; busy listing ${listingMs} ms\n`,
          );
        }
      } finally {
        await ds.destroy();
        await owner.end();
      }
      report('sealer', { rounds: ROUNDS, recordsPerNamespace: PER_NAMESPACE, sizes: rows });
    },
    { worker: false },
  );
}
