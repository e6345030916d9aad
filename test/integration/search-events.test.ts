import { Client } from 'pg';
import { createLoaders } from '../../src/scope/request-scope';
import { searchLoaders } from '../../src/graph/evidence';
import { QueryRunner } from 'typeorm';
import { EventContextReprojection1764400000800 } from '../../migrations/1764400000800-event-context-reprojection';
import { EventSpeakerReprojection1764400000970 } from '../../migrations/1764400000970-event-speaker-reprojection';
import { DEFAULT_SEARCH_SETTINGS, lazyEmbedder, SearchService } from '../../src/graph/search.service';
import { loadEmbedder } from '../../src/app/models';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`;
const PENDING = `query($ns: String!) { pipelineStatus(namespace: $ns) { pending outboxLag } }`;
const SEARCH = `query($ns: String!, $q: String!, $limit: Int, $asOf: DateTime, $filter: SearchFilter) {
  searchMemory(namespace: $ns, query: $q, limit: $limit, asOf: $asOf, filter: $filter) {
    kind score channels
    fact { id namespace statement }
    event { id namespace content occurredAt }
    evidence { id namespace content }
  }
}`;

interface Hit {
  kind: 'FACT' | 'EVENT';
  score: number;
  channels: string[];
  fact: { id: string; namespace: string; statement: string } | null;
  event: { id: string; namespace: string; content: string; occurredAt: string } | null;
  evidence: Array<{ id: string; namespace: string; content: string }>;
}

const NEIGHBOURS = 600;

/**
 * Raw events as a recall channel of searchMemory, with the default offline embedder: findable
 * before derivation, scoped to the namespace inside each index query, asOf over occurredAt, and
 * a current fact above the stale turn it superseded.
 */
describe('searchMemory over raw events (the Bronze channel, through the projection)', () => {
  let t: TestApp;
  let pg: Client;
  let token: string;
  const ns = uniqueNamespace('recall');
  const noisy = uniqueNamespace('recall-noisy');

  const ingest = (events: unknown[]) => gqlOk(t.url, token, INGEST, { input: events });
  const search = async (vars: Record<string, unknown>): Promise<Hit[]> =>
    (await gqlOk<{ searchMemory: Hit[] }>(t.url, token, SEARCH, { ns, ...vars })).searchMemory;
  const status = async (namespace: string) =>
    (await gqlOk<{ pipelineStatus: { pending: number; outboxLag: number } }>(t.url, token, PENDING, { ns: namespace })).pipelineStatus;
  const settled = (namespace: string) =>
    eventually(
      async () => {
        const s = await status(namespace);
        return s.pending === 0 && s.outboxLag === 0;
      },
      `${namespace} to settle`,
      180_000,
    );

  beforeAll(async () => {
    // Derivation waits 30 s for a batch (and not for a quiet namespace), so a lone event is searchable only through its projection at first.
    t = await startTestApp({ DERIVE_MAX_WAIT_MS: '30000', DERIVE_QUIET_MS: '0', DERIVE_BATCH_SIZE: '1000', DERIVE_POLL_MS: '50', PROJECTOR_POLL_MS: '50' });
    pg = new Client({ connectionString: t.databaseUrl });
    await pg.connect();
    token = (await createToken(t, [{ namespacePattern: 'recall-*', capabilities: ['INGEST', 'READ', 'LIST', 'SEARCH'] }])).token;
  }, 180_000);
  afterAll(async () => {
    await pg?.end();
    await t?.stop();
  });

  it('finds a raw event as an EVENT hit before it is derived', async () => {
    const fresh = uniqueNamespace('recall-fresh');
    await ingest([
      anEvent(fresh).inConversation('c0', 1).by('USER').saying('The spare key is under the blue flowerpot').at('2026-02-01T10:00:00.000Z').build(),
    ]);
    // Both raw-event channels find it (the first search of a process may still be loading the model).
    const hit = await eventually(
      async () => {
        const hits = (await gqlOk<{ searchMemory: Hit[] }>(t.url, token, SEARCH, { ns: fresh, q: 'where is the spare key?' })).searchMemory;
        return hits.find((h) => h.kind === 'EVENT' && h.channels.includes('event_vector') && h.channels.includes('event_keyword'));
      },
      'the fresh event to be searchable by both event channels',
      25_000,
    );
    // Not derived yet: the projection runs on its own, ahead of derivation.
    expect((await status(fresh)).pending).toBe(1);
    expect(hit.event?.content).toBe('The spare key is under the blue flowerpot');
    expect(hit.evidence.map((e) => e.id)).toEqual([hit.event?.id]);
    const { rows } = await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM silver.event_embeddings WHERE event_id = $1`, [hit.event?.id]);
    expect(rows[0]?.n).toBe(1);
  });

  it('ranks the current fact first, above the stale turn it superseded, with its own turn folded in', async () => {
    await ingest([anEvent(ns).inConversation('c1', 1).by('USER').saying('I use vim for everything').at('2026-01-10T09:00:00.000Z').build()]);
    await eventually(async () => (await pg.query(`SELECT 1 FROM silver.facts WHERE namespace = $1`, [ns])).rowCount, 'the vim fact', 120_000);
    await ingest([
      anEvent(ns)
        .inConversation('c1', 2)
        .by('USER')
        .saying('I switched to neovim last week')
        .withPayload({ client: 'cli', lsp: true })
        .at('2026-03-08T09:00:00.000Z')
        .build(),
      anEvent(ns).inConversation('c1', 3).by('USER').saying('I live in Berlin').at('2026-03-09T09:00:00.000Z').build(),
      anEvent(ns).inConversation('c1', 4).by('USER').saying('My sister Anna lives in Lisbon').at('2026-03-10T09:00:00.000Z').build(),
    ]);
    await settled(ns);

    const hits = await search({ q: 'which editor does the user use?' });
    expect(hits[0]?.kind).toBe('FACT');
    expect(hits[0]?.fact?.statement).toMatch(/neovim/i);
    expect(hits[0]?.evidence.map((e) => e.content)).toEqual(['I switched to neovim last week']);
    expect(hits.some((h) => h.kind === 'EVENT' && h.event?.content === 'I switched to neovim last week')).toBe(false);
    const stale = hits.findIndex((h) => h.kind === 'EVENT' && h.event?.content === 'I use vim for everything');
    expect(stale).toBeGreaterThan(0);
    expect(hits.every((h) => (h.fact ?? h.event)?.namespace === ns && h.evidence.every((e) => e.namespace === ns))).toBe(true);
  });

  it('answers a question asking when with the hit that holds a time, above one that shares more of its words', async () => {
    const dentist = uniqueNamespace('recall-when');
    await ingest(
      [
        'My dentist appointment always makes me anxious, every dentist appointment is awful',
        'Booked the dentist for Tuesday at 9',
        'My sister is visiting in the spring',
      ].map((text, i) =>
        anEvent(dentist)
          .inConversation('c-when', i + 1)
          .by('USER')
          .saying(text)
          .at(`2026-03-0${i + 2}T09:00:00.000Z`)
          .build(),
      ),
    );
    await settled(dentist);
    const hits = (await gqlOk<{ searchMemory: Hit[] }>(t.url, token, SEARCH, { ns: dentist, q: 'When is my dentist appointment?' })).searchMemory;
    const first = hits[0];
    expect(`${first?.fact?.statement ?? ''} ${first?.event?.content ?? ''} ${first?.evidence.map((e) => e.content).join(' ')}`).toMatch(/Tuesday/);
  });

  it('applies asOf to events: only what had occurred by then', async () => {
    const before = await search({ q: 'which editor does the user use?', asOf: '2026-02-01T00:00:00.000Z' });
    expect(before.length).toBeGreaterThan(0);
    expect(before.flatMap((h) => h.evidence.map((e) => e.content))).toEqual(['I use vim for everything']);
    const events = await search({ q: 'Berlin sister neovim vim', asOf: '2026-03-08T12:00:00.000Z', filter: { kinds: ['EVENT'] } });
    expect(events.every((h) => h.kind === 'EVENT' && Date.parse(h.event?.occurredAt ?? '') <= Date.parse('2026-03-08T12:00:00.000Z'))).toBe(true);
  });

  it('returns only the kinds asked for; fact-only filters imply facts', async () => {
    const events = await search({ q: 'neovim Berlin', limit: 20, filter: { kinds: ['EVENT'] } });
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((h) => h.kind === 'EVENT' && h.fact === null)).toBe(true);
    const facts = await search({ q: 'neovim Berlin', limit: 20, filter: { factTypes: ['preference', 'attribute', 'relationship', 'event', 'plan'] } });
    expect(facts.length).toBeGreaterThan(0);
    expect(facts.every((h) => h.kind === 'FACT')).toBe(true);
  });

  it('never leaks a large, similar neighbour through the event channels, on the exact and the index path', async () => {
    const noise = Array.from({ length: NEIGHBOURS }, (_, i) =>
      anEvent(noisy)
        .inConversation(`n${i % 20}`, i)
        .by('USER')
        .saying(`Bob${i} switched to neovim and lives in Berlin`)
        .at('2026-03-10T09:00:00.000Z')
        .build(),
    );
    for (let i = 0; i < noise.length; i += 200) await ingest(noise.slice(i, i + 200));
    await eventually(async () => (await status(noisy)).outboxLag === 0, 'the neighbour to be projected', 240_000);
    const projected = await t.app.neo4j.executeQuery(`MATCH (e:Event) WHERE e.namespace = $ns AND e.embedding IS NOT NULL RETURN count(e) AS n`, { ns: noisy });
    expect(Number(projected.records[0]?.get('n'))).toBe(NEIGHBOURS);

    const q = 'Bob switched to neovim and lives in Berlin';
    const hits = await search({ q, limit: 50, filter: { kinds: ['EVENT'] } });
    expect(hits.length).toBeGreaterThanOrEqual(3);
    expect(hits.every((h) => h.event?.namespace === ns)).toBe(true);

    // The index path (what a namespace above the exact-cosine size takes) stays scoped and is not starved.
    const auth = await t.app.services.tokens.authenticate(`Bearer ${token}`);
    const load = searchLoaders(createLoaders(t.app.services));
    const embedder = lazyEmbedder(() => loadEmbedder(t.app.config, () => undefined));
    const viaIndex = await new SearchService(t.app.neo4j, embedder, { ...DEFAULT_SEARCH_SETTINGS, exactMaxFacts: 0 })
      .search(auth, { namespace: ns, query: q, limit: 4, filter: { kinds: ['EVENT'] } }, load)
      .finally(() => embedder.close());
    expect(viaIndex).toHaveLength(4);
    expect(viaIndex.every((h) => h.event?.namespace === ns)).toBe(true);

    // And the neighbour's own search sees only its events.
    const theirs = (await gqlOk<{ searchMemory: Hit[] }>(t.url, token, SEARCH, { ns: noisy, q: 'I use vim for everything', limit: 50 })).searchMemory;
    expect(theirs.every((h) => (h.fact ?? h.event)?.namespace === noisy)).toBe(true);
  });

  it('finds a reply by the words of the turn before it, above that bare question, and no longer once those words are redacted', async () => {
    const conv = uniqueNamespace('recall-context');
    const turn = (seq: number, text: string) =>
      anEvent(conv).inConversation('trip', seq).inSession('s1').by('USER').saying(text).at('2026-04-02T18:00:00.000Z').build();
    await ingest([
      turn(1, 'What did you bring back from Kyoto?'),
      turn(2, 'Mostly green tea and a paper lantern!'),
      turn(3, 'Nice, I will come by to see the lantern.'),
    ]);
    await eventually(async () => (await status(conv)).outboxLag === 0, 'the turns to be projected', 60_000);
    const byKeyword = async () =>
      (await gqlOk<{ searchMemory: Hit[] }>(t.url, token, SEARCH, { ns: conv, q: 'Kyoto', limit: 10, filter: { kinds: ['EVENT'] } })).searchMemory
        .filter((h) => h.channels.includes('event_keyword'))
        .map((h) => h.event?.content);
    // The question holds the word, the reply has it only as context (the third turn's context is the reply): both are found.
    // A bare question states nothing (eventInformation, × 0.7), so the reply, which holds the answer, is ranked first.
    expect(await byKeyword()).toEqual(['Mostly green tea and a paper lantern!', 'What did you bring back from Kyoto?']);

    const question = (await pg.query<{ id: string }>(`SELECT id::text AS id FROM bronze.events WHERE namespace = $1 AND sequence_num = 1`, [conv])).rows[0]?.id;
    const ADD = `mutation($input: OverlayInput!) { addOverlay(input: $input) { id } }`;
    await gqlOk(t.url, t.adminToken, ADD, { input: { eventId: question, kind: 'REDACTION', exact: 'Kyoto', reason: 'the trip is private' } });
    // The redacted question is re-projected and its successor's context follows it: neither is found by the word.
    await eventually(async () => (await byKeyword()).length === 0, 'the redacted word to leave the event keyword channel', 60_000);
    const kept = await t.app.neo4j.executeQuery(
      `MATCH (e:Event) WHERE e.namespace = $ns AND (e.content CONTAINS 'Kyoto' OR e.context CONTAINS 'Kyoto') RETURN e.id AS id`,
      {
        ns: conv,
      },
    );
    expect(kept.records).toEqual([]);
  });

  it('ranks an event by what readers may see of it: a redacted word weighs as if it had never been written', async () => {
    // The same turns twice: in one namespace a span is redacted, in the other the text never held it.
    const hid = uniqueNamespace('recall-hid');
    const never = uniqueNamespace('recall-never');
    const said = (namespace: string, texts: string[]) =>
      ingest(
        texts.map((text, i) =>
          anEvent(namespace)
            .by('USER')
            .saying(text)
            .at(`2026-04-0${i + 1}T09:00:00.000Z`)
            .build(),
        ),
      );
    const others = ['I need to book the dentist appointment soon', 'The dentist appointment was a hassle to book'];
    await said(hid, ['The dentist appointment is on Friday at 4pm', ...others]);
    await said(never, ['The dentist appointment is [redacted]', ...others]);
    const hidden = (await pg.query<{ id: string }>(`SELECT id::text AS id FROM bronze.events WHERE namespace = $1 AND content LIKE '%4pm'`, [hid])).rows[0]?.id;
    await gqlOk(t.url, t.adminToken, `mutation($input: OverlayInput!) { addOverlay(input: $input) { id } }`, {
      input: { eventId: hidden, kind: 'REDACTION', exact: 'on Friday at 4pm', reason: 'private' },
    });
    await eventually(
      async () => {
        const r = await t.app.neo4j.executeQuery(`MATCH (e:Event {id: $id}) RETURN e.content AS content`, { id: hidden });
        return (await status(never)).outboxLag === 0 && r.records[0]?.get('content') === 'The dentist appointment is [redacted]';
      },
      'the redaction to reach the projection',
      60_000,
    );
    // A question for a time: a turn that holds one is worth more (answerFit), so the hidden time must not count.
    const scores = async (namespace: string) =>
      Object.fromEntries(
        (
          await gqlOk<{ searchMemory: Hit[] }>(t.url, token, SEARCH, {
            ns: namespace,
            q: 'When is the dentist appointment?',
            limit: 10,
            filter: { kinds: ['EVENT'] },
          })
        ).searchMemory.map((h) => [h.event?.content, Number(h.score.toFixed(6))]),
      );
    const seen = await scores(hid);
    expect(Object.keys(seen)).toHaveLength(3);
    expect(seen).toEqual(await scores(never));
  });

  it('gives turns projected before contexts existed their context through the upgrade migration', async () => {
    const old = uniqueNamespace('recall-upgrade');
    await ingest(
      ['Are you going to the pottery class?', 'Yes, every Tuesday.'].map((text, i) =>
        anEvent(old)
          .inConversation('c', i + 1)
          .by('USER')
          .saying(text)
          .at('2026-04-03T18:00:00.000Z')
          .build(),
      ),
    );
    await eventually(async () => (await status(old)).outboxLag === 0, 'the turns to be projected', 60_000);
    // As an earlier version projected them: no context.
    await t.app.neo4j.executeQuery(`MATCH (e:Event) WHERE e.namespace = $ns REMOVE e.context, e.contextEventId`, { ns: old });
    const reply = async () =>
      (
        await t.app.neo4j.executeQuery(`MATCH (e:Event) WHERE e.namespace = $ns AND e.content STARTS WITH 'Yes' RETURN e.context AS context`, { ns: old })
      ).records[0]?.get('context') as string | null;
    expect(await reply()).toBeNull();
    await new EventContextReprojection1764400000800().up({ query: (sql: string) => pg.query(sql) } as unknown as QueryRunner);
    await eventually(async () => (await reply()) === 'Are you going to the pottery class?', 'the re-projected reply to carry its context', 60_000);
  });

  it('matches a speaker by who said a turn, not as a word of it: a turn that says nothing cannot rank by its label', async () => {
    const chat = uniqueNamespace('recall-speaker');
    const say = (seq: number, actor: string, text: string) =>
      anEvent(chat).inConversation('group', seq).inSession('s1').by('USER', actor).saying(`${actor}: ${text}`).at('2026-04-05T18:00:00.000Z').build();
    await ingest([
      say(1, 'Jamie', '?'),
      say(2, 'Kat', 'lol'),
      say(3, 'Jamie', 'ok'),
      say(4, 'Kat', 'did u get the tent Jamie'),
      say(5, 'Jamie', 'yep the orange two-person tent, fits in my backpack'),
      say(6, 'Marco', 'Jamie?'),
    ]);
    await eventually(async () => (await status(chat)).outboxLag === 0, 'the turns to be projected', 60_000);
    // What the graph holds: the label is the speaker, not a word of the body (the keyword channel reads both, apart).
    const nodes = await t.app.neo4j.executeQuery(`MATCH (e:Event) WHERE e.namespace = $ns RETURN e.speaker AS speaker, e.body AS body ORDER BY e.sequenceNum`, {
      ns: chat,
    });
    expect(nodes.records.map((r) => [r.get('speaker'), r.get('body')])).toEqual([
      ['Jamie', '?'],
      ['Kat', 'lol'],
      ['Jamie', 'ok'],
      ['Kat', 'did u get the tent Jamie'],
      ['Jamie', 'yep the orange two-person tent, fits in my backpack'],
      ['Marco', 'Jamie?'],
    ]);
    const hits = (
      await gqlOk<{ searchMemory: Hit[] }>(t.url, token, SEARCH, { ns: chat, q: 'Which tent did Jamie get?', limit: 3, filter: { kinds: ['EVENT'] } })
    ).searchMemory;
    expect(hits[0]?.event?.content).toBe('Jamie: yep the orange two-person tent, fits in my backpack');
    // Turns that say nothing ("Jamie: ?", "Jamie: ok", "Marco: Jamie?") stay out of the first three.
    expect(hits.map((h) => h.event?.content)).not.toEqual(expect.arrayContaining(['Jamie: ?']));
    expect(hits.map((h) => h.event?.content)).not.toEqual(expect.arrayContaining(['Jamie: ok']));
    // By keyword alone, the name matches every turn of Jamie's at the speaker's low weight: the turn asking about the tent outranks a bare "Jamie: ok".
    const byKeyword = (
      await gqlOk<{ searchMemory: Hit[] }>(t.url, token, SEARCH, { ns: chat, q: 'Jamie', limit: 10, filter: { kinds: ['EVENT'] } })
    ).searchMemory.filter((h) => h.channels.includes('event_keyword'));
    const rank = (content: string) => byKeyword.findIndex((h) => h.event?.content === content);
    expect(rank('Kat: did u get the tent Jamie')).toBeGreaterThanOrEqual(0);
    expect(rank('Kat: did u get the tent Jamie')).toBeLessThan(rank('Jamie: ok'));
  });

  it('gives turns projected before speakers were a field their body and speaker through the upgrade migration', async () => {
    const old = uniqueNamespace('recall-speaker-upgrade');
    await ingest([anEvent(old).inConversation('c', 1).by('USER', 'Kat').saying('Kat: my interview is on Thursday').at('2026-04-06T09:00:00.000Z').build()]);
    await eventually(async () => (await status(old)).outboxLag === 0, 'the turn to be projected', 60_000);
    // As an earlier version projected it: content only (no body, speaker or word keys).
    await t.app.neo4j.executeQuery(`MATCH (e:Event) WHERE e.namespace = $ns REMOVE e.body, e.speaker, e.stems`, { ns: old });
    const found = async () =>
      (await gqlOk<{ searchMemory: Hit[] }>(t.url, token, SEARCH, { ns: old, q: 'interview', limit: 5, filter: { kinds: ['EVENT'] } })).searchMemory.filter(
        (h) => h.channels.includes('event_keyword'),
      ).length;
    expect(await found()).toBe(0);
    await new EventSpeakerReprojection1764400000970().up({ query: (sql: string) => pg.query(sql) } as unknown as QueryRunner);
    await eventually(async () => (await found()) === 1, 'the re-projected turn to be found by keyword again', 60_000);
    const node = await t.app.neo4j.executeQuery(`MATCH (e:Event) WHERE e.namespace = $ns RETURN e.speaker AS speaker, e.body AS body`, { ns: old });
    expect([node.records[0]?.get('speaker'), node.records[0]?.get('body')]).toEqual(['Kat', 'my interview is on Thursday']);
  });

  it('shows a search-only caller the hits and their evidence, and nothing beyond them', async () => {
    const searchOnly = (await createToken(t, [{ namespacePattern: ns, capabilities: ['SEARCH'] }], 'search-only')).token;
    const BEYOND = `query($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q, limit: 10) {
      kind fact { statement supersedes { id } supersededBy { id } subject { name } decisions { action } sources { quote event { content rawPayloadText facts { id } } } }
      event { content rawPayload rawPayloadText facts { id } } evidence { content rawPayloadText } } }`;
    const as = async (tok: string) =>
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the test walks whatever the selection returned
      (await gqlOk<{ searchMemory: Array<Record<string, any>> }>(t.url, tok, BEYOND, { ns, q: 'which editor does the user use?' })).searchMemory;
    const limited = await as(searchOnly);
    const full = await as(token);
    expect(limited.length).toBeGreaterThan(0);
    // The hit's own text and the text of the events it rests on are there…
    expect(limited.map((h) => h.fact?.statement ?? h.event?.content)).toEqual(full.map((h) => h.fact?.statement ?? h.event?.content));
    expect(limited.flatMap((h) => h.evidence.map((e: { content: string }) => e.content))).toEqual(
      full.flatMap((h) => h.evidence.map((e: { content: string }) => e.content)),
    );
    // …payloads, other facts, entities and decisions are not (a token with "read" sees them).
    for (const h of limited) {
      for (const e of [...h.evidence, ...(h.event ? [h.event] : []), ...(h.fact?.sources ?? []).map((s: { event: unknown }) => s.event)])
        expect(e.rawPayloadText).toBeNull();
      if (h.event) expect([h.event.rawPayload, h.event.facts]).toEqual([null, []]);
      if (h.fact) expect([h.fact.supersedes, h.fact.supersededBy, h.fact.subject, h.fact.decisions]).toEqual([[], null, null, []]);
    }
    const neovim = full.find((h) => /neovim/i.test(h.fact?.statement ?? ''));
    expect(neovim?.fact.supersedes.length).toBe(1);
    expect(neovim?.fact.subject?.name).toBeTruthy();
    expect(full.some((h) => (h.evidence as Array<{ rawPayloadText: string | null }>).some((e) => e.rawPayloadText !== null))).toBe(true);
  });

  it('refuses a caller without "search" on the namespace', async () => {
    const other = (await createToken(t, [{ namespacePattern: noisy, capabilities: ['SEARCH', 'READ'] }], 'other')).token;
    const denied = await gql(t.url, other, SEARCH, { ns, q: 'neovim' });
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});
