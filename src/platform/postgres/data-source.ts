import 'reflect-metadata';
import { Client } from 'pg';
import { DataSource, Logger, QueryRunner } from 'typeorm';
import { migrations } from '../../../migrations';

export { migrations };

/** Counts every SQL statement sent through the DataSource: the round trips tests and benches read. */
export class QueryCounter {
  count = 0;
  /** The statements counted since the last reset (their first 160 characters, at most 200 kept): what a round-trip test names when its count moves. */
  readonly statements: string[] = [];
  reset(): void {
    this.count = 0;
    this.statements.length = 0;
  }
  record(query: string): void {
    this.count += 1;
    if (this.statements.length < 200) this.statements.push(query.replace(/\s+/g, ' ').slice(0, 160));
  }
}

class CountingLogger implements Logger {
  constructor(
    private readonly counter: QueryCounter,
    private readonly onError: (msg: string) => void,
  ) {}
  logQuery(query: string, _parameters?: unknown[], _qr?: QueryRunner): void {
    this.counter.record(query);
  }
  logQueryError(error: string | Error, query: string): void {
    // Expected errors (unique violations handled by callers, triggers under test) are still worth a debug line.
    this.onError(`query failed: ${error instanceof Error ? error.message : error} :: ${query.slice(0, 200)}`);
  }
  logQuerySlow(): void {}
  logSchemaBuild(): void {}
  logMigration(message: string): void {
    this.onError(message);
  }
  log(): void {}
}

export interface PostgresOptions {
  url: string;
  poolSize?: number;
  counter?: QueryCounter;
  log?: (msg: string) => void;
  applicationName?: string;
  /** The migrations this DataSource runs (default: all of this version's); a restore runs a backup's own first. */
  migrations?: ReadonlyArray<(typeof migrations)[number]>;
}

/**
 * Settings of every session the service opens (the `options` startup parameter, so no extra round
 * trip): no JIT. A stock PostgreSQL has `jit = on` with `jit_above_cost` 100,000, and the planner's
 * cost of a statement that reads a partitioned table (Bronze's monthly partitions) or an unanalysed
 * one passes that bar while it runs in a millisecond: compiling it took longer than running it
 * (docs/search.md "Round trips and where the time goes"). The service's statements are short.
 */
export const SESSION_OPTIONS = '-c jit=off';

/** A TypeORM DataSource over `pg`, with the project's migrations registered (not run). */
export async function connectPostgres(opts: PostgresOptions): Promise<{ ds: DataSource; counter: QueryCounter }> {
  const counter = opts.counter ?? new QueryCounter();
  const ds = new DataSource({
    type: 'postgres',
    url: opts.url,
    migrations: [...(opts.migrations ?? migrations)],
    migrationsTableName: 'typeorm_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: ['query', 'error', 'migration'],
    logger: new CountingLogger(counter, opts.log ?? (() => undefined)),
    applicationName: opts.applicationName ?? 'medallion',
    extra: { max: opts.poolSize ?? 10, connectionTimeoutMillis: 10_000, options: SESSION_OPTIONS },
  });
  await ds.initialize();
  return { ds, counter };
}

/** Applies pending migrations; returns the names applied. */
export async function migrate(ds: DataSource): Promise<string[]> {
  const applied = await ds.runMigrations({ transaction: 'each' });
  return applied.map((m) => m.name);
}

/** Postgres reports server_version_num; we support 15 and newer. */
export async function assertPostgresVersion(ds: DataSource): Promise<number> {
  const rows: Array<{ v: string }> = await ds.query(`SELECT current_setting('server_version_num') AS v`);
  const version = Number(rows[0]?.v);
  if (!(version >= 150000)) {
    throw new Error(`PostgreSQL ${Math.floor(version / 10000)} is too old: version 15 or newer is required`);
  }
  return version;
}

/**
 * This version's migrations not yet applied to the database at `ownerUrl` (all of them when it
 * has none), read from TypeORM's table without running anything.
 */
export async function pendingMigrations(ownerUrl: string): Promise<string[]> {
  const client = new Client({ connectionString: ownerUrl, application_name: 'medallion-migrations-check' });
  await client.connect();
  try {
    const { rows } = await client.query<{ t: string | null }>(`SELECT to_regclass('public.typeorm_migrations')::text AS t`);
    const applied = new Set<string>();
    if (rows[0]?.t) for (const r of (await client.query<{ name: string }>(`SELECT name FROM public.typeorm_migrations`)).rows) applied.add(r.name);
    return migrations.map((m) => m.name).filter((name) => !applied.has(name));
  } finally {
    await client.end();
  }
}
