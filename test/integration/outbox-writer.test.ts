import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { anEvent } from '../builders/event-input';
import { OneOutboxWriter1764400000980 } from '../../migrations/1764400000980-one-outbox-writer';
import { connectPostgres } from '../../src/platform/postgres/data-source';
import { enqueueOutbox, outboxFrom, outboxRows } from '../../src/platform/outbox';
import { Sql } from '../../src/platform/postgres/sql';
import { uniqueNamespace } from '../support/stores';
import { createToken, gqlOk, startTestApp, TestApp } from '../support/test-app';

/** Files under `dir` (recursively) whose text matches `re`. */
function filesMatching(dir: string, re: RegExp): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return filesMatching(p, re);
    return re.test(fs.readFileSync(p, 'utf8')) ? [p] : [];
  });
}

describe('one writer of ops.outbox', () => {
  let t: TestApp;
  let owner: Client;

  beforeAll(async () => {
    t = await startTestApp({}, { api: true, worker: false });
    owner = new Client({ connectionString: t.databaseUrl });
    await owner.connect();
  });
  afterAll(async () => {
    await owner?.end();
    await t?.stop();
  });

  it('is the only live database function that inserts into the table, and no service code spells the insert', async () => {
    const { rows } = await owner.query<{ fn: string }>(
      `SELECT n.nspname || '.' || p.proname AS fn FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE p.prosrc ~* 'insert\\s+into\\s+ops\\.outbox' ORDER BY 1`,
    );
    expect(rows.map((r) => r.fn)).toEqual(['ops.enqueue_outbox']);
    // The erasure functions, the ingest function and the retention checkpoints queue through it.
    const defs = await owner.query<{ fn: string }>(
      `SELECT n.nspname || '.' || p.proname AS fn FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE p.prosrc LIKE '%ops.enqueue_outbox(%' ORDER BY 1`,
    );
    expect(defs.rows.map((r) => r.fn)).toEqual([
      'bronze.destroy_event',
      'bronze.ingest_events',
      'bronze.record_retention_checkpoints',
      'gold.erase_event_copies',
    ]);
    expect(filesMatching(path.resolve(__dirname, '../../src'), /insert\s+into\s+ops\.outbox/i)).toEqual([]);
  });

  it("the migration's down puts the erasure functions' own inserts back, and up takes them out again", async () => {
    const { ds } = await connectPostgres({ url: t.databaseUrl });
    const writers = async () =>
      (
        await owner.query<{ fn: string }>(
          `SELECT n.nspname || '.' || p.proname AS fn FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE p.prosrc ~* 'insert\\s+into\\s+ops\\.outbox' ORDER BY 1`,
        )
      ).rows.map((r) => r.fn);
    const runner = ds.createQueryRunner();
    try {
      await new OneOutboxWriter1764400000980().down(runner);
      expect(await writers()).toEqual(['bronze.destroy_event', 'gold.erase_event_copies']);
      await new OneOutboxWriter1764400000980().up(runner);
      expect(await writers()).toEqual(['ops.enqueue_outbox']);
    } finally {
      await runner.release();
      await ds.destroy();
    }
  });

  it('queues rows in the order given, as the runtime role, from values and from a query', async () => {
    {
      const sql = Sql.of(t.app.ds);
      const ns = uniqueNamespace('outbox');
      await enqueueOutbox(sql, [...outboxRows(ns, 'fact', ['f2', 'f1'], { runId: 'r' }), ...outboxRows(ns, 'entity', ['e1'])]);
      await sql.execute(
        outboxFrom(`SELECT $1::text AS namespace, 'relationship' AS type, x AS id, jsonb_build_object('id', x) AS payload, o AS ord
                      FROM unnest(ARRAY['r2', 'r1']) WITH ORDINALITY AS u(x, o)`),
        [ns],
      );
      const { rows } = await owner.query(
        `SELECT o.aggregate_type AS type, o.aggregate_id AS id, o.op, o.payload FROM ops.outbox o WHERE o.namespace = $1 ORDER BY o.id`,
        [ns],
      );
      expect(rows).toEqual([
        { type: 'fact', id: 'f2', op: 'upsert', payload: { id: 'f2', runId: 'r' } },
        { type: 'fact', id: 'f1', op: 'upsert', payload: { id: 'f1', runId: 'r' } },
        { type: 'entity', id: 'e1', op: 'upsert', payload: { id: 'e1' } },
        { type: 'relationship', id: 'r2', op: 'upsert', payload: { id: 'r2' } },
        { type: 'relationship', id: 'r1', op: 'upsert', payload: { id: 'r1' } },
      ]);
    }
  });
});

describe('ingest queues one outbox row per new event through the writer', () => {
  let t: TestApp;
  let sql: Client;
  const ns = uniqueNamespace('outbox-ingest');

  beforeAll(async () => {
    t = await startTestApp({}, { api: true, worker: false });
    sql = new Client({ connectionString: t.databaseUrl });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await t?.stop();
  });

  it('in occurred order, and none for a repeated event', async () => {
    const { token } = await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST'] }]);
    const later = anEvent(ns).saying('later').at('2026-02-01T00:00:00Z').build();
    const earlier = anEvent(ns).saying('earlier').at('2026-01-01T00:00:00Z').build();
    const ingest = (input: unknown[]) =>
      gqlOk<{ ingestEvents: Array<{ status: string; event: { id: string } | null }> }>(
        t.url,
        token,
        `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status event { id } } }`,
        { input },
      );
    const first = (await ingest([later, earlier])).ingestEvents;
    expect(first.map((r) => r.status)).toEqual(['CREATED', 'CREATED']);
    const again = (await ingest([later])).ingestEvents;
    expect(again.map((r) => r.status)).toEqual(['DUPLICATE']);
    const { rows } = await sql.query(`SELECT o.aggregate_type AS type, o.aggregate_id AS id FROM ops.outbox o WHERE o.namespace = $1 ORDER BY o.id`, [ns]);
    expect(rows.map((r) => r.id)).toEqual([first[1]?.event?.id, first[0]?.event?.id]);
    expect(rows.every((r) => r.type === 'event')).toBe(true);
  });
});
