import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { AppConfig } from '../common/config';
import { AppLogger } from '../common/logger';
import { liveInstance } from '../platform/local-services/instance-state';
import { BackupError, loadBackupTables, readBackupHeader, writeBackup } from '../platform/postgres/backup';
import { connectPostgres, migrations } from '../platform/postgres/data-source';
import { openDatabase } from '../platform/postgres/database';
import { JobRepository } from '../platform/jobs/job.repository';
import { Sql } from '../platform/postgres/sql';
import { storesForCommand } from './instance';

/** Every schema the service owns; TypeORM's migrations table is not copied (the restore runs the migrations itself). */
const SCHEMAS = ['access', 'bronze', 'silver', 'gold', 'ops'] as const;
/** Loaded before Bronze's events: the restore makes the events' monthly partitions within this window. */
const PARTITION_WINDOW = 'bronze.partition_window';
const EVENTS = 'bronze.events';

const say = (line: string) => process.stderr.write(`${line}\n`);

async function ownerClient(url: string, name: string): Promise<Client> {
  const client = new Client({ connectionString: url, application_name: name });
  await client.connect();
  return client;
}

/**
 * `medallion backup --out FILE`: every table of the instance (Bronze, Silver, Gold, ops with jobs,
 * schedules and the hash chain, access with hashed tokens, grants and approvals) from one
 * snapshot, while the service runs (with the owner's connection; docs/operations.md "Backup and
 * restore"). PostgreSQL alone: Neo4j is a projection, rebuilt at restore.
 */
export async function runBackup(config: AppConfig, log: AppLogger, out: string): Promise<number> {
  const file = path.resolve(out);
  if (fs.existsSync(file)) throw new BackupError(`${file} exists: name a new file (a backup never overwrites one)`);
  const stores = await storesForCommand(config, log, 'backup', { neo4j: false });
  try {
    const client = await ownerClient(stores.postgresUrl, 'medallion-backup');
    try {
      const t0 = Date.now();
      const s = await writeBackup(client, { schemas: SCHEMAS, file, first: [PARTITION_WINDOW] });
      say(`${file}: ${s.tables} tables, ${s.rows} rows, ${s.bytes} bytes (gzip) in ${((Date.now() - t0) / 1000).toFixed(1)} s, one snapshot`);
    } finally {
      await client.end();
    }
  } finally {
    await stores.release();
  }
  return 0;
}

/**
 * `medallion restore FILE`: into the empty instance of DATA_DIR (not running; embedded stores are
 * started for the restore alone), with the owner's connection. Runs the backup's migrations,
 * loads every table with triggers off (`session_replication_role = replica`: Bronze's rows are
 * inserted as they were, and no trigger writes again what the backup holds), sets the sequences,
 * applies this version's later migrations and grants, and queues a rebuild of the whole graph,
 * which the service's worker runs at its next start.
 */
export async function runRestore(config: AppConfig, log: AppLogger, file: string): Promise<number> {
  const header = await readBackupHeader(file);
  const known = migrations.map((m) => m.name);
  const unknown = header.migrations.filter((m) => !known.includes(m));
  if (unknown.length > 0)
    throw new BackupError(`${file} was made by a newer version (its migrations include ${unknown[0]}): restore it with that version or a later one`);
  const live = liveInstance(config.dataDir);
  if (live)
    throw new BackupError(
      `the instance of ${config.dataDir} is running (\`medallion ${live.command}\`, pid ${live.pid}): a restore replaces its whole database, so stop it first (or restore into another DATA_DIR)`,
    );
  const stores = await storesForCommand(config, log, 'restore', { neo4j: false });
  try {
    const client = await ownerClient(stores.postgresUrl, 'medallion-restore');
    try {
      await requireEmpty(client, config);
      // The schema the rows were written under: the backup's migrations (or all, when it had every one of this version's).
      const theirs = migrations.filter((m) => header.migrations.includes(m.name));
      const applied = await appliedNames(client);
      if (applied.length === 0) {
        const { ds } = await connectPostgres({ url: stores.postgresUrl, poolSize: 1, migrations: theirs, applicationName: 'medallion-restore' });
        try {
          await ds.runMigrations({ transaction: 'each' });
        } finally {
          await ds.destroy();
        }
      } else if (applied.join() !== theirs.map((m) => m.name).join()) {
        throw new BackupError(
          `the database of ${config.dataDir} was migrated by another version than the backup's (${applied.length} migrations against the backup's ${theirs.length}): restore into a new DATA_DIR or an empty database`,
        );
      }
      const t0 = Date.now();
      const s = await loadAll(client, file, header.partitions[EVENTS] ?? [], header.sequences);
      say(`${file}: restored ${s.tables} tables, ${s.rows} rows in ${((Date.now() - t0) / 1000).toFixed(1)} s (backup of ${header.createdAt})`);
    } finally {
      await client.end();
    }
    // This version's later migrations, the partition window's months ahead and the runtime role's grants, as a start does.
    const database = await openDatabase({
      ownerUrl: stores.postgresUrl,
      runtimeUrl: stores.postgresRuntimeUrl,
      window: { maxPastDays: config.limits.occurredAtMaxPastDays, maxFutureDays: config.limits.occurredAtMaxFutureDays },
      log: { info: (m, fields) => log.info(fields ?? {}, m), warn: (m) => log.warn(m), debug: (m) => log.debug(m) },
    });
    try {
      const { job } = await new JobRepository(Sql.of(database.ds)).enqueue({
        kind: 'rebuild_graph',
        namespace: null,
        params: {},
        reason: `restored from ${path.basename(file)}`,
      });
      say(`the graph is rebuilt from PostgreSQL by the next start's worker (job ${job.id}); tokens, grants, schedules and approvals are the backup's`);
    } finally {
      await database.close();
    }
    setAsideAdminToken(config);
  } finally {
    await stores.release();
  }
  return 0;
}

