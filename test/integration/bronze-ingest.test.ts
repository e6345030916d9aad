import { Client } from 'pg';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

const INGEST_MANY = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { index status code reason event { id sourceEventId content checksum rawPayload rawPayloadText occurredAt ingestedAt } } }`;
interface Result {
  index: number;
  status: string;
  code: string | null;
  reason: string | null;
  event: {
    id: string;
    sourceEventId: string;
    content: string;
    checksum: string;
    rawPayload: unknown;
    rawPayloadText: string | null;
    occurredAt: string;
    ingestedAt: string;
  } | null;
}
type IngestMany = { ingestEvents: Result[] };

describe('Bronze ingest: contract, validation, idempotency', () => {
  let t: TestApp;
  let sql: Client;
  const ns = uniqueNamespace('bronze');
  let token: string;

  beforeAll(async () => {
    t = await startTestApp({ MAX_CONTENT_BYTES: '2000', MAX_PAYLOAD_BYTES: '500', MAX_BATCH_SIZE: '50' });
    token = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'READ', 'LIST'] }])).token;
    sql = new Client({ connectionString: t.databaseUrl });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await t?.stop();
  });

  const ingest = (events: unknown[], tok = token) => gqlOk<IngestMany>(t.url, tok, INGEST_MANY, { input: events });

  it('stores content and payload verbatim, with a server-set ingestedAt and a checksum', async () => {
    const content = '  Ünïcödé 🚀 line1\r\nline2\ttab  \u00a0 ';
    const payload = { z: 1, a: [true, null, 1.5], nested: { ключ: 'значение' } };
    const [r] = (await ingest([anEvent(ns).saying(content).withPayload(payload).at('2026-03-04T05:06:07.089Z').build()])).ingestEvents;
    expect(r?.status).toBe('CREATED');
    expect(r?.event?.content).toBe(content);
    expect(r?.event?.rawPayloadText).toBe(JSON.stringify(payload)); // key order as sent
    expect(r?.event?.rawPayload).toEqual(payload);
    expect(r?.event?.occurredAt).toBe('2026-03-04T05:06:07.089Z');
    expect(Math.abs(Date.parse(r?.event?.ingestedAt as string) - Date.now())).toBeLessThan(60_000);
    const { rows } = await sql.query(`SELECT content, raw_payload::text AS p, octet_length(content) AS bytes FROM bronze.events WHERE id = $1`, [r?.event?.id]);
    expect(rows[0]).toEqual({ content, p: JSON.stringify(payload), bytes: Buffer.byteLength(content) });
  });

  it('answers per item, in input order, and a bad item never loses the good ones', async () => {
    const dupKey = anEvent(ns).build();
    const results = (
      await ingest([
        anEvent(ns).saying('good one').build(),
        anEvent(ns).with({ namespace: 'bad namespace!' }).build(),
        anEvent(ns).saying('x'.repeat(2001)).build(),
        anEvent(ns)
          .withPayload({ blob: 'y'.repeat(600) })
          .build(),
        anEvent(ns).with({ occurredAt: '2400-01-01T00:00:00Z' }).build(),
        dupKey,
        dupKey,
        { ...dupKey, content: 'same key, other content' },
        anEvent(ns).saying('').build(),
        anEvent(uniqueNamespace('other')).build(),
        anEvent(ns).saying('good two').build(),
      ])
    ).ingestEvents;
    expect(results.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(results.map((r) => (r.status === 'REJECTED' ? r.code : r.status))).toEqual([
      'CREATED',
      'INVALID_NAMESPACE',
      'CONTENT_TOO_LARGE',
      'PAYLOAD_TOO_LARGE',
      'INVALID_TIMESTAMP',
      'CREATED',
      'DUPLICATE',
      'CONFLICT',
      'MISSING_FIELD',
      'FORBIDDEN',
      'CREATED',
    ]);
    for (const r of results.filter((x) => x.status === 'REJECTED')) expect(r.reason).toMatch(/\w{8,}/);
    expect(results[6]?.event?.id).toBe(results[5]?.event?.id);
    const { rows } = await sql.query(`SELECT count(*)::int AS n FROM bronze.events WHERE namespace = $1 AND content IN ('good one', 'good two')`, [ns]);
    expect(rows[0].n).toBe(2);
  });

  it('returns DUPLICATE with the original on resubmission and CONFLICT (never overwriting) on changed content', async () => {
    const original = anEvent(ns).withKey('crm', 'ticket-42').saying('Customer prefers email').at('2025-06-01T10:00:00Z').build();
    const [first] = (await ingest([original])).ingestEvents;
    const [again] = (await ingest([original])).ingestEvents;
    expect(again).toMatchObject({ status: 'DUPLICATE', event: { id: first?.event?.id, content: 'Customer prefers email' } });
    const [changed] = (await ingest([{ ...original, content: 'Customer prefers phone' }])).ingestEvents;
    expect(changed).toMatchObject({ status: 'REJECTED', code: 'CONFLICT', event: { id: first?.event?.id, content: 'Customer prefers email' } });
    const { rows } = await sql.query(`SELECT content FROM bronze.events WHERE source = 'crm' AND source_event_id = 'ticket-42'`);
    expect(rows).toEqual([{ content: 'Customer prefers email' }]);
  });

  it('refuses an empty or oversized batch as a whole with a clear code', async () => {
    const big = Array.from({ length: 51 }, () => anEvent(ns).build());
    const tooMany = await gql(t.url, token, INGEST_MANY, { input: big });
    expect(tooMany.errors?.[0]?.extensions?.code).toBe('LIMIT_EXCEEDED');
    expect(tooMany.errors?.[0]?.message).toContain('MAX_BATCH_SIZE');
    const empty = await gql(t.url, token, INGEST_MANY, { input: [] });
    expect(empty.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('hands every new event to Silver and the graph in the same transaction, once', async () => {
    const inputs = Array.from({ length: 5 }, (_, i) => anEvent(ns).inConversation('handoff', i).build());
    const ids = (await ingest(inputs)).ingestEvents.map((r) => r.event?.id);
    const counts = async () => ({
      queued: (await sql.query(`SELECT count(*)::int AS n FROM ops.derivation_queue WHERE event_id = ANY($1::uuid[])`, [ids])).rows[0].n,
      outbox: (await sql.query(`SELECT count(*)::int AS n FROM ops.outbox WHERE aggregate_type = 'event' AND aggregate_id = ANY($1::text[])`, [ids])).rows[0].n,
    });
    expect(await counts()).toEqual({ queued: 5, outbox: 5 });
    const again = (await ingest(inputs)).ingestEvents;
    expect(again.map((r) => r.status)).toEqual(Array(5).fill('DUPLICATE'));
    expect(await counts()).toEqual({ queued: 5, outbox: 5 });
  });
});
