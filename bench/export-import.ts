import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AuthContext } from '../src/access/auth-context';
import { EventSubmission } from '../src/bronze/event.types';
import { settled } from '../src/app/portability.command';
import { ChainRepository } from '../src/gold/portability/chain.repository';
import { exportNamespace, verifyExportFile, verifyNamespace } from '../src/gold/portability/export-file';
import { importExport } from '../src/gold/portability/import-file';
import { Sql } from '../src/platform/postgres/sql';
import { locomoEvents } from './derive-locomo';
import { locomoFile } from './locomo';
import { nowMs, report, round, withBenchApp } from './harness';

/**
 * Export → import round trip of one LoCoMo development conversation (issue 28): ingest it, let
 * the default models derive it, seal, export, verify the file, import into a new namespace, let
 * it derive again, and compare the facts. Prints lines, bytes, seconds and whether the facts are
 * equal; writes bench/results/export-import.json. BENCH_LOCOMO_SAMPLE picks the conversation (default: the first).
 */
export async function exportImport(): Promise<void> {
  const file = locomoFile();
  if (!fs.existsSync(file)) {
    process.stdout.write(`export-import: ${file} is absent (EVAL_DIR); skipped\n`);
    return;
  }
  const samples = JSON.parse(fs.readFileSync(file, 'utf8')) as Array<{ sample_id: string; conversation: Record<string, unknown> }>;
  const pick = process.env.BENCH_LOCOMO_SAMPLE;
  const sample = (pick ? samples.find((s) => s.sample_id === pick) : samples[0]) ?? samples[0];
  if (!sample) throw new Error('export-import: the LoCoMo file holds no conversation');
  const [[ns, events]] = [...locomoEvents([sample], 'bench-export')] as [[string, Array<Record<string, unknown>>]];
  const ns2 = `bench-import-${sample.sample_id}`;
  await withBenchApp(async ({ app, adminToken }) => {
    const sql = Sql.of(app.ds);
    const chain = new ChainRepository(sql);
    const admin = (await app.services.tokens.authenticate(`Bearer ${adminToken}`)) as AuthContext;
    const t0 = nowMs();
    for (let i = 0; i < events.length; i += 200) await app.services.ingest.ingestBatch(admin, events.slice(i, i + 200) as unknown as EventSubmission[]);
    await settled(sql, ns, 3_600_000);
    const deriveSeconds = (nowMs() - t0) / 1000;

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-export-bench-'));
    const out = path.join(dir, 'export.jsonl');
    const e0 = nowMs();
    const exported = await exportNamespace(chain, ns, out);
    const exportSeconds = (nowMs() - e0) / 1000;
    const v0 = nowMs();
    const fileCheck = await verifyExportFile(out);
    const verifyFileSeconds = (nowMs() - v0) / 1000;
    const l0 = nowMs();
    const liveCheck = await verifyNamespace(chain, ns);
    const verifyLiveSeconds = (nowMs() - l0) / 1000;

    const i0 = nowMs();
    const imported = await importExport(sql, app.repositories.events, out, {
      namespace: ns2,
      batchSize: 500,
      limits: app.config.limits,
      importer: { principalId: admin.requirePrincipal().principalId, name: admin.requirePrincipal().name },
      derived: () => settled(sql, ns2, 3_600_000),
    });
    const loadSeconds = (nowMs() - i0) / 1000;
    await settled(sql, ns2, 3_600_000);
    const importAndDeriveSeconds = (nowMs() - i0) / 1000;

    const factsOf = async (namespace: string) =>
      (
        await sql.rows(
          `SELECT statement, to_char(valid_from AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS vf,
                  coalesce(to_char(valid_to AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '') AS vt
             FROM silver.facts WHERE namespace = $1 AND retired_at IS NULL`,
          [namespace],
          (r) => `${String(r.statement)}|${String(r.vf)}|${String(r.vt)}`,
        )
      ).sort();
    const before = await factsOf(ns);
    const after = await factsOf(ns2);
    const missing = before.filter((f) => !after.includes(f));
    const extra = after.filter((f) => !before.includes(f));
    const bytes = fs.statSync(out).size;
    fs.rmSync(dir, { recursive: true, force: true });
    report('export-import', {
      conversation: sample.sample_id,
      events: events.length,
      firstDeriveSeconds: round(deriveSeconds, 1),
      export: { lines: exported.lines, bytes, seconds: round(exportSeconds, 2), linesPerSec: round(exported.lines / exportSeconds, 0) },
      verifyFile: { ok: fileCheck.ok, links: fileCheck.links, seconds: round(verifyFileSeconds, 2) },
      verifyLive: { ok: liveCheck.ok, links: liveCheck.links, seconds: round(verifyLiveSeconds, 2) },
      import: {
        lines: imported.lines,
        eventsCreated: imported.events.created,
        rejected: imported.rejected.length,
        loadSeconds: round(loadSeconds, 2),
        withDerivationSeconds: round(importAndDeriveSeconds, 1),
      },
      facts: {
        before: before.length,
        after: after.length,
        equal: missing.length === 0 && extra.length === 0,
        missing: missing.slice(0, 5),
        extra: extra.slice(0, 5),
      },
    });
  });
}
