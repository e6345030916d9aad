import { SingleBar, Presets } from 'cli-progress';
import { AppConfig } from '../common/config';
import { AppLogger } from '../common/logger';
import { Sql } from '../platform/postgres/sql';
import { describeVerify } from '../gold/portability/chain';
import { ChainRepository } from '../gold/portability/chain.repository';
import { exportNamespace, noProgress, PortabilityError, Progress, verifyExportFile, verifyNamespace } from '../gold/portability/export-file';
import { describeImport, importExport } from '../gold/portability/import-file';
import { namespaceHash } from '../platform/telemetry/tracing';
import { App, AppOptions, startApp, startStores } from './app';

/** A progress bar on stderr, only when stderr is a terminal (off in pipes, logs and tests). */
export function progressBar(label: string, unit: string): Progress {
  if (!process.stderr.isTTY) return noProgress;
  const bar = new SingleBar(
    { format: `${label} |{bar}| {percentage}% | {value}/{total} ${unit}`, stream: process.stderr, hideCursor: true },
    Presets.shades_classic,
  );
  return { start: (total) => bar.start(total, 0), update: (n) => bar.update(n), stop: () => bar.stop() };
}

/**
 * One structured line when a portability run starts, one when it ends (with `done`'s counts and
 * its duration) or fails (with the error's message): ids and counts, never content, and the
 * namespace as its hash (`store`, as in traces: a namespace often names a person).
 */
export async function logged<T>(
  log: AppLogger,
  op: 'export' | 'import',
  namespace: string,
  run: () => Promise<T>,
  done: (result: T) => Record<string, unknown>,
): Promise<T> {
  const fields = { op, store: namespaceHash(namespace) };
  const t0 = Date.now();
  log.info(fields, `${op} started`);
  try {
    const result = await run();
    log.info({ ...fields, ...done(result), ms: Date.now() - t0 }, `${op} finished`);
    return result;
  } catch (err) {
    log.error({ ...fields, ms: Date.now() - t0, error: err instanceof Error ? err.message.slice(0, 300) : String(err) }, `${op} failed`);
    throw err;
  }
}

async function withApp<T>(config: AppConfig, log: AppLogger, opts: AppOptions, fn: (app: App) => Promise<T>): Promise<T> {
  const stores = await startStores(config, log);
  try {
    const app = await startApp(config, stores, opts, log);
    try {
      return await fn(app);
    } finally {
      await app.stop();
    }
  } finally {
    await stores.stop();
  }
}

/** `medallion export --namespace NS [--out FILE]`. */
export async function runExport(config: AppConfig, log: AppLogger, namespace: string, out: string | undefined): Promise<number> {
  return withApp(config, log, { api: false, worker: false }, async (app) => {
    const s = await logged(
      log,
      'export',
      namespace,
      () => exportNamespace(new ChainRepository(Sql.of(app.ds)), namespace, out ?? null, progressBar('export', 'links')),
      (r) => ({ lines: r.lines, written: r.written, resumedAfter: r.resumedAfter, head: r.head }),
    );
    process.stderr.write(
      `${s.file}: ${s.lines} lines (${s.written} written by this run${s.resumedAfter > 0 ? `, resumed after link ${s.resumedAfter}` : ''}); chain head ${s.head ?? '(empty)'}\n`,
    );
    return 0;
  });
}

/** `medallion import FILE --namespace NS2`: runs this process's own worker so Silver and the graph are derived before overlays are placed. Exit 3 when lines were rejected. */
export async function runImport(
  config: AppConfig,
  log: AppLogger,
  file: string,
  namespace: string,
  batchSize: string,
  timeoutSeconds: string,
): Promise<number> {
  const size = Number(batchSize);
  if (!Number.isInteger(size) || size < 1 || size > config.limits.maxBatchSize)
    throw new PortabilityError(`--batch-size must be an integer between 1 and ${config.limits.maxBatchSize}`);
  const timeoutMs = Number(timeoutSeconds) * 1000;
  if (!(timeoutMs > 0)) throw new PortabilityError('--timeout must be a positive number of seconds');
  return withApp(config, log, { api: false, worker: true }, async (app) => {
    const sql = Sql.of(app.ds);
    const summary = await logged(
      log,
      'import',
      namespace,
      async () => {
        const r = await importExport(
          sql,
          app.repositories.events,
          file,
          { namespace, batchSize: size, limits: config.limits, derived: () => settled(sql, namespace, timeoutMs) },
          progressBar('import', 'bytes'),
        );
        await settled(sql, namespace, timeoutMs);
        return r;
      },
      (r) => ({ lines: r.lines, events: r.events, overlays: r.overlays, approvalLog: r.approvalLog, rejected: r.rejected.length }),
    );
    process.stdout.write(`${describeImport(file, summary)}\n`);
    return summary.rejected.length > 0 ? 3 : 0;
  });
}

/** Resolves once the namespace has no pending derivation and no unprojected outbox row. */
export async function settled(sql: Sql, namespace: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const n = await sql.one(
      `SELECT (SELECT count(*) FROM ops.derivation_queue WHERE namespace = $1 AND status = 'pending')
            + (SELECT count(*) FROM ops.outbox WHERE namespace = $1 AND processed_at IS NULL) AS n`,
      [namespace],
      (r) => Number(r.n),
    );
    if (n === 0) return;
    if (Date.now() > until)
      throw new PortabilityError(
        `namespace ${namespace} is still deriving after ${timeoutMs / 1000} s; re-run the import (it skips what is stored) or raise --timeout`,
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** `medallion verify --namespace NS` or `--file EXPORT.jsonl`. Exit 4 when the chain is broken. */
export async function runVerify(config: AppConfig, log: AppLogger, o: { namespace?: string; file?: string }): Promise<number> {
  if ((o.namespace === undefined) === (o.file === undefined))
    throw new PortabilityError('give exactly one of --namespace NS (the live database) or --file EXPORT.jsonl');
  if (o.file) {
    const r = await verifyExportFile(o.file);
    process.stdout.write(`${describeVerify(r, `${o.file} (namespace ${r.namespace})`)}\n`);
    return r.ok ? 0 : 4;
  }
  const namespace = o.namespace as string;
  return withApp(config, log, { api: false, worker: false }, async (app) => {
    const r = await verifyNamespace(new ChainRepository(Sql.of(app.ds)), namespace, progressBar('verify', 'links'));
    process.stdout.write(
      `${describeVerify(r, `namespace ${namespace}`)}${r.unsealed > 0 ? `; ${r.unsealed} record(s) not sealed yet (the worker's sealer covers them within seconds)` : ''}\n`,
    );
    return r.ok ? 0 : 4;
  });
}