async function appliedNames(client: Client): Promise<string[]> {
  const { rows } = await client.query<{ t: string | null }>(`SELECT to_regclass('public.typeorm_migrations')::text AS t`);
  if (!rows[0]?.t) return [];
  return (await client.query<{ name: string }>(`SELECT name FROM public.typeorm_migrations ORDER BY "timestamp", id`)).rows.map((r) => r.name);
}

/** An instance with events is not overwritten: a restore is for an empty one (a new DATA_DIR or an empty database). */
async function requireEmpty(client: Client, config: AppConfig): Promise<void> {
  const { rows } = await client.query<{ t: string | null }>(`SELECT to_regclass('bronze.events')::text AS t`);
  if (!rows[0]?.t) return;
  const events = await client.query(`SELECT 1 FROM bronze.events LIMIT 1`);
  if ((events.rowCount ?? 0) > 0)
    throw new BackupError(`the database of ${config.dataDir} holds events: a restore goes into an empty instance (a new DATA_DIR, or an empty DATABASE_URL)`);
}

async function loadAll(
  client: Client,
  file: string,
  eventPartitions: readonly string[],
  sequences: ReadonlyArray<{ name: string; lastValue: string; isCalled: boolean }>,
): Promise<{ tables: number; rows: number }> {
  await client.query('BEGIN');
  try {
    try {
      await client.query(`SET LOCAL session_replication_role = replica`);
    } catch (err) {
      throw new BackupError(
        `restore loads rows with triggers off (session_replication_role = replica), which this owner role may not set (${(err as Error).message}): ` +
          `run it as a superuser, or have one grant it once: GRANT SET ON PARAMETER session_replication_role TO <the DATABASE_URL role>`,
      );
    }
    const s = await loadBackupTables(client, file, async (table) => {
      // Rows a start or a migration wrote in the empty instance (its bootstrap admin, the default window) make way for the backup's.
      await client.query(
        `DELETE FROM ${table
          .split('.')
          .map((p) => `"${p}"`)
          .join('.')}`,
      );
      if (table === EVENTS) {
        for (const part of eventPartitions) {
          const m = /^events_(\d{4})_(\d{2})$/.exec(part);
          if (m) await client.query(`SELECT bronze.ensure_event_partition(make_date($1, $2, 1))`, [Number(m[1]), Number(m[2])]);
        }
      }
    });
    for (const seq of sequences) await client.query(`SELECT setval($1::regclass, $2::bigint, $3)`, [seq.name, seq.lastValue, seq.isCalled]);
    await client.query('COMMIT');
    return s;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** The empty instance's own bootstrap token no longer opens anything: the tokens are the backup's. */
function setAsideAdminToken(config: AppConfig): void {
  const file = path.join(config.dataDir, 'admin.token');
  if (!fs.existsSync(file)) return;
  fs.renameSync(file, `${file}.before-restore`);
  say(
    `${file} was this instance's own admin token, replaced by the backup's tokens: moved to ${file}.before-restore (use the source's admin token, or set ADMIN_TOKEN)`,
  );
}
