import { Client } from 'pg';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, gql, GqlResponse, gqlOk, startTestApp, TestApp } from '../support/test-app';
import { collect, wsClient } from '../support/ws-client';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { index status code reason event { id content rawPayloadText toolCall { id } } } }`;
interface Result {
  index: number;
  status: string;
  code: string | null;
  reason: string | null;
  event: { id: string; content: string; rawPayloadText: string | null; toolCall: { id: string } | null } | null;
}

/** Sends a request body as raw text: JSON.stringify cannot write 1e400, 2^53+1 or lone surrogates. */
async function postRaw<T>(url: string, token: string, body: string): Promise<{ status: number; body: GqlResponse<T> }> {
  const res = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body });
  return { status: res.status, body: (await res.json()) as GqlResponse<T> };
}

/** An ingest request whose events are JSON texts, so each may hold what JSON.stringify would not produce. */
const ingestBody = (events: string[]) => `{"query":${JSON.stringify(INGEST)},"variables":{"input":[${events.join(',')}]}}`;
const eventText = (over: Record<string, unknown>, extra = '') =>
  JSON.stringify(anEvent(String(over.namespace)).with(over).build()).replace(/}$/, extra ? `,${extra}}` : '}');

describe('Bronze under hostile input: per-item rejections, exact storage, no internal errors', () => {
  let t: TestApp;
  let sql: Client;
  const ns = uniqueNamespace('hostile');
  let writer: string;
  let ingestOnly: string;

  beforeAll(async () => {
    t = await startTestApp();
    writer = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'READ', 'LIST'] }], 'writer')).token;
    ingestOnly = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST'] }], 'ingest-only')).token;
    sql = new Client({ connectionString: t.databaseUrl });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await t?.stop();
  });

  const stored = async (content: string) =>
    (await sql.query(`SELECT count(*)::int AS n FROM bronze.events WHERE namespace = $1 AND content = $2`, [ns, content])).rows[0].n as number;

  it('stores the good events of a batch and rejects, each with a code, one holding 1e400, a NUL tool-call id or a lone surrogate', async () => {
    const good = (i: number) => eventText({ namespace: ns, content: `good ${i}` });
    const res = await postRaw<{ ingestEvents: Result[] }>(
      t.url,
      writer,
      ingestBody([
        good(1),
        eventText({ namespace: ns, content: 'overflow' }, '"rawPayload":{"n":1e400}'),
        good(2),
        eventText({ namespace: ns, content: 'exact big integer', kind: 'TOOL_CALL' }, '"rawPayload":{"n":9007199254740993}'),
        eventText({ namespace: ns, content: 'nul id', kind: 'TOOL_CALL' }, '"rawPayload":{"id":"call-\\u0000"}'),
        eventText({ namespace: ns, content: 'surrogate', conversationId: 'c' }).replace('"conversationId":"c"', '"conversationId":"c\\ud800"'),
        good(3),
      ]),
    );
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    const results = res.body.data?.ingestEvents ?? [];
    expect(results.map((r) => (r.status === 'REJECTED' ? r.code : r.status))).toEqual([
      'CREATED',
      'INVALID_FIELD',
      'CREATED',
      'CREATED',
      'INVALID_FIELD',
      'INVALID_UNICODE',
      'CREATED',
    ]);
    expect(results[1]?.reason).toMatch(/rawPayload\.n .*1e400/);
    expect(results[3]?.event?.rawPayloadText).toBe('{"n":9007199254740993}');
    expect(results[4]?.reason).toMatch(/tool-call id/);
    expect(results[5]?.reason).toMatch(/conversationId is not valid Unicode/);
    for (const c of ['good 1', 'good 2', 'good 3', 'exact big integer']) expect(await stored(c)).toBe(1);
    for (const c of ['overflow', 'nul id', 'surrogate']) expect(await stored(c)).toBe(0);
  });

  it('stores integers beyond 2^53 digit for digit, from variables and from literals, and tells them apart on resend', async () => {
    const big = '{"id":12345678901234567890,"n":[-9007199254740993,1.5,123456789012345678901234567890],"s":"9007199254740993"}';
    const item = eventText({ namespace: ns, content: 'big ints', sourceEventId: 'big-1', kind: 'TOOL_CALL' }, `"rawPayload":${big}`);
    const first = (await postRaw<{ ingestEvents: Result[] }>(t.url, writer, ingestBody([item]))).body.data?.ingestEvents ?? [];
    expect(first.map((r) => r.status)).toEqual(['CREATED']);
    expect(first[0]?.event?.rawPayloadText).toBe(big);
    const { rows } = await sql.query(`SELECT raw_payload::text AS p, tool_call_id FROM bronze.events WHERE id = $1`, [first[0]?.event?.id]);
    expect(rows[0]).toEqual({ p: big, tool_call_id: '12345678901234567890' });
    // The same digits again: DUPLICATE. One digit off (what JSON.parse would have made of it): CONFLICT.
    const again = (await postRaw<{ ingestEvents: Result[] }>(t.url, writer, ingestBody([item]))).body.data?.ingestEvents ?? [];
    expect(again.map((r) => r.status)).toEqual(['DUPLICATE']);
    const rounded = item.replace('12345678901234567890', '12345678901234567000');
    const conflict = (await postRaw<{ ingestEvents: Result[] }>(t.url, writer, ingestBody([rounded]))).body.data?.ingestEvents ?? [];
    expect(conflict.map((r) => r.code)).toEqual(['CONFLICT']);
    // Written as a literal in the document rather than sent as a variable: exact too.
    const literal = await postRaw<{ ingestEvents: Result[] }>(
      t.url,
      writer,
      JSON.stringify({
        query: `mutation { ingestEvents(input: [{ namespace: "${ns}", source: "t", sourceEventId: "big-literal", kind: MESSAGE, content: "literal", rawPayload: { n: 9007199254740993, m: [18446744073709551616] } }]) { status event { rawPayloadText } } }`,
      }),
    );
    expect(literal.body.data?.ingestEvents[0]?.event?.rawPayloadText).toBe('{"n":9007199254740993,"m":[18446744073709551616]}');
  });

  it('refuses, per item and with a reason, an integer beyond 2^53 sent over graphql-ws (its JSON.parse has already rounded it)', async () => {
    const ws = wsClient(t.url, writer);
    try {
      const input = [
        anEvent(ns)
          .saying('ws big')
          .withPayload({ n: 2 ** 53 + 2 })
          .build(),
        anEvent(ns).saying('ws good').build(),
      ];
      let answer: { data?: { ingestEvents: Result[] } | null } | undefined;
      for await (const msg of ws.iterate<{ ingestEvents: Result[] }>({ query: INGEST, variables: { input } })) answer = msg;
      expect(answer?.data?.ingestEvents.map((r) => r.code ?? r.status)).toEqual(['INVALID_FIELD', 'CREATED']);
      expect(answer?.data?.ingestEvents[0]?.reason).toMatch(/beyond ±2\^53-1.*over HTTP POST \/graphql/);
    } finally {
      await ws.dispose();
    }
  });

  it('never folds \\ud800, \\udc00 and \\ufffd keys into one: the first two are rejected, the third stored, and a resend is DUPLICATE', async () => {
    const key = (suffix: string) =>
      eventText({ namespace: ns, content: 'key test', sourceEventId: 'KEY' }).replace('"sourceEventId":"KEY"', `"sourceEventId":"k${suffix}"`);
    const body = ingestBody([key('\\ud800'), key('\\udc00'), key('\\ufffd')]);
    const first = (await postRaw<{ ingestEvents: Result[] }>(t.url, writer, body)).body.data?.ingestEvents ?? [];
    expect(first.map((r) => r.code ?? r.status)).toEqual(['INVALID_UNICODE', 'INVALID_UNICODE', 'CREATED']);
    const again = (await postRaw<{ ingestEvents: Result[] }>(t.url, writer, body)).body.data?.ingestEvents ?? [];
    expect(again.map((r) => r.code ?? r.status)).toEqual(['INVALID_UNICODE', 'INVALID_UNICODE', 'DUPLICATE']);
    const { rows } = await sql.query(`SELECT source_event_id FROM bronze.events WHERE namespace = $1 AND content = 'key test'`, [ns]);
    expect(rows).toEqual([{ source_event_id: 'k\ufffd' }]);
  });

  it('keeps a payload 20 objects deep, and NUL and lone surrogates inside it, exactly; refuses one deeper than MAX_PAYLOAD_DEPTH per item', async () => {
    let deep: unknown = { s: 'a\u0000b\ud800' };
    for (let i = 0; i < 20; i++) deep = { d: deep };
    let tooDeep: unknown = 1;
    for (let i = 0; i < 70; i++) tooDeep = [tooDeep];
    const results = (
      await gqlOk<{ ingestEvents: Result[] }>(t.url, writer, INGEST, {
        input: [anEvent(ns).saying('deep').withPayload(deep).build(), anEvent(ns).saying('too deep').withPayload(tooDeep).build()],
      })
    ).ingestEvents;
    expect(results.map((r) => r.code ?? r.status)).toEqual(['CREATED', 'PAYLOAD_TOO_DEEP']);
    expect(results[0]?.event?.rawPayloadText).toBe(JSON.stringify(deep));
    const { rows } = await sql.query(`SELECT raw_payload::text AS p FROM bronze.events WHERE id = $1`, [results[0]?.event?.id]);
    expect(JSON.parse(rows[0].p)).toEqual(deep);
  });

  it('answers BAD_USER_INPUT naming the argument for NUL or lone surrogates in string arguments', async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      [`query($v: String!) { events(namespace: $v) { edges { cursor } } }`, { v: `${ns}\u0000` }, /argument namespace contains a NUL/],
      [
        `query($v: String!) { events(namespace: "${ns}", filter: { conversationId: $v }) { edges { cursor } } }`,
        { v: 'c\u0000' },
        /argument filter\.conversationId/,
      ],
      [
        `query($v: String!) { events(namespace: "${ns}", filter: { sources: ["ok", $v] }) { edges { cursor } } }`,
        { v: 's\u0000' },
        /argument filter\.sources\[1\]/,
      ],
      [`query($v: String!) { watermark(namespace: "${ns}", source: $v) { eventCount } }`, { v: 's\u0000' }, /argument source/],
      [`query($v: String!) { conversation(namespace: "${ns}", conversationId: $v) { id } }`, { v: 'c\u0000' }, /argument conversationId/],
      [`query($v: String!) { facts(namespace: $v) { edges { cursor } } }`, { v: `${ns}\u0000` }, /argument namespace/],
      [`query($v: String!) { pipelineStatus(namespace: $v) { pending } }`, { v: `${ns}\u0000` }, /argument namespace/],
      [
        `mutation($v: String!) { createToken(input: { name: $v, grants: [{ namespacePattern: "${ns}", capabilities: [READ] }] }) { token } }`,
        { v: 'n\u0000' },
        /argument input\.name/,
      ],
    ];
    for (const [query, variables, message] of cases) {
      const res = await gql(t.url, t.adminToken, query, variables);
      expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(res.errors?.[0]?.message).toMatch(message);
    }
    const surrogate = await postRaw(
      t.url,
      t.adminToken,
      `{"query":"query($v: String!) { events(namespace: $v) { edges { cursor } } }","variables":{"v":"a\\udc00"}}`,
    );
    expect(surrogate.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(surrogate.body.errors?.[0]?.message).toMatch(/not valid Unicode/);
  });

  it('answers BAD_USER_INPUT for non-UUID ids, per field: one bad fact(id) does not fail the others', async () => {
    const res = await gql<{ bad: unknown; good: unknown }>(
      t.url,
      t.adminToken,
      `{ bad: fact(id: "not-a-uuid") { id } good: fact(id: "00000000-0000-4000-8000-000000000000") { id } }`,
    );
    expect(res.errors).toHaveLength(1);
    expect(res.errors?.[0]).toMatchObject({ path: ['bad'], extensions: { code: 'BAD_USER_INPUT' } });
    expect(res.data?.good).toBeNull();
    for (const query of [
      `{ entity(id: "x") { id } }`,
      `{ event(id: "x") { id } }`,
      `{ facts(namespace: "${ns}", filter: { subjectEntityId: "x" }) { edges { cursor } } }`,
      `{ facts(namespace: "${ns}", filter: { minImportance: 1e39 }) { edges { cursor } } }`,
      `mutation { createToken(input: { name: "n", principalId: "x", grants: [{ namespacePattern: "${ns}", capabilities: [READ] }] }) { token } }`,
    ]) {
      expect((await gql(t.url, t.adminToken, query)).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
    expect((await gql(t.url, t.adminToken, `mutation { revokeToken(id: "x") }`)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('answers BAD_USER_INPUT for a cursor with a 19-digit time, and never 5xx for a 130,000-element list argument', async () => {
    const cursor = Buffer.from(JSON.stringify(['9223372036854775807', '00000000-0000-4000-8000-000000000000'])).toString('base64url');
    for (const field of ['events', 'facts']) {
      const res = await gql(t.url, writer, `query($c: String) { ${field}(namespace: "${ns}", after: $c) { edges { cursor } } }`, { c: cursor });
      expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
    const sources = Array.from({ length: 130_000 }, (_, i) => `s${i}`);
    const res = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${writer}` },
      body: JSON.stringify({
        query: `query($s: [String!]) { events(namespace: "${ns}", filter: { sources: $s }) { edges { cursor } } }`,
        variables: { s: sources },
      }),
    });
    expect(res.status).toBeLessThan(500);
    const body = (await res.json()) as GqlResponse<unknown>;
    expect(body.errors?.map((e) => e.extensions?.code) ?? []).not.toContain('INTERNAL_SERVER_ERROR');
  });

  it('shows an ingest-only token no stored event through DUPLICATE, CONFLICT or a tool-call link', async () => {
    const original = anEvent(ns)
      .withKey('crm', `secret-${Date.now()}`)
      .saying('the secret original')
      .ofKind('TOOL_CALL')
      .withPayload({ id: `call-${Date.now()}` })
      .build();
    const [mine] = (await gqlOk<{ ingestEvents: Result[] }>(t.url, writer, INGEST, { input: [original] })).ingestEvents;
    expect(mine?.status).toBe('CREATED');
    const [dup, conflict, result] = (
      await gqlOk<{ ingestEvents: Result[] }>(t.url, ingestOnly, INGEST, {
        input: [
          original,
          { ...original, sourceEventId: original.sourceEventId, content: 'a guess', source: 'crm' },
          anEvent(ns)
            .ofKind('TOOL_RESULT')
            .saying('result')
            .withPayload({ tool_call_id: (original.rawPayload as { id: string }).id })
            .build(),
        ],
      })
    ).ingestEvents.map((r) => r);
    expect(dup).toMatchObject({ status: 'DUPLICATE', event: null });
    expect(conflict).toMatchObject({ status: 'REJECTED', code: 'CONFLICT', event: null });
    expect(conflict?.reason).not.toMatch(/checksum/);
    expect(result?.status).toBe('CREATED');
    expect(result?.event?.toolCall).toBeNull();
    const [readerDup] = (await gqlOk<{ ingestEvents: Result[] }>(t.url, writer, INGEST, { input: [original] })).ingestEvents;
    expect(readerDup?.event?.content).toBe('the secret original');
  });

  it('refuses token names that are empty or huge without echoing them, and lets only an admin of "*" issue tokens to another principal', async () => {
    const create = (token: string, input: Record<string, unknown>) =>
      gql<{ createToken: { info: { principalId: string } } }>(
        t.url,
        token,
        `mutation($input: TokenInput!) { createToken(input: $input) { token info { principalId } } }`,
        { input },
      );
    const grants = [{ namespacePattern: `${ns}/a`, capabilities: ['READ'] }];
    for (const name of ['', '   ', 'x'.repeat(1024 * 1024)]) {
      const res = await create(t.adminToken, { name, grants });
      expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(res.errors?.[0]?.message.length).toBeLessThan(300);
    }
    const prefixAdmin = (await createToken(t, [{ namespacePattern: `${ns}/*`, capabilities: ['ADMIN'] }], 'prefix-admin')).token;
    const admin = (await gqlOk<{ viewer: { principalId: string } }>(t.url, t.adminToken, `{ viewer { principalId } }`)).viewer.principalId;
    const own = (await gqlOk<{ viewer: { principalId: string } }>(t.url, prefixAdmin, `{ viewer { principalId } }`)).viewer.principalId;
    expect((await create(prefixAdmin, { name: 'hijack', principalId: admin, grants })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await create(prefixAdmin, { name: 'mine', principalId: own, grants })).data?.createToken.info.principalId).toBe(own);
    expect((await create(t.adminToken, { name: 'for-them', principalId: own, grants })).data?.createToken.info.principalId).toBe(own);
  });

  it('answers NOT_FOUND for jobProgress on a job the caller cannot see', async () => {
    const other = uniqueNamespace('other');
    const job = (
      await gqlOk<{ rebuildSilver: { id: string } }>(t.url, t.adminToken, `mutation { rebuildSilver(namespace: "${other}", reason: "test") { id } }`)
    ).rebuildSilver.id;
    const client = wsClient(t.url, writer);
    try {
      for (const jobId of [job, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
        const sub = collect(client, `subscription($id: ID!) { jobProgress(jobId: $id) { id } }`, { id: jobId });
        await sub.ready;
        await new Promise((r) => setTimeout(r, 200));
        const codes = sub.received.errors.map((e) => (e as { extensions?: { code?: string } }).extensions?.code);
        expect(codes).toEqual(['NOT_FOUND']);
        sub.stop();
      }
    } finally {
      await client.dispose();
    }
  });
});
