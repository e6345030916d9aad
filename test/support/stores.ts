import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** What the global setup started (passed through the environment to test files). */
export interface TestStores {
  postgresAdminUrl: string;
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

/** A fresh database cloned from the migrated template; dropped by the returned function. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
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
