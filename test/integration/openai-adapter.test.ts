import { createOpenAIModels, OpenAIModelsOptions } from '../../src/models/openai/openai-models';
import type { ExtractionContext, ExtractionEvent, ExtractionResult, JudgeCandidate, JudgeInput, Span } from '../../src/silver/model-ports';
import { ModelException, ModelExceptionCode } from '../../src/silver/model.exception';
import { ENTITY_TYPES, FACT_TYPES, RELATIONSHIP_TYPES } from '../../src/silver/ontology';
import { createDefaultHandler, defaultHandler, OpenAIStubServer, startOpenAIStubServer, stubReply } from '../support/openai-stub-server';

// The LLM is faked only at its HTTP boundary: the real `openai` client talks to a local server.

const ctx: ExtractionContext = {
  namespace: 'test/openai',
  entityTypes: ENTITY_TYPES,
  relationshipTypes: RELATIONSHIP_TYPES,
  factTypes: FACT_TYPES,
};

let seq = 0;
function anEvent(content: string, over: Partial<ExtractionEvent> = {}): ExtractionEvent {
  seq++;
  return {
    id: `evt-${seq}`,
    content,
    kind: 'message',
    role: 'user',
    actor: 'alice',
    occurredAt: new Date(Date.UTC(2026, 2, 1, 9) + seq * 86_400_000),
    conversationId: 'conv-1',
    sequenceNum: seq,
    ...over,
  };
}

function aCandidate(id: string, statement: string, over: Partial<JudgeCandidate> = {}): JudgeCandidate {
  return {
    id,
    statement,
    factType: 'preference',
    subjectName: 'alice',
    predicate: null,
    objectValue: null,
    isNegation: false,
    validFrom: new Date('2026-01-01T00:00:00Z'),
    similarity: 0.8,
    ...over,
  };
}

function aJudgeInput(statement: string, candidates: JudgeCandidate[], replacesValue: string | null = null): JudgeInput {
  return {
    fact: {
      statement,
      factType: 'preference',
      subjectName: 'alice',
      predicate: null,
      objectValue: null,
      isNegation: false,
      validFrom: new Date('2026-03-10T00:00:00Z'),
      replacesValue,
    },
    candidates,
  };
}

async function modelError(promise: Promise<unknown>): Promise<ModelException> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ModelException);
    return err as ModelException;
  }
  throw new Error('expected a ModelException');
}

