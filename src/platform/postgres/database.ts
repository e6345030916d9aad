import { DataSource } from 'typeorm';
import { assertPostgresVersion, connectPostgres, migrate, QueryCounter } from './data-source';
import { OccurredAtWindow, PartitionUpkeep, precreatePartitions, setPartitionWindow } from './partitions';
import { assertRuntimeRoleIsNarrow, grantRuntimePrivileges } from './runtime-role';

export interface DatabaseOptions {
  /** The owner (DATABASE_URL, or the embedded superuser): migrations, grants, the partition window. */
  ownerUrl: string;
  /** The runtime role (DATABASE_RUNTIME_URL, or the embedded `medallion_runtime`); unset: the owner. */
  runtimeUrl: string | undefined;
  window: OccurredAtWindow;
  /**
   * Runs on the owner's connection after migrations and grants, before it closes: writes only the
   * owner may make (the bootstrap admin token; the runtime role cannot insert tokens).
   */
  atStart?: (owner: DataSource) => Promise<void>;
  log: { info(msg: string, fields?: Record<string, unknown>): void; warn(msg: string): void; debug(msg: string): void };
}

export interface Database {
  /** Every runtime query goes through this pool, logged in as the runtime role. */
  readonly ds: DataSource;
  readonly counter: QueryCounter;
  /** `current_user` of `ds`. */
  readonly role: string;
  close(): Promise<void>;
}

/**
 * Start-up of the Postgres side. The owner connection is used only here, and closed before the
 * service takes requests: version check, migrations, the partition window, partitions for the
 * months ahead, and (when a runtime role is configured) a check that the role is narrow followed
 * by its grants. Everything afterwards runs as the runtime role, which owns nothing in Bronze and
 * holds SELECT there; events come through the SECURITY DEFINER ingest function, new months from
 * the SECURITY DEFINER partition maker.
 */
export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  const owner = await connectPostgres({ url: opts.ownerUrl, poolSize: 2, applicationName: 'medallion-owner', log: opts.log.debug });
  let runtime: { ds: DataSource; counter: QueryCounter } | undefined;
  try {
    await assertPostgresVersion(owner.ds);
    const applied = await migrate(owner.ds);
    if (applied.length > 0) opts.log.info('migrations applied', { applied });
    await setPartitionWindow(owner.ds, opts.window);
    await precreatePartitions(owner.ds, new Date(), opts.window);
    if (opts.runtimeUrl) {
      runtime = await connectPostgres({ url: opts.runtimeUrl, log: opts.log.debug });
      const role = await currentUser(runtime.ds);
      await assertRuntimeRoleIsNarrow(owner.ds, role);
      await grantRuntimePrivileges(owner.ds, role);
      await opts.atStart?.(owner.ds);
      await owner.ds.destroy();
    } else {
      runtime = owner;
      await opts.atStart?.(owner.ds);
      opts.log.warn(
        "DATABASE_RUNTIME_URL is not set and ALLOW_OWNER_RUNTIME=true: the service runs as DATABASE_URL's role, which owns Bronze and access; only triggers keep Bronze append-only and approvals can be written directly (see docs/bronze.md)",
      );
    }
  } catch (err) {
    await runtime?.ds.destroy().catch(() => undefined);
    if (owner.ds.isInitialized) await owner.ds.destroy().catch(() => undefined);
    throw err;
  }
  const ds = runtime.ds;
  const role = await currentUser(ds);
  opts.log.info('runtime queries run as this PostgreSQL role', { role });
  const upkeep = new PartitionUpkeep(ds, opts.window, opts.log.warn);
  upkeep.start();
  return {
    ds,
    counter: runtime.counter,
    role,
    async close() {
      upkeep.stop();
      await ds.destroy();
    },
  };
}

async function currentUser(ds: DataSource): Promise<string> {
  const rows: Array<{ role: string }> = await ds.query(`SELECT current_user AS role`);
  return rows[0]?.role ?? '';
}
