import { SingleBar, Presets } from 'cli-progress';
import { AppConfig } from '../common/config';
import { AppLogger } from '../common/logger';
import { Sql } from '../platform/postgres/sql';
import { describeVerify } from '../gold/portability/chain';
import { ChainRepository } from '../gold/portability/chain.repository';
import { exportNamespace, noProgress, PortabilityError, Progress, verifyExportFile, verifyNamespace } from '../gold/portability/export-file';
import { describeImport, importExport } from '../gold/portability/import-file';
import { App, AppOptions, startApp, startStores } from './app';
import { resolveToken } from '../bronze/import.command';
import { Capability } from '../access/capability';

/** A progress bar on stderr, only when stderr is a terminal (off in pipes, logs and tests). */
export function progressBar(label: string, unit: string): Progress {
  if (!process.stderr.isTTY) return noProgress;
  const bar = new SingleBar(
    { format: `${label} |{bar}| {percentage}% | {value}/{total} ${unit}`, stream: process.stderr, hideCursor: true },
    Presets.shades_classic,
  );
  return { start: (total) => bar.start(total, 0), update: (n) => bar.update(n), stop: () => bar.stop() };
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
    const s = await exportNamespace(new ChainRepository(Sql.of(app.ds)), namespace, out ?? null, progressBar('export', 'links'));
    process.stderr.write(
      `${s.file}: ${s.lines} lines (${s.written} written by this run${s.resumedAfter > 0 ? `, resumed after link ${s.resumedAfter}` : ''}); chain head ${s.head ?? '(empty)'}\n`,
    );
    return 0;
  });
}

export interface ExportImportOptions {
  namespace: string;
  batchSize: string;
  timeout: string;
  /** Import a file whose hash chain does not verify, every event marked unverified. */
  unverified?: boolean;
  token?: string;
  tokenFile?: string;
}

/**
 * `medallion import FILE --namespace NS2`: runs this process's own worker so Silver and the graph
 * are derived before overlays are placed. The importing principal is the token's (MEDALLION_TOKEN,
 * --token-file, DATA_DIR/admin.token), which needs "admin" on NS2. Exit 3 when lines were rejected.
 */
export async function runImport(config: AppConfig, log: AppLogger, file: string, o: ExportImportOptions): Promise<number> {
  const size = Number(o.batchSize);
  if (!Number.isInteger(size) || size < 1 || size > config.limits.maxBatchSize)
    throw new PortabilityError(`--batch-size must be an integer between 1 and ${config.limits.maxBatchSize}`);
  const timeoutMs = Number(o.timeout) * 1000;
  if (!(timeoutMs > 0)) throw new PortabilityError('--timeout must be a positive number of seconds');
  const token = resolveToken(config, o);
  const namespace = o.namespace;
  return withApp(config, log, { api: false, worker: true }, async (app) => {
    const sql = Sql.of(app.ds);
    const auth = await app.services.tokens.authenticate(token);
    if (!auth.can(Capability.ADMIN, namespace))
      throw new PortabilityError(`the import's token needs "admin" on namespace "${namespace}" (it is recorded as the importer)`);
    const principal = auth.requirePrincipal();
    const summary = await importExport(
      sql,
      app.repositories.events,
      file,
      {
        namespace,
        batchSize: size,
        limits: config.limits,
        importer: { principalId: principal.principalId, name: principal.name },
        unverified: o.unverified === true,
        derived: () => settled(sql, namespace, timeoutMs),
      },
      progressBar('import', 'bytes'),
    );
    await settled(sql, namespace, timeoutMs);
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
