import { Client } from 'pg';
import type { EntityJudgeInput } from '../../src/gold/promotion/promotion.types';
import { JUDGE_ENTITIES_PROMPT_VERSION } from '../../src/gold/promotion/prompts/judge-entities.prompt';
import { createOpenAIModels, OpenAIModelsOptions } from '../../src/models/openai/openai-models';
import { ModelException, ModelExceptionCode } from '../../src/silver/model.exception';
import { defaultHandler, OpenAIStubServer, RecordedRequest, startOpenAIStubServer, StubHandler, stubReply } from '../support/openai-stub-server';
import { seedSilver } from '../support/silver-seed';
import { uniqueNamespace } from '../support/stores';
import { startTestApp, TestApp } from '../support/test-app';
import { runPromotion } from '../support/gold';

// The entity judge's model is faked only at its HTTP boundary: the real `openai` client talks to a
// local OpenAI-compatible server that answers each request from the questions it carries.

interface WireQuestion {
  index: number;
  a: { type: string; name: string; aliases: string[] };
  b: { type: string; name: string; aliases: string[] };
  fallbackType: string;
}

const isEntityJudge = (r: RecordedRequest) => r.body?.response_format?.json_schema?.name === 'judge_entities';
const questionsOf = (r: RecordedRequest): WireQuestion[] => {
  const user = [...(r.body?.messages ?? [])].reverse().find((m: { role: string; content: string }) => m.role === 'user' && m.content.startsWith('{'));
  return JSON.parse(user.content).questions;
};

/** "Same" exactly when the two names are equal ignoring case; across types the non-fallback type wins. */
const sameNameJudge: StubHandler = (req) => {
  if (!isEntityJudge(req)) return defaultHandler(req);
  return stubReply.json({
    decisions: questionsOf(req).map((q) => {
      const same = q.a.name.toLowerCase() === q.b.name.toLowerCase();
      return {
        index: q.index,
        same,
        type: same && q.a.type !== q.b.type ? (q.a.type === q.fallbackType ? q.b.type : q.a.type) : null,
        reason: same ? 'stub: the same name' : 'stub: different things',
      };
    }),
  });
};

const question = (i: number, a: [string, string], b: [string, string]): EntityJudgeInput => ({
  entity: { id: `e${i}`, type: a[0], name: a[1], aliases: [] },
  partner: { id: `p${i}`, type: b[0], name: b[1], aliases: [] },
  trigram: 0.5,
  cosine: 0.7,
  cooccurrence: 0,
  fallbackType: 'concept',
});

