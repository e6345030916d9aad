import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '../../src/platform/local-services/embedded-postgres';
import { startLocalNeo4j } from '../../src/platform/local-services/local-neo4j';
import { connectPostgres, migrate } from '../../src/platform/postgres/data-source';
import { DEFAULT_RUNTIME_ROLE, ensureLoginRole, urlForRole } from '../../src/platform/postgres/runtime-role';
import { STORES_ENV, TestStores, withDatabase } from './stores';

const TEMPLATE = 'medallion_template';

/**
 * Starts real PostgreSQL (embedded-postgres) and real Neo4j (local Community server) once per
 * run, or uses DATABASE_URL / NEO4J_URI when set, and builds a migrated template database that
 * each test file clones.
 */
export default async function globalSetup(): Promise<void> {
  const log = (m: string) => process.env.TEST_VERBOSE && process.stderr.write(`${m}\n`);
  const stops: Array<() => Promise<void>> = [];
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-test-'));
  fs.chmodSync(root, 0o755);

  let t0 = Date.now();
  let adminUrl = process.env.DATABASE_URL;
  let runtimeUrl = process.env.DATABASE_RUNTIME_URL;
  if (!adminUrl) {
    // The embedded default makes its runtime role itself, as the service's does.
    const pg = await startEmbeddedPostgres({ dataDir: path.join(root, 'pg'), log });
    stops.push(() => pg.stop());
    adminUrl = pg.url;
    runtimeUrl = pg.runtimeUrl;
  } else if (!runtimeUrl) {
    // An external server: create the runtime role as docs/bronze.md tells an operator to.
    const password = `test-runtime-${process.pid}`;
    await ensureLoginRole(adminUrl, DEFAULT_RUNTIME_ROLE, password);
    runtimeUrl = urlForRole(adminUrl, DEFAULT_RUNTIME_ROLE, password);
  }
  const pgMs = Date.now() - t0;

  t0 = Date.now();
  let neo4j: TestStores['neo4j'];
  if (process.env.NEO4J_URI) {
    neo4j = { uri: process.env.NEO4J_URI, user: process.env.NEO4J_USER ?? 'neo4j', password: process.env.NEO4J_PASSWORD ?? '' };
  } else {
    const local = await startLocalNeo4j({
      dataDir: path.join(root, 'neo4j'),
      cacheDir: path.resolve(process.env.CACHE_DIR ?? '.cache'),
      javaHome: process.env.JAVA_HOME || undefined,
      password: 'test-password-' + process.pid,
      heapMb: 768,
      log: (m) => process.stderr.write(`[neo4j] ${m}\n`),
    });
    stops.push(() => local.stop());
    neo4j = { uri: local.uri, user: local.user, password: local.password };
  }
  const neo4jMs = Date.now() - t0;

  t0 = Date.now();
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE}`);
  await admin.query(`CREATE DATABASE ${TEMPLATE}`);
  await admin.end();
  const { ds } = await connectPostgres({ url: withDatabase(adminUrl, TEMPLATE) });
  await migrate(ds);
  await ds.destroy();
  process.stderr.write(`\n[test stores] postgres ${pgMs} ms, neo4j ${neo4jMs} ms, template migrated ${Date.now() - t0} ms\n`);

  const stores: TestStores = { postgresAdminUrl: adminUrl, postgresRuntimeUrl: runtimeUrl, templateDatabase: TEMPLATE, neo4j };
  process.env[STORES_ENV] = JSON.stringify(stores);
  (globalThis as Record<string, unknown>).__MEDALLION_STOP__ = async () => {
    for (const stop of stops.reverse()) await stop();
    fs.rmSync(root, { recursive: true, force: true });
  };
}
