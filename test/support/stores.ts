import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** What the global setup started (passed through the environment to test files). */
export interface TestStores {
  /** The owner (cluster superuser): migrations, test databases, raw SQL in tests. */
  postgresAdminUrl: string;
  /** The runtime role the service runs its queries as (same cluster; any database). */
  postgresRuntimeUrl: string;
  templateDatabase: string;
  neo4j: { uri: string; user: string; password: string };
}

export const STORES_ENV = 'MEDALLION_TEST_STORES';

export function testStores(): TestStores {
  const raw = process.env[STORES_ENV];
  if (!raw) throw new Error(`${STORES_ENV} is not set: run tests through jest (its global setup starts the stores)`);
  return JSON.parse(raw) as TestStores;
}

export function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

/** The runtime role's URL for the database of `ownerUrl` (roles are cluster-wide). */
export function runtimeUrlFor(ownerUrl: string): string {
  return withDatabase(testStores().postgresRuntimeUrl, new URL(ownerUrl).pathname.slice(1));
}

/**
 * A fresh database cloned from the migrated template (CREATE DATABASE … TEMPLATE copies the
 * objects with their owner and ACLs); dropped by the returned function. `url` is the owner's,
 * `runtimeUrl` the runtime role's, as the service is given them in production.
 */
export async function createTestDatabase(): Promise<{ url: string; runtimeUrl: string; drop(): Promise<void> }> {
  const stores = testStores();
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: stores.postgresAdminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${stores.templateDatabase}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(stores.postgresAdminUrl, name),
    runtimeUrl: withDatabase(stores.postgresRuntimeUrl, name),
    async drop() {
      const c = new Client({ connectionString: stores.postgresAdminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** A namespace no other test uses (Neo4j is shared by all test files). */
export function uniqueNamespace(prefix = 'test'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}
