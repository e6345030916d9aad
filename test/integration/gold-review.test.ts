import { randomUUID } from 'node:crypto';
import { getNamedType, GraphQLObjectType, isObjectType } from 'graphql';
import { Client } from 'pg';
import { buildAppSchema } from '../../src/api/schema';
import { reDeriveSilver, seedSilver, SeededSilver } from '../support/silver-seed';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

/** Bob / Bob Smith and Carol / Carol Jones: each pair shares a conversation, so promotion merges it. */
const people = {
  entities: [
    { key: 'bob', name: 'Bob', type: 'person' },
    { key: 'bobSmith', name: 'Bob Smith', type: 'person' },
    { key: 'carol', name: 'Carol', type: 'person' },
    { key: 'carolJones', name: 'Carol Jones', type: 'person' },
  ],
  mentions: [
    { entity: 'bob', conversation: 'c1' },
    { entity: 'bob', conversation: 'c2' },
    { entity: 'bobSmith', conversation: 'c1' },
    { entity: 'bobSmith', conversation: 'c3' },
    { entity: 'carol', conversation: 'c4' },
    { entity: 'carol', conversation: 'c5' },
    { entity: 'carolJones', conversation: 'c4' },
    { entity: 'carolJones', conversation: 'c6' },
  ],
};

interface ClaimSpec {
  key: string;
  subject: string;
  type: 'preference' | 'attribute';
  predicate: string;
  object: string;
  negation?: boolean;
  from: string;
  confidence?: number;
  /** Indexes into the seeded events. */
  events: number[];
}

/** Facts of the merged members that contradict each other once the members are one Gold entity. */
const claims: ClaimSpec[] = [
  // Preference: recency wins (neovim is later).
  { key: 'vim', subject: 'bob', type: 'preference', predicate: 'uses', object: 'vim', from: '2026-01-10T00:00:00Z', events: [0] },
  { key: 'neovim', subject: 'bobSmith', type: 'preference', predicate: 'uses', object: 'neovim', from: '2026-03-08T00:00:00Z', events: [2] },
  // Factual claim: frequency wins (Paris rests on three events, Berlin on one, though newer).
  { key: 'paris', subject: 'bob', type: 'attribute', predicate: 'lives_in', object: 'Paris', from: '2025-01-01T00:00:00Z', events: [0, 1, 3] },
  { key: 'berlin', subject: 'bobSmith', type: 'attribute', predicate: 'lives_in', object: 'Berlin', from: '2026-02-01T00:00:00Z', events: [2] },
  // Negation: "no longer likes coffee" supersedes "likes coffee".
  { key: 'coffee', subject: 'bob', type: 'attribute', predicate: 'likes', object: 'coffee', from: '2026-01-01T00:00:00Z', events: [1] },
  { key: 'noCoffee', subject: 'bobSmith', type: 'attribute', predicate: 'likes', object: 'coffee', negation: true, from: '2026-02-01T00:00:00Z', events: [3] },
  // Low confidence: to the review queue.
  { key: 'initech', subject: 'bob', type: 'attribute', predicate: 'works_at', object: 'Initech', from: '2025-06-01T00:00:00Z', events: [0] },
  {
    key: 'globex',
    subject: 'bobSmith',
    type: 'attribute',
    predicate: 'works_at',
    object: 'Globex',
    from: '2026-01-15T00:00:00Z',
    confidence: 0.55,
    events: [2],
  },
  { key: 'oslo', subject: 'carol', type: 'attribute', predicate: 'lives_in', object: 'Oslo', from: '2025-01-01T00:00:00Z', events: [4] },
  { key: 'rome', subject: 'carolJones', type: 'attribute', predicate: 'lives_in', object: 'Rome', from: '2025-05-01T00:00:00Z', confidence: 0.6, events: [6] },
];

const FACTS = `query($id: ID!, $asOf: DateTime) { goldEntity(id: $id) { facts(asOf: $asOf) { id statement } } }`;
const ABOUT = `query($ns: String!) { about(namespace: $ns, name: "Bob Smith") { id facts { id } } }`;
const QUEUE = `query($ns: String!, $status: String, $first: Int) { reviewQueue(namespace: $ns, status: $status, first: $first) {
  edges { cursor node { id namespace kind rule reason status decision decidedBy decidedAt note
    subjects { id name namespace } goldSubjects { id name namespace } facts { id statement namespace } } }
  pageInfo { hasNextPage endCursor } } }`;
