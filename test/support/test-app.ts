import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { App, AppOptions, startApp } from '../../src/app/app';
import { loadConfig } from '../../src/common/config';
import { createLogger } from '../../src/common/logger';
import { createTestDatabase, testStores } from './stores';

export interface TestApp {
  app: App;
  url: string;
  adminToken: string;
  /** The owner's URL (superuser in tests): raw SQL that sets up or checks state. */
  databaseUrl: string;
  /** The runtime role's URL: what the service's own queries run as. */
  runtimeDatabaseUrl: string;
  stop(): Promise<void>;
}

/**
 * The real service (HTTP + workers) on a fresh database and the shared test Neo4j; with `on`, on
 * another test app's database instead (a second process, or a restart), which its stop leaves.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  opts: AppOptions = { api: true, worker: true },
  on?: Pick<TestApp, 'databaseUrl' | 'runtimeDatabaseUrl'>,
): Promise<TestApp> {
  const db = on ? { url: on.databaseUrl, runtimeUrl: on.runtimeDatabaseUrl, drop: async () => undefined } : await createTestDatabase();
  const stores = testStores();
  const adminToken = `test-admin-${randomBytes(16).toString('hex')}`;
  const config = loadConfig({
    DATABASE_URL: db.url,
    DATABASE_RUNTIME_URL: db.runtimeUrl,
    NEO4J_URI: stores.neo4j.uri,
    NEO4J_USER: stores.neo4j.user,
    NEO4J_PASSWORD: stores.neo4j.password,
    ADMIN_TOKEN: adminToken,
    PORT: '0',
    DATA_DIR: path.join(os.tmpdir(), 'medallion-test-data'),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    PROJECTOR_POLL_MS: '50',
    // No promotion a few seconds after each namespace settles (docs/gold.md, "When promotion
    // runs"): most tests do not expect Gold to appear on its own while they run (a graph rebuild
    // would gain a Gold phase). A test of that behaviour passes the default back in.
    GOLD_PROMOTE_SETTLE_SECONDS: '0',
    // No background warm-up searches after the start (SEARCH_WARM_UP_SECONDS): tests that count
    // Neo4j statements or read search metrics must see their own searches alone.
    // search-warm-up.test.ts passes it back in.
    SEARCH_WARM_UP_SECONDS: '0',
    // No background replanning round while a test runs (SEARCH_REPLAN_SECONDS; its first round
    // comes one period after the start): tests that count Neo4j transactions see their own alone.
    // Searches still read their plans with replan=skip. search-replan.test.ts passes a short one.
    SEARCH_REPLAN_SECONDS: '3600',
    // Background stages do not pause for searches (BACKGROUND_YIELD): most tests poll by searching
    // until derivation is done, and would wait on their own polls. background-yield.test.ts and
    // the whole-app tests run the default.
    BACKGROUND_YIELD: '0',
    ...env,
  });
  // A test may bring its own Neo4j (NEO4J_URI in env), e.g. to stop and restart it.
  const neo4j = config.neo4j ?? stores.neo4j;
  const app = await startApp(config, { postgresUrl: db.url, postgresRuntimeUrl: db.runtimeUrl, neo4j }, opts, createLogger(config.logLevel));
  return {
    app,
    url: app.http?.url ?? '',
    adminToken,
    databaseUrl: db.url,
    runtimeDatabaseUrl: db.runtimeUrl,
    async stop() {
      await app.stop();
      await db.drop();
    },
  };
}

export interface GqlResponse<T> {
  data?: T;
  errors?: Array<{ message: string; extensions?: { code?: string; [k: string]: unknown } }>;
}

/** POSTs one GraphQL operation like any HTTP client would. */
export async function gql<T = Record<string, unknown>>(
  url: string,
  token: string | undefined,
  query: string,
  variables?: Record<string, unknown>,
): Promise<GqlResponse<T>> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as GqlResponse<T>;
}

/** Like `gql` but fails the test on any GraphQL error. */
export async function gqlOk<T = Record<string, unknown>>(
  url: string,
  token: string | undefined,
  query: string,
  variables?: Record<string, unknown>,
): Promise<T> {
  const r = await gql<T>(url, token, query, variables);
  if (r.errors?.length) throw new Error(`GraphQL errors: ${JSON.stringify(r.errors)}`);
  return r.data as T;
}

/** Issues a token through the API with the admin token. */
export async function createToken(
  t: TestApp,
  grants: Array<{ namespacePattern: string; capabilities: string[] }>,
  name = 'test-token',
): Promise<{ id: string; token: string }> {
  const data = await gqlOk<{ createToken: { token: string; info: { id: string } } }>(
    t.url,
    t.adminToken,
    `mutation($input: TokenInput!) { createToken(input: $input) { token info { id } } }`,
    { input: { name, grants } },
  );
  return { id: data.createToken.info.id, token: data.createToken.token };
}

/** Polls `fn` until it returns a truthy value (for work done by background loops). */
export async function eventually<T>(fn: () => Promise<T | undefined | null | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Something that answers SQL: a `pg` Client or Pool. */
interface SqlReader {
  query<R extends Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

/**
 * Waits until the namespace has nothing left to derive (`pipelineStatus.pending`, over the API) and
 * none of its outbox rows waits for the projector (read with `pg`): what it holds is searchable.
 */
export async function settledNamespace(t: TestApp, pg: SqlReader, ns: string, timeoutMs = { derivation: 60_000, projection: 30_000 }): Promise<void> {
  await eventually(
    async () =>
      (await gqlOk<{ pipelineStatus: { pending: number } }>(t.url, t.adminToken, `query($ns: String!) { pipelineStatus(namespace: $ns) { pending } }`, { ns }))
        .pipelineStatus.pending === 0,
    'derivation',
    timeoutMs.derivation,
  );
  await eventually(
    async () =>
      (await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM ops.outbox WHERE processed_at IS NULL AND namespace = $1`, [ns])).rows[0]?.n === 0,
    'projection',
    timeoutMs.projection,
  );
}
