import { SingleBar, Presets } from 'cli-progress';
import { AppConfig } from '../common/config';
import { AppLogger } from '../common/logger';
import { Sql } from '../platform/postgres/sql';
import { describeVerify } from '../gold/portability/chain';
import { ChainRepository } from '../gold/portability/chain.repository';
import { exportNamespace, noProgress, PortabilityError, Progress, verifyExportFile, verifyNamespace } from '../gold/portability/export-file';
import { describeImport, importExport } from '../gold/portability/import-file';
import { DataSource } from 'typeorm';
import { EventRepository } from '../bronze/event.repository';
import { connectPostgres, pendingMigrations } from '../platform/postgres/data-source';
import { openDatabase } from '../platform/postgres/database';
import type { Neo4jConnection } from '../platform/neo4j/neo4j-client';
import { storesForCommand } from './instance';
import type * as AppModule from './app';
import { namespaceHash } from '../platform/telemetry/tracing';

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

/**
 * Runs `fn` on the runtime role's connection to DATA_DIR's PostgreSQL: the running service's, else
 * an embedded one started for this command alone (no Neo4j, no migrations, no models). A database
 * this version has not migrated is refused with what to do, not migrated behind the operator's back.
 */
async function withPostgres<T>(config: AppConfig, log: AppLogger, command: string, fn: (ds: DataSource) => Promise<T>): Promise<T> {
  const stores = await storesForCommand(config, log, command, { neo4j: false });
  try {
    if (!stores.service) await requireMigrated(stores.postgresUrl);
    const { ds } = await connectPostgres({ url: stores.postgresRuntimeUrl ?? stores.postgresUrl, poolSize: 2, applicationName: `medallion-${command}` });
    try {
      return await fn(ds);
    } finally {
      await ds.destroy();
    }
  } finally {
    await stores.release();
  }
}

/** Refuses a database whose schema is behind this version's migrations (or has none). */
async function requireMigrated(ownerUrl: string): Promise<void> {
  const pending = await pendingMigrations(ownerUrl);
  if (pending.length > 0)
    throw new PortabilityError(
      `the database has ${pending.length} migration(s) of this version still to apply (first: ${pending[0]}): start the service once (npm start) or run \`medallion migrate\`, then run this again`,
    );
}

/** `medallion migrate`: the owner's migrations and grants, on the running instance's database or on stores started for it. */
export async function runMigrate(config: AppConfig, log: AppLogger): Promise<number> {
  const stores = await storesForCommand(config, log, 'migrate', { neo4j: false });
  try {
    const database = await openDatabase({
      ownerUrl: stores.postgresUrl,
      runtimeUrl: stores.postgresRuntimeUrl,
      window: { maxPastDays: config.limits.occurredAtMaxPastDays, maxFutureDays: config.limits.occurredAtMaxFutureDays },
      log: { info: (m, fields) => log.info(fields ?? {}, m), warn: (m) => log.warn(m), debug: (m) => log.debug(m) },
    });
    await database.close();
    return 0;
  } finally {
    await stores.release();
  }
}

/** `medallion export --namespace NS [--out FILE]`: PostgreSQL only. */
export async function runExport(config: AppConfig, log: AppLogger, namespace: string, out: string | undefined): Promise<number> {
  return withPostgres(config, log, 'export', async (ds) => {
    const s = await logged(
      log,
      'export',
      namespace,
      () => exportNamespace(new ChainRepository(Sql.of(ds)), namespace, out ?? null, progressBar('export', 'links')),
      (r) => ({ lines: r.lines, written: r.written, resumedAfter: r.resumedAfter, head: r.head }),
    );
    process.stderr.write(
      `${s.file}: ${s.lines} lines (${s.written} written by this run${s.resumedAfter > 0 ? `, resumed after link ${s.resumedAfter}` : ''}); chain head ${s.head ?? '(empty)'}\n`,
    );
    return 0;
  });
}

/**
 * `medallion import FILE --namespace NS2`: Silver and the graph are derived before overlays are
 * placed, by the running service's worker, or (none running) by a worker this command runs
 * itself on stores it starts. Exit 3 when lines were rejected.
 */
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
  const load = async (ds: DataSource, events: EventRepository): Promise<number> => {
    const sql = Sql.of(ds);
    const summary = await logged(
      log,
      'import',
      namespace,
      async () => {
        const r = await importExport(
          sql,
          events,
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
  };
  const stores = await storesForCommand(config, log, 'import', { neo4j: true });
  try {
    if (stores.service) {
      const { ds } = await connectPostgres({ url: stores.postgresRuntimeUrl ?? stores.postgresUrl, poolSize: 2, applicationName: 'medallion-import' });
      try {
        return await load(ds, new EventRepository(ds));
      } finally {
        await ds.destroy();
      }
    }
    // No service: this process derives and projects what it imports (no API, no warm-up).
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the whole service loads only here
    const { startApp } = require('./app') as typeof AppModule;
    const app = await startApp(config, { ...stores, neo4j: stores.neo4j as Neo4jConnection }, { api: false, worker: true, warmUp: false }, log);
    try {
      return await load(app.ds, app.repositories.events);
    } finally {
      await app.stop();
    }
  } finally {
    await stores.release();
  }
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
  return withPostgres(config, log, 'verify', async (ds) => {
    const r = await verifyNamespace(new ChainRepository(Sql.of(ds)), namespace, progressBar('verify', 'links'));
    process.stdout.write(
      `${describeVerify(r, `namespace ${namespace}`)}${r.unsealed > 0 ? `; ${r.unsealed} record(s) not sealed yet (the worker's sealer covers them within seconds)` : ''}\n`,
    );
    return r.ok ? 0 : 4;
  });
}