const RESOLVE = `mutation($id: ID!, $decision: String!, $note: String) { resolveReview(id: $id, decision: $decision, note: $note) {
  id status decision decidedBy decidedAt note } }`;

interface QueueNode {
  id: string;
  namespace: string;
  kind: string;
  rule: string;
  reason: string;
  status: string;
  decision: string | null;
  decidedBy: string | null;
  subjects: Array<{ id: string; name: string; namespace: string }>;
  goldSubjects: Array<{ id: string; name: string; namespace: string }>;
  facts: Array<{ id: string; statement: string; namespace: string }>;
}

describe('Gold conflict rules at promotion and the review queue', () => {
  let t: TestApp;
  let db: Client;
  const ns = uniqueNamespace('review');
  const other = uniqueNamespace('review-other');
  let seeded: SeededSilver;
  const ids: Record<string, string> = {};
  const otherIds: Record<string, string> = {};
  let bobGold: string;
  let reviewer: { id: string; token: string };
  let reader: string; // read + list, no review
  let reviewOnly: string; // review, no read
  let stranger: string; // everything on the other namespace only
  let silverBefore: unknown[];
  let firstMessage: string | null;

  const promote = async (namespace: string): Promise<string | null> => {
    const { promote: job } = await gqlOk<{ promote: { id: string } }>(t.url, t.adminToken, `mutation($ns: String!) { promote(namespace: $ns) { id } }`, {
      ns: namespace,
    });
    const done = await eventually(
      async () => {
        const r = await gqlOk<{ job: { status: string; message: string | null } }>(t.url, t.adminToken, `query($id: ID!) { job(id: $id) { status message } }`, {
          id: job.id,
        });
        return r.job.status === 'succeeded' || r.job.status === 'failed' ? r.job : null;
      },
      'the promote job',
      90_000,
    );
    expect(done.status).toBe('succeeded');
    return done.message;
  };
  const settled = (namespace: string) =>
    eventually(
      async () => (await db.query(`SELECT count(*)::int AS n FROM ops.outbox WHERE processed_at IS NULL AND namespace = $1`, [namespace])).rows[0].n === 0,
      'the outbox to drain',
      90_000,
    );
  const addClaims = async (namespace: string, s: SeededSilver, out: Record<string, string>) => {
    const run = (await db.query(`SELECT derivation_run_id::text AS id FROM silver.entities WHERE id = $1`, [s.ids.bob])).rows[0].id as string;
    await db.query('BEGIN');
    for (const c of claims) {
      const id = randomUUID();
      out[c.key] = id;
      const statement = `${c.subject} ${c.negation ? 'no longer ' : ''}${c.predicate} ${c.object}`;
      await db.query(
        `INSERT INTO silver.facts (id, namespace, statement, fact_type, subject_entity_id, predicate, object_value, is_negation, confidence, importance,
                                   valid_from, extraction_model, derivation_run_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 0.5, $10, 'seed', $11)`,
        [id, namespace, statement, c.type, s.ids[c.subject], c.predicate, c.object, c.negation ?? false, c.confidence ?? 0.9, c.from, run],
      );
      for (const e of c.events)
        await db.query(`INSERT INTO silver.fact_sources (fact_id, event_id, span_start, span_end, quote) VALUES ($1, $2, 0, 2, 'ok')`, [id, s.eventIds[e]]);
      await db.query(`INSERT INTO ops.outbox (namespace, aggregate_type, aggregate_id, op, payload) VALUES ($1, 'fact', $2, 'upsert', $3)`, [
        namespace,
        id,
        { id },
      ]);
    }
    await db.query('COMMIT');
  };
  const silverState = async (namespace: string) =>
    (await db.query(`SELECT id, statement, valid_to, superseded_by, retired_at, confidence FROM silver.facts WHERE namespace = $1 ORDER BY id`, [namespace]))
      .rows;
  const factIds = async (token: string, asOf: string | null = null) =>
    (await gqlOk<{ goldEntity: { facts: Array<{ id: string }> } }>(t.url, token, FACTS, { id: bobGold, asOf })).goldEntity.facts.map((f) => f.id).sort();
  const queue = async (token: string, namespace = ns, status: string | null = null, first = 50) =>
    (await gqlOk<{ reviewQueue: { edges: Array<{ node: QueueNode }> } }>(t.url, token, QUEUE, { ns: namespace, status, first })).reviewQueue.edges.map(
      (e) => e.node,
    );
  const counts = async (namespace: string) =>
    (
      await db.query(
        `SELECT (SELECT count(*) FROM gold.claim_decisions WHERE namespace = $1)::int AS decisions,
                (SELECT count(*) FROM gold.review_items WHERE namespace = $1)::int AS items,
                (SELECT string_agg(status, ',' ORDER BY created_at, id) FROM gold.review_items WHERE namespace = $1) AS statuses`,
        [namespace],
      )
    ).rows[0];

  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50', GOLD_PROMOTE_EVERY_SECONDS: '0' });
    db = new Client({ connectionString: t.databaseUrl });
    await db.connect();
    seeded = await seedSilver(t, ns, people);
    await addClaims(ns, seeded, ids);
    await addClaims(other, await seedSilver(t, other, people), otherIds);
    await settled(ns);
    await settled(other);
    silverBefore = await silverState(ns);
    firstMessage = await promote(ns);
    await promote(other);
    await settled(ns);
    await settled(other);
    bobGold = (await db.query(`SELECT gold_entity_id::text AS id FROM gold.entity_members WHERE silver_entity_id = $1`, [seeded.ids.bob])).rows[0].id;
    reviewer = await createToken(t, [{ namespacePattern: ns, capabilities: ['READ', 'REVIEW'] }], 'reviewer');
    reader = (await createToken(t, [{ namespacePattern: ns, capabilities: ['READ', 'LIST'] }])).token;
    reviewOnly = (await createToken(t, [{ namespacePattern: ns, capabilities: ['REVIEW'] }])).token;
    stranger = (await createToken(t, [{ namespacePattern: other, capabilities: ['READ', 'LIST', 'REVIEW'] }])).token;
  }, 240_000);
  afterAll(async () => {
    await db?.end();
    await t?.stop();
  });

  it('decides by the rules at promotion, logs every decision with its rule and reason, and writes no Silver row', async () => {
    expect(firstMessage).toMatch(/conflicts 3 decided, 2 queued for review/);
    const { rows } = await db.query(
      `SELECT rule, outcome, kind, winner_ids::text[] AS winners, loser_ids::text[] AS losers, superseded_from, reason, run_id::text AS run
         FROM gold.claim_decisions WHERE namespace = $1 ORDER BY rule, outcome, reason`,
      [ns],
    );
    const by = (rule: string, outcome: string) => rows.filter((r) => r.rule === rule && r.outcome === outcome);
    expect(by('recency', 'supersede')).toEqual([
      expect.objectContaining({ kind: 'value_conflict', winners: [ids.neovim], losers: [ids.vim], superseded_from: new Date('2026-03-08T00:00:00Z') }),
    ]);
    expect(by('frequency', 'supersede')).toEqual([
      expect.objectContaining({ winners: [ids.paris], losers: [ids.berlin], reason: expect.stringMatching(/3 source events/) }),
    ]);
    expect(by('negation', 'supersede')).toEqual([expect.objectContaining({ kind: 'negation_conflict', winners: [ids.noCoffee], losers: [ids.coffee] })]);
    expect(by('frequency', 'queue').map((r) => r.reason)).toEqual(
      expect.arrayContaining([
        `low confidence: ${ids.globex} at 0.55 (below GOLD_REVIEW_CONFIDENCE 0.7)`,
        `low confidence: ${ids.rome} at 0.60 (below GOLD_REVIEW_CONFIDENCE 0.7)`,
      ]),
    );
    expect(rows).toHaveLength(5);
    // Reasons name ids and figures, never the facts' words.
    for (const r of rows) expect(r.reason).not.toMatch(/vim|Paris|Berlin|coffee|Initech|Globex|Oslo|Rome/);
    expect(new Set(rows.map((r) => r.run)).size).toBe(1);
    expect(await silverState(ns)).toEqual(silverBefore);
  });

  it('GoldEntity.facts and about leave out what was superseded at Gold; before the winner began, the loser was valid', async () => {
    const current = await factIds(reader);
    for (const k of ['neovim', 'paris', 'noCoffee', 'initech', 'globex']) expect(current).toContain(ids[k]);
    for (const k of ['vim', 'berlin', 'coffee']) expect(current).not.toContain(ids[k]);
    const about = await gqlOk<{ about: { id: string; facts: Array<{ id: string }> } }>(t.url, reader, ABOUT, { ns });
    expect(about.about.id).toBe(bobGold);
    expect(about.about.facts.map((f) => f.id).sort()).toEqual(current);
    // 2026-02-15: vim (from 2026-01-10) is still the preference, neovim (from 2026-03-08) not yet; coffee was negated on 2026-02-01.
    const feb = await factIds(reader, '2026-02-15T00:00:00Z');
    expect(feb).toContain(ids.vim);
    expect(feb).not.toContain(ids.neovim);
    expect(feb).not.toContain(ids.coffee);
    expect(await factIds(reader, '2026-01-05T00:00:00Z')).toContain(ids.coffee);
  });

  it('GoldEntity.preferences leaves out the preference superseded at Gold, from the winner on', async () => {
    const PREFS = `query($id: ID!, $asOf: DateTime) { goldEntity(id: $id) { preferences(asOf: $asOf) { fact { id } } } }`;
    const prefs = async (asOf: string | null) =>
      (await gqlOk<{ goldEntity: { preferences: Array<{ fact: { id: string } }> } }>(t.url, reader, PREFS, { id: bobGold, asOf })).goldEntity.preferences.map(
        (p) => p.fact.id,
      );
    const now = await prefs(null);
    expect(now).toContain(ids.neovim);
    expect(now).not.toContain(ids.vim);
    const feb = await prefs('2026-02-15T00:00:00Z');
    expect(feb).toContain(ids.vim);
    expect(feb).not.toContain(ids.neovim);
  });

  it('a low-confidence contradiction waits in the queue; a reviewer’s KEEP is applied on facts and about and logged, once', async () => {
    const pending = await queue(reviewer.token, ns, 'PENDING');
    expect(pending.map((i) => i.status)).toEqual(['PENDING', 'PENDING']);
    const item = pending.find((i) => i.facts.some((f) => f.id === ids.globex)) as QueueNode;
    expect(item).toMatchObject({ namespace: ns, kind: 'value_conflict', rule: 'frequency', decision: null, decidedBy: null });
    expect(item.facts.map((f) => f.id).sort()).toEqual([ids.initech, ids.globex].sort());
    expect(item.subjects.map((s) => s.name).sort()).toEqual(['Bob', 'Bob Smith']);
    expect(item.goldSubjects.map((g) => g.id)).toEqual([bobGold]);
    expect(await factIds(reader)).toContain(ids.globex); // undecided: both stand

    const bad = await gql(t.url, reviewer.token, RESOLVE, { id: item.id, decision: 'KEEP:someone' });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(bad.errors?.[0]?.message).toMatch(/KEEP:<factId>.*KEEP_ALL or DISMISS/);
    const foreignFact = await gql(t.url, reviewer.token, RESOLVE, { id: item.id, decision: `KEEP:${ids.paris}` });
    expect(foreignFact.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');

    const done = await gqlOk<{ resolveReview: { status: string; decision: string; decidedBy: string; decidedAt: string; note: string } }>(
      t.url,
      reviewer.token,
      RESOLVE,
      { id: item.id, decision: `KEEP:${ids.initech}`, note: 'HR records say Initech' },
    );
    expect(done.resolveReview).toMatchObject({ status: 'RESOLVED', decision: `KEEP:${ids.initech}`, decidedBy: reviewer.id, note: 'HR records say Initech' });
    expect(done.resolveReview.decidedAt).toEqual(expect.any(String));
    const current = await factIds(reader);
    expect(current).toContain(ids.initech);
    expect(current).not.toContain(ids.globex);
    const about = await gqlOk<{ about: { facts: Array<{ id: string }> } }>(t.url, reader, ABOUT, { ns });
    expect(about.about.facts.map((f) => f.id)).not.toContain(ids.globex);
    // Before Initech's start, Globex (from 2026-01-15, after it) was never valid at Gold: it is hidden at every date after Initech began.
    expect(await factIds(reader, '2026-02-01T00:00:00Z')).not.toContain(ids.globex);
    const { rows } = await db.query(
      `SELECT source, rule, outcome, winner_ids::text[] AS winners, loser_ids::text[] AS losers, decided_by, reason, review_item_id::text AS item
         FROM gold.claim_decisions WHERE namespace = $1 AND source = 'review'`,
      [ns],
    );
    expect(rows).toEqual([
      {
        source: 'review',
        rule: 'review',
        outcome: 'supersede',
        winners: [ids.initech],
        losers: [ids.globex],
        decided_by: reviewer.id,
        reason: `review: KEEP:${ids.initech} (HR records say Initech)`,
        item: item.id,
      },
    ]);
    // Decided once: a second decision is refused and changes nothing.
    const again = await gql(t.url, t.adminToken, RESOLVE, { id: item.id, decision: 'DISMISS' });
    expect(again.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(again.errors?.[0]?.message).toMatch(/RESOLVED already .*decided once/);
    expect((await queue(reviewer.token, ns, 'RESOLVED')).map((i) => [i.id, i.decision])).toEqual([[item.id, `KEEP:${ids.initech}`]]);
    expect((await db.query(`SELECT count(*)::int AS n FROM gold.claim_decisions WHERE namespace = $1 AND source = 'review'`, [ns])).rows[0].n).toBe(1);
    const badStatus = await gql(t.url, reviewer.token, QUEUE, { ns, status: 'DONE', first: 5 });
    expect(badStatus.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('needs "review", hides items across namespaces, and shows nested rows only with "read" on the item’s namespace', async () => {
    const [item] = await queue(t.adminToken, ns, 'PENDING');
    if (!item) throw new Error('no pending item');
    const forbidden = await gql(t.url, reader, QUEUE, { ns, status: null, first: 5 });
    expect(forbidden.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const noReview = await gql(t.url, reader, RESOLVE, { id: item.id, decision: 'KEEP_ALL' });
    expect(noReview.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    // Another namespace's token: neither the queue nor the item, not even whether it exists.
    expect((await gql(t.url, stranger, QUEUE, { ns, status: null, first: 5 })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const foreign = await gql(t.url, stranger, RESOLVE, { id: item.id, decision: 'KEEP_ALL' });
    expect(foreign.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(foreign.errors?.[0]?.message).not.toContain(ns);
    // The same answer as for an id that does not exist.
    const nobody = randomUUID();
    const missing = await gql(t.url, stranger, RESOLVE, { id: nobody, decision: 'KEEP_ALL' });
    expect(missing.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(foreign.errors?.[0]?.message).toBe(missing.errors?.[0]?.message?.replace(nobody, item.id));
    // Its own namespace: only its own rows, everywhere in the answer.
    const own = await queue(stranger, other);
    expect(own).toHaveLength(2);
    const namespaces: string[] = [];
    walk(own, namespaces);
    expect(new Set(namespaces)).toEqual(new Set([other]));
    // "review" without "read": the queue, but no facts or entities.
    const blind = await queue(reviewOnly, ns, 'PENDING');
    expect(blind.map((i) => i.id)).toEqual([item.id]);
    expect(blind[0]).toMatchObject({ subjects: [], goldSubjects: [], facts: [] });
    // The item is unchanged by all of the above.
    expect((await queue(t.adminToken, ns, 'PENDING')).map((i) => i.status)).toEqual(['PENDING']);
  });

  it('walks every field of ReviewItem (read from the schema, so a new one is covered) without leaving the namespace', async () => {
    const schema = await buildAppSchema();
    const type = schema.getType('ReviewItem') as GraphQLObjectType;
    const selection = Object.values(type.getFields())
      .map((f) => {
        const named = getNamedType(f.type);
        if (!isObjectType(named)) return f.name;
        const fields = named.getFields();
        return `${f.name} { id ${'namespace' in fields ? 'namespace' : ''} }`;
      })
      .join(' ');
    const q = `query($ns: String!) { reviewQueue(namespace: $ns, first: 10) { edges { node { ${selection} } } } }`;
    for (const [token, namespace] of [
      [t.adminToken, ns],
      [reviewer.token, ns],
      [stranger, other],
    ] as const) {
      const res = await gqlOk<{ reviewQueue: { edges: Array<{ node: Record<string, unknown> }> } }>(t.url, token, q, { ns: namespace });
      expect(res.reviewQueue.edges.length).toBe(2);
      const namespaces: string[] = [];
      walk(res, namespaces);
      expect(namespaces.length).toBeGreaterThan(2 * 4); // the items, their subjects, Gold subjects and facts
      expect(new Set(namespaces)).toEqual(new Set([namespace]));
    }
    // Every object field of ReviewItem is one of these; a new one fails here until its grants are checked above.
    const objectFields = Object.values(type.getFields())
      .filter((f) => isObjectType(getNamedType(f.type)))
      .map((f) => f.name)
      .sort();
    expect(objectFields).toEqual(['facts', 'goldSubjects', 'subjects']);
  });

  it('a second promotion changes nothing and does not reopen a resolved item; after a Silver rebuild the decisions still hold', async () => {
    const before = await counts(ns);
    const current = await factIds(reader);
    expect(await promote(ns)).toMatch(/conflicts 0 decided, 0 queued for review/);
    expect(await counts(ns)).toEqual(before);
    expect(await factIds(reader)).toEqual(current);
    const statements = async () =>
      (await gqlOk<{ goldEntity: { facts: Array<{ statement: string }> } }>(t.url, reader, FACTS, { id: bobGold, asOf: null })).goldEntity.facts
        .map((f) => f.statement)
        .sort();
    const shown = await statements();
    expect(shown).not.toContain('bobSmith works_at Globex');
    // A rebuild re-creates every fact under a new id (with lineage): the same conflicts, the same keys.
    await reDeriveSilver(t, ns);
    await settled(ns);
    expect(await promote(ns)).toMatch(/conflicts 0 decided, 0 queued for review/);
    await settled(ns);
    expect(await counts(ns)).toEqual(before);
    const rebuilt = await factIds(reader);
    expect(rebuilt.some((id) => current.includes(id))).toBe(false);
    expect(await statements()).toEqual(shown);
    // The queue still shows the old fact ids (retired now, as Silver keeps them).
    expect((await queue(reviewer.token, ns)).map((i) => i.status)).toEqual(before.statuses.split(','));
  }, 240_000);

  it('a fact superseded at Gold takes part in no new conflict: more evidence for the kept fact does not re-open the question', async () => {
    const before = await counts(ns);
    const bob = (await db.query(`SELECT id::text AS id FROM silver.entities WHERE namespace = $1 AND name = 'Bob' AND retired_at IS NULL`, [ns])).rows[0].id;
    const run = (await db.query(`SELECT derivation_run_id::text AS id FROM silver.entities WHERE id = $1`, [bob])).rows[0].id;
    const again = randomUUID();
    await db.query(
      `INSERT INTO silver.facts (id, namespace, statement, fact_type, subject_entity_id, predicate, object_value, confidence, importance, valid_from, extraction_model, derivation_run_id)
       VALUES ($1, $2, 'Bob works at Initech (again)', 'attribute', $3, 'works_at', 'Initech', 0.9, 0.5, '2026-04-01T00:00:00Z', 'seed', $4)`,
      [again, ns, bob, run],
    );
    await db.query(`INSERT INTO silver.fact_sources (fact_id, event_id, span_start, span_end, quote) VALUES ($1, $2, 0, 2, 'ok')`, [again, seeded.eventIds[1]]);
    // Without the filter this would be {Initech, Initech again, Globex}: a new key, and Globex (0.55) would be queued again.
    expect(await promote(ns)).toMatch(/conflicts 0 decided, 0 queued for review/);
    expect(await counts(ns)).toEqual(before);
  });

  // Last: stops the background loops so that only the request's own statements are counted.
  it('reads a page of the queue with its facts and subjects in the same number of SQL statements for one item or several', async () => {
    await t.app.stages.stop();
    const measure = async (first: number) => {
      t.app.queryCounter.reset();
      const items = await queue(t.adminToken, ns, null, first);
      return { items, sql: t.app.queryCounter.count };
    };
    const one = await measure(1);
    const two = await measure(2);
    expect(one.items).toHaveLength(1);
    expect(two.items).toHaveLength(2);
    expect(two.items.every((i) => i.facts.length === 2 && i.subjects.length >= 1 && i.goldSubjects.length === 1)).toBe(true);
    // The token, the page, the Silver entities, the Gold entities, the facts with their overlays, and
    // the namespace's active event redactions for the names it hides (silver/hidden-names.ts; read
    // twice, for the Silver and for the Gold entities).
    expect(one.sql).toBe(8);
    expect(two.sql).toBe(one.sql);
  });
});

/** `namespace` of every object anywhere in a response. */
function walk(value: unknown, namespaces: string[]): void {
  if (Array.isArray(value)) return value.forEach((v) => walk(v, namespaces));
  if (value === null || typeof value !== 'object') return;
  const o = value as Record<string, unknown>;
  if (typeof o.namespace === 'string') namespaces.push(o.namespace);
  Object.values(o).forEach((v) => walk(v, namespaces));
}