describe('OpenAI-compatible entity judge (adapter)', () => {
  let server: OpenAIStubServer;
  const judge = (over: Partial<OpenAIModelsOptions> = {}) => {
    const j = createOpenAIModels({
      apiKey: 'sk-test',
      baseUrl: server.baseUrl,
      judgeModel: 'judge-model',
      timeoutMs: 5000,
      maxRetries: 2,
      concurrency: 2,
      retryBaseDelayMs: 10,
      retryMaxDelayMs: 50,
      ...over,
    }).entityJudge;
    if (!j) throw new Error('no entity judge built');
    return j;
  };

  beforeAll(async () => {
    server = await startOpenAIStubServer({ handler: sameNameJudge });
  });
  afterAll(async () => {
    await server?.close();
  });
  beforeEach(() => {
    server.reset();
    server.setHandler(sameNameJudge);
  });

  it('asks in batches of 20 with a strict schema and returns the decisions in question order', async () => {
    const inputs = Array.from({ length: 25 }, (_, i) =>
      i % 2 === 0 ? question(i, ['person', 'Bob'], ['person', 'bob']) : question(i, ['person', 'Jon'], ['person', 'John']),
    );
    const j = judge();
    expect(j.model).toBe('openai:judge-model');
    expect(j.promptVersion).toBe(JUDGE_ENTITIES_PROMPT_VERSION);
    const decisions = await j.decide(inputs);
    expect(decisions.map((d) => d.same)).toEqual(inputs.map((_, i) => i % 2 === 0));
    expect(decisions.every((d) => d.type === null)).toBe(true);
    const sent = server.requests.filter(isEntityJudge);
    expect(sent.map((r) => questionsOf(r).length)).toEqual([20, 5]);
    expect(sent[0]?.body.model).toBe('judge-model');
    expect(sent[0]?.body.response_format.json_schema.strict).toBe(true);
  });

  it('takes the type the judge names across types, and repairs a cross-type merge that names none', async () => {
    const q = question(0, ['concept', 'bob'], ['person', 'Bob']);
    expect(await judge().decide([q])).toEqual([{ same: true, type: 'person', reason: 'stub: the same name' }]);
    server.reset();
    server.enqueue(stubReply.json({ decisions: [{ index: 0, same: true, type: null, reason: 'same' }] }));
    expect(await judge().decide([q])).toEqual([{ same: true, type: 'person', reason: 'stub: the same name' }]);
    const sent = server.requests.filter(isEntityJudge);
    expect(sent).toHaveLength(2);
    // The repair round shows the model what was wrong.
    expect(JSON.stringify(sent[1]?.body.messages)).toContain('needs \\"type\\" set to the right one');
  });

  it('keeps every pair of a batch apart, with the problem as the reason, when the output stays invalid', async () => {
    server.setHandler((req) => (isEntityJudge(req) ? stubReply.text('they are the same, trust me') : defaultHandler(req)));
    const decisions = await judge().decide([question(0, ['person', 'Bob'], ['person', 'bob']), question(1, ['person', 'Ann'], ['person', 'ann'])]);
    expect(decisions).toHaveLength(2);
    for (const d of decisions) {
      expect(d.same).toBe(false);
      expect(d.reason).toMatch(/^kept apart: the judge's answer was invalid .*not JSON/);
    }
    // One call and one repair round, then it gives up.
    expect(server.requests.filter(isEntityJudge)).toHaveLength(2);
  });

  it('rejects decisions with an unknown type or a missing index as invalid', async () => {
    server.setHandler((req) =>
      isEntityJudge(req) ? stubReply.json({ decisions: [{ index: 0, same: true, type: 'planet', reason: 'x' }] }) : defaultHandler(req),
    );
    const [d1, d2] = await judge().decide([question(0, ['person', 'Bob'], ['concept', 'bob']), question(1, ['person', 'Ann'], ['person', 'ann'])]);
    expect(d1?.same).toBe(false);
    expect(d1?.reason).toMatch(/type must be null or one of \["person","concept"\]/);
    expect(d1?.reason).toMatch(/no decision for index 0, 1/);
    expect(d2?.same).toBe(false);
  });

  it('retries HTTP 503 like the other adapters, and throws UNAVAILABLE on a 400 (a failure, not a decision)', async () => {
    server.enqueue(stubReply.error(503), stubReply.error(503));
    const ok = await judge({ maxRetries: 2 }).decide([question(0, ['person', 'Bob'], ['person', 'bob'])]);
    expect(ok[0]?.same).toBe(true);
    expect(server.requests.filter(isEntityJudge)).toHaveLength(3);
    server.reset();
    server.enqueue(stubReply.error(400, 'bad request'));
    const err = await judge()
      .decide([question(0, ['person', 'Bob'], ['person', 'bob'])])
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(ModelException);
    expect((err as ModelException).code).toBe(ModelExceptionCode.UNAVAILABLE);
    expect(server.requests.filter(isEntityJudge)).toHaveLength(1);
  });
});

describe('Gold promotion with the OpenAI-compatible entity judge configured', () => {
  let stub: OpenAIStubServer;
  let t: TestApp;
  let db: Client;

  beforeAll(async () => {
    stub = await startOpenAIStubServer({ handler: sameNameJudge });
    t = await startTestApp({
      OPENAI_BASE_URL: stub.baseUrl,
      OPENAI_API_KEY: 'stub',
      EXTRACTION_MODEL: 'stub-model',
      OFFLINE_EMBEDDER: 'hashing',
      DERIVE_MAX_WAIT_MS: '0',
      DERIVE_POLL_MS: '50',
      GOLD_PROMOTE_EVERY_SECONDS: '0',
    });
    db = new Client({ connectionString: t.databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await t?.stop();
    await stub?.close();
  });

  const promoteAndWait = async (ns: string): Promise<string> => (await runPromotion(t, ns)).status;
  const logOf = async (ns: string) =>
    (
      await db.query<{ action: string; step: string; silver_ids: string[]; judge_model: string | null; prompt_version: string | null; reason: string }>(
        `SELECT action, step, silver_ids::text[] AS silver_ids, judge_model, prompt_version, reason FROM gold.promotion_log
          WHERE namespace = $1 AND gold_entity_id IS NOT NULL ORDER BY id`,
        [ns],
      )
    ).rows;
  const membersOf = async (ns: string) =>
    (
      await db.query<{ type: string; members: string[] }>(
        `SELECT g.type, array_agg(m.silver_entity_id::text ORDER BY m.silver_entity_id) AS members
           FROM gold.entities g JOIN gold.entity_members m ON m.gold_entity_id = g.id AND m.removed_at IS NULL
          WHERE g.namespace = $1 GROUP BY g.id, g.type`,
        [ns],
      )
    ).rows;

  const people = {
    entities: [
      { key: 'bob', name: 'Bob', type: 'person' },
      { key: 'bobSmith', name: 'Bob Smith', type: 'person' },
      { key: 'lower', name: 'bob', type: 'concept' },
      { key: 'acme', name: 'Acme Corp', type: 'organization' },
      { key: 'jon', name: 'Jon Smith', type: 'person' },
      { key: 'john', name: 'John Smyth', type: 'person' },
    ],
    mentions: [
      { entity: 'bob', conversation: 'c1' },
      { entity: 'bob', conversation: 'c2' },
      { entity: 'bobSmith', conversation: 'c1' },
      { entity: 'lower', conversation: 'c2' },
      { entity: 'acme', conversation: 'c1' },
      { entity: 'acme', conversation: 'c3' },
      { entity: 'jon', conversation: 'work-1' },
      { entity: 'jon', conversation: 'work-2' },
      { entity: 'john', conversation: 'family-1' },
      { entity: 'john', conversation: 'family-2' },
    ],
  };

  it('asks the model about the hard cases only, in one batch, merges on "same", keeps apart on "different", and logs model and prompt version', async () => {
    const ns = uniqueNamespace('ojudge');
    const { ids } = await seedSilver(t, ns, people);
    const name = Object.fromEntries(people.entities.map((e) => [ids[e.key], e.name]));
    stub.reset();
    expect(await promoteAndWait(ns)).toBe('succeeded');

    const asked = stub.requests.filter(isEntityJudge);
    expect(asked).toHaveLength(1);
    const questions = questionsOf(asked[0] as RecordedRequest).map((q) => `${q.a.name}~${q.b.name}`);
    const log = await logOf(ns);
    // The hard cases, and only they: the same name under another type, and similar names without a shared conversation.
    expect([...questions].sort()).toEqual(['John Smyth~Jon Smith', 'Jon Smith~Bob Smith', 'bob~Bob', 'bob~Bob Smith']);
    // Every judge decision in the log was a question; "bob" vs "Bob Smith" needs no row of its own:
    // the first "same" put "bob" in the cluster that holds both.
    const judged = log.filter((r) => r.step === 'judge').map((r) => `${name[r.silver_ids[0] as string]}~${name[r.silver_ids[1] as string]}`);
    expect(judged.sort()).toEqual(['John Smyth~Jon Smith', 'Jon Smith~Bob Smith', 'bob~Bob']);
    // The automatic steps never reach the judge: Bob Smith joined Bob by co-occurrence.
    expect(questions).not.toContain('Bob Smith~Bob');
    const cooc = log.find((r) => r.step === 'cooccurrence');
    expect(cooc).toMatchObject({ action: 'merge', judge_model: null, prompt_version: null });

    for (const r of log.filter((x) => x.step === 'judge')) {
      expect(r).toMatchObject({ judge_model: 'openai:stub-model', prompt_version: JUDGE_ENTITIES_PROMPT_VERSION });
    }
    const merge = log.filter((r) => r.action === 'merge' && r.step === 'judge');
    expect(merge.map((r) => r.reason)).toEqual(['stub: the same name']);
    const apart = log.filter((r) => r.action === 'keep_apart');
    expect(apart.length).toBeGreaterThanOrEqual(2);
    expect(apart.every((r) => r.reason === 'stub: different things')).toBe(true);

    const gold = await membersOf(ns);
    const bob = gold.find((g) => g.members.includes(ids.bob as string));
    expect(bob?.members).toEqual([ids.bob, ids.bobSmith, ids.lower].sort());
    expect(bob?.type).toBe('person');
    expect(gold).toHaveLength(4);
    expect(
      gold
        .filter((g) => g.members.length === 1)
        .map((g) => name[g.members[0] as string])
        .sort(),
    ).toEqual(['Acme Corp', 'John Smyth', 'Jon Smith']);
  });

  it('keeps the pair apart with the reason when the model answers garbage, and the run still succeeds', async () => {
    const ns = uniqueNamespace('ojunk');
    const { ids } = await seedSilver(t, ns, { entities: people.entities.slice(4), mentions: people.mentions.slice(6) });
    stub.reset();
    stub.setHandler((req) => (isEntityJudge(req) ? stubReply.text('{"decisions": [') : defaultHandler(req)));
    try {
      expect(await promoteAndWait(ns)).toBe('succeeded');
    } finally {
      stub.setHandler(sameNameJudge);
    }
    expect(stub.requests.filter(isEntityJudge)).toHaveLength(2); // the question and one repair round
    const apart = (await logOf(ns)).filter((r) => r.action === 'keep_apart');
    expect(apart).toHaveLength(1);
    expect(apart[0]?.silver_ids.sort()).toEqual([ids.jon, ids.john].sort());
    expect(apart[0]).toMatchObject({ step: 'judge', judge_model: 'openai:stub-model', prompt_version: JUDGE_ENTITIES_PROMPT_VERSION });
    expect(apart[0]?.reason).toMatch(/^kept apart: the judge's answer was invalid .*not JSON/);
    expect((await membersOf(ns)).map((g) => g.members.length)).toEqual([1, 1]);
  });
});
