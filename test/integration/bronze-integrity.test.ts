import { Client } from 'pg';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, gqlOk, startTestApp, TestApp } from '../support/test-app';

const INGEST_MANY = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { index status code event { id sourceEventId } } }`;
type Result = { index: number; status: string; code: string | null; event: { id: string; sourceEventId: string } | null };

describe('Bronze integrity: append-only, partitions, concurrency', () => {
  let t: TestApp;
  let sql: Client;
  const ns = uniqueNamespace('integrity');
  let token: string;

  beforeAll(async () => {
    // A wide occurredAt window (200 years back, 10 ahead): these tests are about partitions, not the window.
    t = await startTestApp({ OCCURRED_AT_MAX_PAST_DAYS: '73050', OCCURRED_AT_MAX_FUTURE_DAYS: '3653' });
    token = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'READ', 'LIST'] }])).token;
    sql = new Client({ connectionString: t.databaseUrl });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await t?.stop();
  });

  const ingest = async (events: unknown[]) => (await gqlOk<{ ingestEvents: Result[] }>(t.url, token, INGEST_MANY, { input: events })).ingestEvents;

  it('lets no SQL change or remove an event, its key, or a partition’s rows', async () => {
    const [r] = await ingest([anEvent(ns).saying('immutable truth').at('2026-02-10T00:00:00Z').build()]);
    const id = r?.event?.id as string;
    const attempts = [
      `UPDATE bronze.events SET content = 'tampered' WHERE id = '${id}'`,
      `DELETE FROM bronze.events WHERE id = '${id}'`,
      `UPDATE bronze.events_2026_02 SET content = 'tampered' WHERE id = '${id}'`,
      `DELETE FROM bronze.events_2026_02 WHERE id = '${id}'`,
      `TRUNCATE bronze.events`,
      `TRUNCATE bronze.events_2026_02`,
      `UPDATE bronze.event_keys SET checksum = 'x' WHERE event_id = '${id}'`,
      `DELETE FROM bronze.event_keys WHERE event_id = '${id}'`,
      `TRUNCATE bronze.event_keys`,
    ];
    for (const statement of attempts) {
      await expect(sql.query(statement)).rejects.toThrow(/append-only/);
    }
    const { rows } = await sql.query(`SELECT content FROM bronze.events WHERE id = $1`, [id]);
    expect(rows).toEqual([{ content: 'immutable truth' }]);
    const keys = await sql.query(`SELECT count(*)::int AS n FROM bronze.event_keys WHERE event_id = $1`, [id]);
    expect(keys.rows[0].n).toBe(1);
  });

  it('creates monthly partitions on demand for any month inside the occurredAt window', async () => {
    const times = ['1999-12-31T23:59:59.999Z', '2000-01-01T00:00:00Z', '2024-02-29T12:00:00Z', '2031-07-15T08:00:00Z'];
    const results = await ingest(times.map((at) => anEvent(ns).at(at).saying(`event at ${at}`).build()));
    expect(results.map((r) => r.status)).toEqual(Array(times.length).fill('CREATED'));
    const { rows } = await sql.query(
      `SELECT tableoid::regclass::text AS part, to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM') AS month FROM bronze.events WHERE id = ANY($1::uuid[]) ORDER BY occurred_at`,
      [results.map((r) => r.event?.id)],
    );
    expect(rows).toEqual([
      { part: 'bronze.events_1999_12', month: '1999-12' },
      { part: 'bronze.events_2000_01', month: '2000-01' },
      { part: 'bronze.events_2024_02', month: '2024-02' },
      { part: 'bronze.events_2031_07', month: '2031-07' },
    ]);
    // The idempotency key spans partitions: the same key in another month is still the same event.
    const [again] = await ingest([
      anEvent(ns)
        .withKey('test', results[0]?.event?.sourceEventId as string)
        .at('2024-02-29T12:00:00Z')
        .saying('moved?')
        .build(),
    ]);
    expect(again).toMatchObject({ status: 'REJECTED', code: 'CONFLICT', event: { id: results[0]?.event?.id } });
  });

  it('creates a month once when 8 sessions ask for it at the same moment', async () => {
    const clients = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const c = new Client({ connectionString: t.databaseUrl });
        await c.connect();
        return c;
      }),
    );
    try {
      const results = await Promise.all(clients.map((c) => c.query(`SELECT bronze.ensure_event_partition('2033-03-15') AS part`)));
      expect(results.map((r) => r.rows[0].part)).toEqual(Array(8).fill('events_2033_03'));
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
    const parts = await sql.query(
      `SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'bronze.events'::regclass AND inhrelid::regclass::text = 'bronze.events_2033_03'`,
    );
    expect(parts.rows[0].n).toBe(1);
    await expect(sql.query(`TRUNCATE bronze.events_2033_03`)).rejects.toThrow(/append-only/);
  });

  it('keeps exactly one event per key when 8 clients send overlapping batches at once', async () => {
    const keys = Array.from({ length: 240 }, (_, i) => `k-${i}`);
    const inputFor = (k: string) => anEvent(ns).withKey('concurrent', k).saying(`content of ${k}`).at('2026-05-05T05:05:05Z').build();
    const shuffle = <T>(xs: T[], seed: number): T[] => {
      const a = [...xs];
      let s = seed;
      for (let i = a.length - 1; i > 0; i--) {
        s = (s * 1103515245 + 12345) % 2 ** 31;
        const j = s % (i + 1);
        [a[i], a[j]] = [a[j] as T, a[i] as T];
      }
      return a;
    };
    // Each client takes an overlapping window of 120 keys in its own order; two rounds.
    const batches = Array.from({ length: 8 }, (_, c) => shuffle(keys.slice(c * 15, c * 15 + 120), c + 1));
    const rounds = [await Promise.all(batches.map((b) => ingest(b.map(inputFor)))), await Promise.all(batches.map((b) => ingest(b.map(inputFor))))];

    const byKey = new Map<string, { created: number; ids: Set<string> }>();
    rounds.forEach((round) =>
      round.forEach((results, c) =>
        results.forEach((r, i) => {
          expect(['CREATED', 'DUPLICATE']).toContain(r.status);
          expect(r.event?.sourceEventId).toBe(batches[c]?.[i]);
          const entry = byKey.get(r.event?.sourceEventId as string) ?? { created: 0, ids: new Set<string>() };
          if (r.status === 'CREATED') entry.created += 1;
          entry.ids.add(r.event?.id as string);
          byKey.set(r.event?.sourceEventId as string, entry);
        }),
      ),
    );
    const covered = new Set(batches.flat());
    expect(byKey.size).toBe(covered.size);
    for (const [, entry] of byKey) {
      expect(entry.created).toBe(1);
      expect(entry.ids.size).toBe(1);
    }
    const { rows } = await sql.query(
      `SELECT count(*)::int AS events, count(DISTINCT source_event_id)::int AS keys FROM bronze.events WHERE namespace = $1 AND source = 'concurrent'`,
      [ns],
    );
    expect(rows[0]).toEqual({ events: covered.size, keys: covered.size });
    const queue = await sql.query(
      `SELECT count(*)::int AS n FROM ops.derivation_queue q JOIN bronze.event_keys k ON k.event_id = q.event_id WHERE k.namespace = $1 AND k.source = 'concurrent'`,
      [ns],
    );
    expect(queue.rows[0].n).toBe(covered.size);
    const mark = await sql.query(`SELECT event_count::int AS n FROM ops.watermarks WHERE namespace = $1 AND source = 'concurrent'`, [ns]);
    expect(mark.rows[0].n).toBe(covered.size);
  });
});