describe('OpenAI-compatible adapters against a local stub server', () => {
  let server: OpenAIStubServer;
  const models = (over: Partial<OpenAIModelsOptions> = {}) =>
    createOpenAIModels({
      apiKey: 'sk-test',
      baseUrl: server.baseUrl,
      extractionModel: 'gpt-4o-mini',
      judgeModel: 'gpt-4o-mini',
      embeddingModel: 'text-embedding-3-small',
      embeddingDimensions: 4,
      timeoutMs: 5000,
      maxRetries: 2,
      concurrency: 4,
      retryBaseDelayMs: 10,
      retryMaxDelayMs: 50,
      ...over,
    });

  beforeAll(async () => {
    server = await startOpenAIStubServer();
  });
  afterAll(async () => {
    await server?.close();
  });
  beforeEach(() => {
    server.reset();
    server.setLatency(0);
    server.setHandler(defaultHandler);
  });

  describe('extractor', () => {
    // "I use vim for everything" / "I switched to neovim last week"
    const vim = anEvent('I use vim for everything', { occurredAt: new Date('2026-03-01T09:00:00Z') });
    const neovim = anEvent('I switched to neovim last week', { occurredAt: new Date('2026-03-15T09:00:00Z') });
    type WireSpan = Span & { quote: string };
    const span = (e: ExtractionEvent, quote: string, start = e.content.indexOf(quote)): WireSpan => ({
      eventId: e.id,
      start,
      end: start + quote.length,
      quote,
    });
    const whole = (e: ExtractionEvent) => span(e, e.content);
    const fact = (over: Record<string, unknown>) => ({
      ref: 'f1',
      statement: 'The user uses vim for everything',
      factType: 'preference',
      subjectRef: 'e1',
      predicate: 'uses',
      objectValue: null,
      objectRef: 'e2',
      isNegation: false,
      confidence: 0.9,
      validFrom: null,
      validTo: null,
      replacesValue: null,
      sources: [whole(vim)],
      ...over,
    });
    const entity = (ref: string, name: string, mentions: WireSpan[]) => ({ ref, name, type: 'technology', aliases: [], mentions });

    // As recorded from a model: note the mention of "vim" one character off (7..10), re-anchored on its quote.
    const recorded = {
      entities: [
        { ref: 'e1', name: 'alice', type: 'person', aliases: ['I'], mentions: [span(vim, 'I'), span(neovim, 'I')] },
        entity('e2', 'vim', [{ ...span(vim, 'vim'), start: 7, end: 10 }]),
        { ...entity('e3', 'Neovim', [span(neovim, 'neovim')]), aliases: ['neovim'] },
      ],
      facts: [
        fact({}),
        fact({
          ref: 'f2',
          statement: 'The user switched from vim to neovim',
          objectRef: 'e3',
          confidence: 0.95,
          validFrom: '2026-03-08T09:00:00.000Z',
          replacesValue: 'vim',
          sources: [whole(neovim)],
        }),
      ],
      relationships: [
        {
          ref: 'r1',
          type: 'uses',
          sourceRef: 'e1',
          targetRef: 'e3',
          confidence: 0.9,
          validFrom: '2026-03-08T09:00:00.000Z',
          sources: [span(neovim, 'switched to neovim')],
        },
      ],
    };
    const dropQuotes = (spans: WireSpan[]): Span[] => spans.map(({ quote: _q, ...s }) => s);

    it('parses a recorded extraction into an ExtractionResult and sends a strict json_schema request', async () => {
      const { extractor } = models();
      server.enqueue(stubReply.json(recorded));
      const result = await extractor!.extract([vim, neovim], ctx);

      const expected: ExtractionResult = {
        entities: recorded.entities.map((e) => ({ ...e, mentions: dropQuotes(e.mentions) })),
        facts: recorded.facts.map((f) => ({ ...f, sources: dropQuotes(f.sources) })) as ExtractionResult['facts'],
        relationships: recorded.relationships.map((r) => ({ ...r, sources: dropQuotes(r.sources) })),
      };
      expected.entities[1].mentions = [{ eventId: vim.id, start: 6, end: 9 }];
      expect(result).toEqual(expected);
      expect(vim.content.slice(result.entities[1].mentions[0].start, result.entities[1].mentions[0].end)).toBe('vim');
      expect(extractor!.model).toBe('openai:gpt-4o-mini');

      expect(server.requests).toHaveLength(1);
      const req = server.requests[0];
      expect(req.path).toBe('/v1/chat/completions');
      expect(req.headers.authorization).toBe('Bearer sk-test');
      expect(req.body.model).toBe('gpt-4o-mini');
      expect(req.body.response_format.type).toBe('json_schema');
      const { name, strict, schema } = req.body.response_format.json_schema;
      expect({ name, strict }).toEqual({ name: 'extract_facts', strict: true });
      expect(schema).toMatchObject({ type: 'object', required: ['entities', 'facts', 'relationships'], additionalProperties: false });
      expect(schema.$schema).toBeUndefined();
      expect(JSON.stringify(schema)).not.toMatch(/minLength|9007199254740991/);

      const [system, user] = req.body.messages;
      for (const type of [...ENTITY_TYPES, ...FACT_TYPES, ...RELATIONSHIP_TYPES]) expect(system.content).toContain(type);
      expect(JSON.parse(user.content).events).toEqual(
        [vim, neovim].map((e) => ({
          id: e.id,
          kind: 'message',
          role: 'user',
          actor: 'alice',
          occurredAt: e.occurredAt.toISOString(),
          conversationId: 'conv-1',
          sequenceNum: e.sequenceNum,
          content: e.content,
        })),
      );
    });

    it('makes no call for an empty batch', async () => {
      await expect(models().extractor!.extract([], ctx)).resolves.toEqual({ entities: [], facts: [], relationships: [] });
      expect(server.requests).toHaveLength(0);
    });

    it('retries HTTP 500, 429 with retry-after and a dropped connection, then succeeds', async () => {
      server.enqueue(stubReply.error(500), stubReply.rateLimited(0), stubReply.drop(), stubReply.json(recorded));
      const result = await models({ maxRetries: 3 }).extractor!.extract([vim, neovim], ctx);
      expect(result.facts).toHaveLength(2);
      expect(server.requests).toHaveLength(4);
    });

    it('gives up with UNAVAILABLE after maxRetries and does not retry a 400', async () => {
      server.enqueue(stubReply.error(503), stubReply.error(502), stubReply.error(500));
      const down = await modelError(models({ maxRetries: 2 }).extractor!.extract([vim], ctx));
      expect(down).toMatchObject({ code: ModelExceptionCode.UNAVAILABLE, attempts: 3 });
      expect(server.requests).toHaveLength(3);

      server.reset();
      server.enqueue(stubReply.error(400, 'Invalid schema for response_format'));
      const bad = await modelError(models({ maxRetries: 2 }).extractor!.extract([vim], ctx));
      expect(bad).toMatchObject({ code: ModelExceptionCode.UNAVAILABLE, attempts: 1 });
      expect(bad.message).toContain('Invalid schema');
      expect(server.requests).toHaveLength(1);
    });

    it('times out with TIMEOUT after its retries when the server hangs', async () => {
      server.enqueue(stubReply.hang(), stubReply.hang());
      const started = Date.now();
      const err = await modelError(models({ timeoutMs: 300, maxRetries: 1 }).extractor!.extract([vim], ctx));
      expect(err).toMatchObject({ code: ModelExceptionCode.TIMEOUT, attempts: 2 });
      expect(err.message).toContain('timed out');
      expect(server.requests).toHaveLength(2);
      expect(Date.now() - started).toBeGreaterThanOrEqual(600);
    });

    it('throws MALFORMED_OUTPUT with the raw output when the content is not JSON, after one repair round', async () => {
      server.enqueue(stubReply.text('{"entities": [ oops'), stubReply.text('Sorry, here it is: {"facts"'));
      const err = await modelError(models().extractor!.extract([vim], ctx));
      expect(err).toMatchObject({ code: ModelExceptionCode.MALFORMED_OUTPUT, attempts: 2, rawOutput: 'Sorry, here it is: {"facts"' });
      expect(err.message).toContain('not JSON');
      // The repair round shows the model its answer and what was wrong with it.
      const repair = server.requests[1].body.messages;
      expect(repair.slice(-2)).toEqual([
        { role: 'assistant', content: '{"entities": [ oops' },
        { role: 'user', content: expect.stringContaining('not JSON') },
      ]);

      server.reset();
      server.enqueue(stubReply.text('{"entities": [ oops'));
      const once = await modelError(models({ repairAttempts: 0 }).extractor!.extract([vim], ctx));
      expect(once).toMatchObject({ code: ModelExceptionCode.MALFORMED_OUTPUT, attempts: 1, rawOutput: '{"entities": [ oops' });
    });

    it('accepts a repaired answer', async () => {
      server.enqueue(stubReply.text('```json\n{"entities": []}\n```'), stubReply.text('```json\n' + JSON.stringify(recorded) + '\n```'));
      const result = await models().extractor!.extract([vim, neovim], ctx);
      expect(result.facts.map((f) => f.ref)).toEqual(['f1', 'f2']);
      expect(server.requests).toHaveLength(2);
      expect(server.requests[1].body.messages.at(-1).content).toMatch(/facts.*expected array/s);
    });

    it.each([
      ['an unknown ref', { ...recorded, facts: [fact({ subjectRef: 'e9' })] }, 'unknown entity ref "e9"'],
      [
        'a span outside the content',
        { ...recorded, facts: [fact({ sources: [{ eventId: vim.id, start: 10, end: 99, quote: 'emacs' }] })] },
        'outside the content',
      ],
      ['an unknown event id', { ...recorded, facts: [fact({ sources: [{ ...whole(vim), eventId: 'evt-404' }] })] }, 'unknown event id "evt-404"'],
      ['confidence 7', { ...recorded, facts: [fact({ confidence: 7 })] }, 'facts.0.confidence'],
      ['a missing field', { entities: [], facts: [] }, 'relationships'],
    ])('rejects %s as MALFORMED_OUTPUT', async (_label, output, problem) => {
      server.enqueue(stubReply.json(output));
      const err = await modelError(models({ repairAttempts: 0 }).extractor!.extract([vim, neovim], ctx));
      expect(err.code).toBe(ModelExceptionCode.MALFORMED_OUTPUT);
      expect(err.message).toContain(problem);
      expect(err.rawOutput).toBe(JSON.stringify(output));
    });
  });

  describe('judge', () => {
    const inputs = [
      aJudgeInput('The user uses neovim', [aCandidate('fact-a', 'The user uses vim')], 'vim'),
      aJudgeInput('The user has a cat', []),
      aJudgeInput('The user lives in Berlin', [aCandidate('fact-b', 'The user lives in Berlin'), aCandidate('fact-c', 'The user works in Berlin')]),
      aJudgeInput('The user prefers a dark theme in neovim', [aCandidate('fact-d', 'The user prefers dark themes')]),
    ];

    it('sends only inputs with candidates, in one call, and maps the decisions back in input order', async () => {
      const { judge } = models();
      server.enqueue(
        stubReply.json({
          decisions: [
            { index: 2, action: 'UPDATE', targetId: 'fact-d', reason: 'more detail' },
            { index: 0, action: 'SUPERSEDE', targetId: 'fact-a', reason: 'switched editors' },
            { index: 1, action: 'SKIP', targetId: 'fact-b', reason: 'same claim' },
          ],
        }),
      );
      const decisions = await judge!.decide(inputs);
      expect(decisions).toEqual([
        { action: 'SUPERSEDE', targetId: 'fact-a', reason: 'switched editors' },
        { action: 'ADD', targetId: null, reason: expect.any(String) },
        { action: 'SKIP', targetId: 'fact-b', reason: 'same claim' },
        { action: 'UPDATE', targetId: 'fact-d', reason: 'more detail' },
      ]);

      expect(server.requests).toHaveLength(1);
      const body = server.requests[0].body;
      expect(body.response_format.json_schema).toMatchObject({ name: 'judge_facts', strict: true });
      expect(JSON.stringify(body.response_format.json_schema.schema)).toContain('"enum":["ADD","UPDATE","SUPERSEDE","SKIP"]');
      const sent = JSON.parse(body.messages[1].content).inputs;
      expect(sent.map((i: { index: number; candidates: Array<{ id: string }> }) => [i.index, i.candidates.map((c) => c.id)])).toEqual([
        [0, ['fact-a']],
        [1, ['fact-b', 'fact-c']],
        [2, ['fact-d']],
      ]);
      expect(sent[0].new).toMatchObject({ statement: 'The user uses neovim', replacesValue: 'vim', validFrom: '2026-03-10T00:00:00.000Z' });
    });

    it('makes no call when no input has candidates', async () => {
      const decisions = await models().judge!.decide([inputs[1], inputs[1]]);
      expect(decisions.map((d) => d.action)).toEqual(['ADD', 'ADD']);
      expect(server.requests).toHaveLength(0);
    });

    it.each([
      ['a targetId that is no candidate', [{ index: 0, action: 'SUPERSEDE', targetId: 'fact-zzz', reason: 'x' }], 'targetId among [fact-a]'],
      ["another input's candidate", [{ index: 0, action: 'SKIP', targetId: 'fact-b', reason: 'x' }], 'targetId among [fact-a]'],
      ['a null targetId for UPDATE', [{ index: 0, action: 'UPDATE', targetId: null, reason: 'x' }], 'UPDATE needs a targetId'],
      ['an unknown action', [{ index: 0, action: 'MERGE', targetId: 'fact-a', reason: 'x' }], 'decisions.0.action'],
      ['a missing decision', [], 'no decision for index 0'],
    ])('rejects %s as MALFORMED_OUTPUT', async (_label, decisions, problem) => {
      server.enqueue(stubReply.json({ decisions }));
      const err = await modelError(models({ repairAttempts: 0 }).judge!.decide([inputs[0]]));
      expect(err.code).toBe(ModelExceptionCode.MALFORMED_OUTPUT);
      expect(err.message).toContain(problem);
    });
  });

  describe('embedder', () => {
    it('asks for float encoding and returns unit-length vectors in order', async () => {
      const { embedder } = models();
      server.enqueue(
        stubReply.embeddings([
          [3, 4, 0, 0],
          [0, 0, 0, 2],
        ]),
      );
      const vectors = await embedder!.embed(['vim', 'neovim']);
      expect(vectors).toEqual([
        [0.6, 0.8, 0, 0],
        [0, 0, 0, 1],
      ]);
      expect(embedder!.model).toBe('openai:text-embedding-3-small');
      expect(embedder!.dimensions).toBe(4);
      const req = server.requests[0];
      expect(req.path).toBe('/v1/embeddings');
      expect(req.body).toEqual({ model: 'text-embedding-3-small', input: ['vim', 'neovim'], encoding_format: 'float', dimensions: 4 });
    });

    it('batches large inputs and keeps the order across batches', async () => {
      const { embedder } = models({ embeddingBatchSize: 5 });
      const texts = Array.from({ length: 12 }, (_, i) => `text ${i}`);
      const all = await embedder!.embed(texts);
      expect(server.requests.map((r) => r.body.input.length)).toEqual([5, 5, 2]);
      expect(all).toHaveLength(12);
      for (const v of all) expect(Math.hypot(...v)).toBeCloseTo(1, 10);
      expect(all[7]).toEqual((await embedder!.embed(['text 7']))[0]);
    });

    it.each([
      ['too few vectors', [[1, 0, 0, 0]], 'returned 1 vector(s) for 2 text(s)'],
      [
        'a wrong dimension',
        [
          [1, 0, 0, 0],
          [1, 0, 0],
        ],
        'has 3 dimensions, expected 4',
      ],
      [
        'a zero vector',
        [
          [1, 0, 0, 0],
          [0, 0, 0, 0],
        ],
        'all zeros',
      ],
    ])('rejects %s as MALFORMED_OUTPUT', async (_label, vectors, problem) => {
      server.enqueue(stubReply.embeddings(vectors));
      const err = await modelError(models().embedder!.embed(['a', 'b']));
      expect(err.code).toBe(ModelExceptionCode.MALFORMED_OUTPUT);
      expect(err.message).toContain(problem);
    });
  });

  describe('factory and concurrency', () => {
    it('builds only the adapters whose model is named, and knows common embedding sizes', async () => {
      const only = models({ judgeModel: undefined, embeddingModel: undefined });
      expect(Object.keys(only)).toEqual(['extractor']);
      expect(() => models({ embeddingModel: 'my-embedder', embeddingDimensions: undefined })).toThrow(/embeddingDimensions/);
      const { embedder } = models({ embeddingModel: 'nomic-embed-text', embeddingDimensions: undefined });
      server.setHandler(createDefaultHandler({ embeddingDimensions: 768 }));
      expect(embedder!.dimensions).toBe(768);
      await embedder!.embed(['x']);
      // Only OpenAI's text-embedding-3 models are sent `dimensions`.
      expect(server.requests[0].body.dimensions).toBeUndefined();
      expect(server.requests[0].body.input).toEqual(['x']);
    });

    it('never has more requests in flight at the server than the shared concurrency limit', async () => {
      server.setLatency(100);
      const { extractor, judge, embedder } = models({ concurrency: 3 });
      const started = Date.now();
      const calls = [
        ...Array.from({ length: 6 }, (_, i) => extractor!.extract([anEvent(`event ${i}`)], ctx)),
        ...Array.from({ length: 3 }, () => judge!.decide([aJudgeInput('The user uses neovim', [aCandidate('fact-a', 'The user uses vim')])])),
        ...Array.from({ length: 3 }, (_, i) => embedder!.embed([`text ${i}`])),
      ];
      const results = await Promise.all(calls);
      expect(results).toHaveLength(12);
      expect((results[0] as ExtractionResult).facts[0].statement).toBe('event 0');
      expect(server.requests).toHaveLength(12);
      expect(server.maxInFlight).toBe(3);
      expect(Date.now() - started).toBeGreaterThanOrEqual(4 * 100 - 20);
    });
  });
});
