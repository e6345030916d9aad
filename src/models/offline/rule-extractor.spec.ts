import type { ExtractionContext, ExtractionEvent, ExtractionResult } from '../../silver/model-ports';
import { ENTITY_TYPES, FACT_TYPES, RELATIONSHIP_TYPES } from '../../silver/ontology';
import { RuleExtractor } from './rule-extractor';
import { OFFLINE_RULES_MODEL } from './rule-set';

const CTX: ExtractionContext = { namespace: 'test', entityTypes: ENTITY_TYPES, relationshipTypes: RELATIONSHIP_TYPES, factTypes: FACT_TYPES };
const DAY = 86_400_000;

let seq = 0;
function anEvent(content: string, over: Partial<ExtractionEvent> = {}): ExtractionEvent {
  seq++;
  return {
    id: `ev${seq}`,
    content,
    kind: 'message',
    role: 'user',
    actor: null,
    occurredAt: new Date('2025-03-24T10:00:00Z'),
    conversationId: 'c1',
    sequenceNum: seq,
    ...over,
  };
}

const extract = (events: ExtractionEvent[]): Promise<ExtractionResult> => new RuleExtractor().extract(events, CTX);
const quote = (events: ExtractionEvent[], span: { eventId: string; start: number; end: number }): string =>
  (events.find((e) => e.id === span.eventId) as ExtractionEvent).content.slice(span.start, span.end);
const entityName = (res: ExtractionResult, ref: string | null): string | undefined => res.entities.find((e) => e.ref === ref)?.name;

describe('RuleExtractor', () => {
  it('records its model name', () => {
    expect(new RuleExtractor().model).toBe(OFFLINE_RULES_MODEL);
  });

  it('links "I switched to neovim last week" to the earlier vim fact, dated a week before the event', async () => {
    const t1 = anEvent('I use vim for everything.', { occurredAt: new Date('2025-03-10T09:00:00Z') });
    const t2 = anEvent('I switched to neovim last week.', { occurredAt: new Date('2025-03-24T10:00:00Z') });
    const res = await extract([t1, t2]);
    const vim = res.facts.find((f) => f.sources[0]?.eventId === t1.id);
    const neovim = res.facts.find((f) => f.sources[0]?.eventId === t2.id);
    expect(vim).toMatchObject({
      factType: 'preference',
      predicate: 'uses',
      objectValue: 'Vim',
      isNegation: false,
      statement: 'The user uses Vim',
      validFrom: null,
    });
    expect(neovim).toMatchObject({ factType: 'preference', predicate: 'uses', objectValue: 'Neovim', replacesValue: 'Vim', isNegation: false });
    expect(Date.parse(neovim?.validFrom as string)).toBe(t2.occurredAt.getTime() - 7 * DAY);
    expect(quote([t1, t2], vim!.sources[0]!)).toBe('I use vim for everything');
    expect(quote([t1, t2], neovim!.sources[0]!)).toBe('I switched to neovim last week');
    expect(entityName(res, vim!.subjectRef)).toBe('the user');
    expect(res.relationships.map((r) => [r.type, entityName(res, r.sourceRef), entityName(res, r.targetRef)])).toEqual([
      ['uses', 'the user', 'Vim'],
      ['uses', 'the user', 'Neovim'],
    ]);
  });

  it('reads an event alike alone and after an event that says one of its facts already (issue 43)', async () => {
    // The speaker "Dana" and a manager called Dana are one entity; the second message says the first again.
    const first = anEvent('My manager Dana works at Acme', { actor: 'Dana' });
    const second = anEvent('My manager Dana works at Acme', { actor: 'Dana' });
    const of = (res: ExtractionResult) =>
      res.facts
        .filter((f) => f.sources.some((s) => s.eventId === second.id))
        .map((f) => `${f.statement} (${f.predicate}, ${f.sources.length} source)`)
        .sort();
    const alone = of(await extract([second]));
    expect(alone).toEqual(['Dana works at Acme (works_at, 1 source)', "Dana's manager is Dana (has_manager, 1 source)"]);
    // In one batch the repeat is a fact of its own event, never merged into the first one's, and the sentence is not kept again as said.
    expect(of(await extract([first, second]))).toEqual(alone);
  });

  it('writes a time out in the clause as rewritten: "She wants the report by Friday" after "My manager is Priya"', async () => {
    // A Thursday: "by Friday" is the next day. The offsets of "Friday" were taken before "She"
    // became "Priya", which wrote "bon Friday, …ay"; and a present-tense deadline is not last week's.
    const at = { occurredAt: new Date('2026-01-01T09:00:00Z') };
    const res = await extract([anEvent('My manager is Priya.', at), anEvent('She wants the report by Friday.', at)]);
    expect(res.facts.map((f) => f.statement)).toContain('Priya wants the report by Friday, 2 January 2026');
  });

  it('sets replacesValue from "switched from X to Y" and "replaced X with Y"', async () => {
    const res = await extract([anEvent('Last month we switched from MySQL to postgres.'), anEvent('I replaced Chrome with Firefox.')]);
    expect(res.facts.map((f) => [f.objectValue, f.replacesValue])).toEqual([
      ['PostgreSQL', 'MySQL'],
      ['Firefox', 'Chrome'],
    ]);
    expect(res.entities.find((e) => e.name === 'PostgreSQL')?.aliases).toContain('postgres');
  });

  it('marks negations and stops', async () => {
    const texts = ["I don't like Java.", 'We never use MongoDB.', 'I no longer use pgAdmin.', 'I stopped using Jira.', "I don't use Slack anymore."];
    const res = await extract(texts.map((t) => anEvent(t)));
    expect(res.facts.map((f) => [f.predicate, f.objectValue, f.isNegation])).toEqual([
      ['likes', 'Java', true],
      ['uses', 'MongoDB', true],
      ['uses', 'pgAdmin', true],
      ['uses', 'Jira', true],
      ['uses', 'Slack', true],
    ]);
    expect(res.facts[0]?.statement).toBe('The user does not like Java');
    expect(res.relationships).toEqual([]); // negated facts relate nothing
  });

  it('keeps an item a qualifier singles out ("especially", "including") as an item of its own', async () => {
    const res = await extract([anEvent('I love jazz, especially Coltrane'), anEvent('We use Postgres, including PostGIS')]);
    expect(res.facts.map((f) => f.statement)).toEqual(['The user likes jazz', 'The user likes Coltrane', 'The user uses PostgreSQL', 'The user uses PostGIS']);
  });

  it('takes "I\'m Maya btw" as the user\'s name, and "I\'m Canadian" as no name', async () => {
    const res = await extract([
      anEvent("I want a running notebook for work stuff. I'm Maya btw"),
      anEvent("I'm Canadian btw"),
      anEvent("I'm Brian, nice to meet you"),
    ]);
    expect(res.facts.filter((f) => f.predicate === 'name').map((f) => f.statement)).toEqual(["The user's name is Maya", "The user's name is Brian"]);
    expect(res.entities.find((e) => e.name === 'the user')?.aliases).toEqual(expect.arrayContaining(['Maya', 'Brian']));
  });

  it('names the actor as the subject and extracts attributes with typed entities', async () => {
    const ev = anEvent("Hi! My name is Dana and I'm a data engineer at Acme. I live in Berlin.", { actor: 'Dana' });
    const res = await extract([ev]);
    expect(res.facts.map((f) => f.statement)).toEqual(["Dana's name is Dana", 'Dana is a data engineer', 'Dana works at Acme', 'Dana lives in Berlin']);
    expect(res.facts.map((f) => f.factType)).toEqual(['attribute', 'attribute', 'attribute', 'attribute']);
    expect(res.entities.find((e) => e.name === 'Acme')?.type).toBe('organization');
    expect(res.entities.find((e) => e.name === 'Berlin')?.type).toBe('place');
    expect(res.relationships.map((r) => r.type)).toEqual(['part_of', 'located_in']);
  });

  it('extracts preferences, favourites and plans', async () => {
    const res = await extract([
      anEvent('I prefer tabs over spaces.'),
      anEvent('My favourite editor is Helix.'),
      anEvent("I'm going to migrate our warehouse to Snowflake next month."),
    ]);
    expect(res.facts.map((f) => [f.factType, f.predicate, f.objectValue])).toEqual([
      ['preference', 'prefers', 'tabs'],
      ['preference', 'prefers', 'Helix'],
      ['plan', 'plans_to', "migrate the user's warehouse to Snowflake"],
    ]);
    // "our" is the speaker's; "next month" is written out against the event's date (24 March 2025).
    expect(res.facts[2]?.statement).toBe("The user plans to migrate the user's warehouse to Snowflake in April 2025");
    expect(res.facts[2]?.validFrom).toBeNull();
  });

  it('resolves "the database" and "it" to the most recent compatible entity and keeps the description as an alias', async () => {
    const res = await extract([
      anEvent('We switched from MySQL to PostgreSQL.'),
      anEvent('The database runs on AWS RDS now.'),
      anEvent('I work on Orion, our analytics tool.'),
      anEvent("It's built with React."),
    ]);
    const runsOn = res.facts.find((f) => f.predicate === 'runs_on');
    expect(entityName(res, runsOn?.subjectRef ?? null)).toBe('PostgreSQL');
    expect(runsOn?.statement).toBe('PostgreSQL runs on Amazon RDS');
    expect(res.entities.find((e) => e.name === 'PostgreSQL')?.aliases).toContain('The database');
    const builtWith = res.facts.find((f) => f.objectValue === 'React');
    expect(entityName(res, builtWith?.subjectRef ?? null)).toBe('Orion');
    expect(res.relationships.some((r) => r.type === 'depends_on' && entityName(res, r.sourceRef) === 'PostgreSQL')).toBe(true);
  });

  it('resolves "she" to the last person other than the speaker', async () => {
    const res = await extract([anEvent('My manager is Priya.', { actor: 'Marco' }), anEvent("She's based in Dublin.", { actor: 'Marco' })]);
    expect(res.facts.map((f) => f.statement)).toEqual(["Marco's manager is Priya", 'Priya is based in Dublin']);
    expect(res.relationships.map((r) => [r.type, entityName(res, r.sourceRef), entityName(res, r.targetRef)])).toEqual([
      ['knows', 'Marco', 'Priya'],
      ['located_in', 'Priya', 'Dublin'],
    ]);
  });

  it('resolves "them" only to a thing of this or the previous turn, never to one named turns ago', async () => {
    const res = await extract([
      anEvent('JavaScript counts UTF-16 code units, so slicing a name can cut an emoji in half.', { role: 'assistant' }),
      anEvent("fixed, shipping in today's build"),
      anEvent('Nice. One less thing before launch.', { role: 'assistant' }),
      anEvent("Yuki made new onboarding screens and they're so pretty, I'm building them this week"),
      anEvent('We use Linear for tickets. I like them a lot.'),
    ]);
    const statements = res.facts.map((f) => f.statement);
    expect(statements).toContain('The user is building them this week');
    expect(statements.some((s) => /building JavaScript/.test(s))).toBe(false);
    expect(statements).toContain('The user likes Linear');
  });

  it('dates explicit times relative to the event and leaves others null', async () => {
    const at = new Date('2025-06-10T12:00:00Z');
    const res = await extract([
      anEvent('We moved to Hamburg on 3 May 2025.', { occurredAt: at }),
      anEvent("We've been on MySQL since 2019.", { occurredAt: at }),
      anEvent('Yesterday I gave a talk about observability.', { occurredAt: at }),
      anEvent('I use Docker.', { occurredAt: at }),
    ]);
    expect(res.facts.map((f) => f.validFrom)).toEqual(['2025-05-03T12:00:00.000Z', '2019-01-01T00:00:00.000Z', '2025-06-09T12:00:00.000Z', null]);
    expect(res.facts[0]).toMatchObject({ predicate: 'lives_in', objectValue: 'Hamburg', factType: 'attribute' });
    expect(res.facts[2]).toMatchObject({ factType: 'event', statement: 'The user gave a talk about observability on 9 June 2025' });
  });

  it('grades confidence: explicit, hedged, coreference, assistant', async () => {
    const res = await extract([
      anEvent('I use Docker.'),
      anEvent('I think I prefer dark themes.'),
      anEvent('I prefer Rust.', { role: 'assistant' }),
      anEvent('I work on Atlas.'),
      anEvent('It depends on Redis.'),
    ]);
    expect(res.facts.map((f) => f.confidence)).toEqual([0.9, 0.7, 0.54, 0.9, 0.7]);
    expect(res.facts[2]?.statement).toBe('The assistant prefers Rust');
  });

  it('states nothing for questions, chit-chat and tool output', async () => {
    const res = await extract([
      anEvent('Do you use vim?'),
      anEvent('Good morning!'),
      anEvent('I think it might rain today.'),
      anEvent('PASS src/app.spec.ts (I use 12 tests)', { role: 'tool' }),
    ]);
    expect(res.facts).toEqual([]);
    expect(res.entities.map((e) => e.name)).toContain('Vim'); // mentions are still recorded
  });

  it('splits lists and picks gazetteer names out of qualifiers', async () => {
    const res = await extract([anEvent('We use Airflow for orchestration and dbt for transformations.'), anEvent('For terminals I use WezTerm on macOS.')]);
    expect(res.facts.map((f) => f.objectValue)).toEqual(['Airflow', 'dbt', 'WezTerm', 'macOS']);
  });

  it('gives every span a real quote and keeps types inside the ontology', async () => {
    const events = [
      anEvent("Quick context: I'm a backend developer in Toronto. I mostly write Python and some Go 🚀. My wife Anna is a doctor."),
      anEvent('Atlas depends on Redis and RabbitMQ.'),
    ];
    const res = await extract(events);
    expect(res.facts.length).toBeGreaterThan(5);
    for (const span of [...res.facts.flatMap((f) => f.sources), ...res.relationships.flatMap((r) => r.sources), ...res.entities.flatMap((e) => e.mentions)]) {
      expect(span.start).toBeGreaterThanOrEqual(0);
      expect(span.end).toBeGreaterThan(span.start);
      expect(quote(events, span).trim()).toBe(quote(events, span));
    }
    const go = res.entities.find((e) => e.name === 'Go');
    expect(quote(events, go!.mentions[0]!)).toBe('Go');
    for (const f of res.facts) expect(FACT_TYPES).toContain(f.factType);
    for (const e of res.entities) expect(ENTITY_TYPES).toContain(e.type);
    for (const r of res.relationships) expect(RELATIONSHIP_TYPES).toContain(r.type);
  });

  it('is deterministic', async () => {
    const make = () => [anEvent('I use vim. My shell is fish.', { id: 'a' }), anEvent('I switched to neovim last week; the editor is great.', { id: 'b' })];
    expect(await extract(make())).toEqual(await extract(make()));
  });

  describe('conversations between named speakers', () => {
    const at = new Date('2023-05-08T13:56:00Z'); // "1:56 pm on 8 May, 2023"
    const turn = (actor: string, text: string) => anEvent(`${actor}: ${text}`, { actor, occurredAt: at, conversationId: 'locomo' });

    it('strips a "Speaker:" prefix equal to the actor and keeps spans into the original content', async () => {
      const ev = turn('Caroline', 'I went to a LGBTQ support group yesterday and it was so powerful.');
      const res = await extract([ev]);
      expect(res.facts).toHaveLength(1);
      const fact = res.facts[0]!;
      expect(fact.statement).toBe('Caroline went to a LGBTQ support group on 7 May 2023');
      expect(fact.validFrom).toBe('2023-05-07T13:56:00.000Z');
      expect(quote([ev], fact.sources[0]!)).toBe('I went to a LGBTQ support group yesterday and it was so powerful');
      expect(fact.sources[0]!.start).toBe('Caroline: '.length);
      expect(entityName(res, fact.subjectRef)).toBe('Caroline');
    });

    it('keeps a prefix that is not the actor as part of the text', async () => {
      const ev = anEvent('Note: I use vim.', { actor: 'Dana' });
      const res = await extract([ev]);
      expect(res.facts.map((f) => f.statement)).toEqual(['Dana uses Vim']);
    });

    it('writes first person, possessives and informal kin words out as the speaker', async () => {
      const res = await extract([
        turn('Melanie', 'We went camping with my fam last weekend.'),
        turn('Melanie', 'Pottery is a huge part of my life.'),
        turn('Melanie', 'I have 3 kids.'),
        turn('Melanie', 'My kids loved the beach.'),
      ]);
      expect(res.facts.map((f) => f.statement)).toEqual([
        "Melanie went camping with Melanie's family on the weekend before 8 May 2023",
        "Pottery is a huge part of Melanie's life",
        'Melanie has 3 kids',
        "Melanie's kids loved the beach",
      ]);
      expect(res.facts.map((f) => f.factType)).toEqual(['event', 'attribute', 'attribute', 'event']);
    });

    it('keeps the reason after an object that is only a pronoun, and cuts it after one that names something', async () => {
      const res = await extract([
        turn('Caroline', "I chose them 'cause they help LGBTQ+ folks with adoption. Their inclusivity really spoke to me."),
        turn('Caroline', 'I picked the blue one because it was cheaper.'),
      ]);
      expect(res.facts.map((f) => f.statement)).toEqual(["Caroline chose them 'cause they help LGBTQ+ folks with adoption", 'Caroline picked the blue one']);
    });

    it('resolves "you" to the other speaker of the conversation, and drops the fact when nobody is known', async () => {
      const caroline = turn('Caroline', 'I finally finished the painting you gave me the idea for.');
      const res = await extract([turn('Melanie', 'Hey Caroline!'), caroline]);
      expect(res.facts.map((f) => f.statement)).toEqual(['Caroline finished the painting Melanie gave Caroline the idea for']);
      const alone = await extract([turn('Caroline', 'I finally finished the painting you gave me the idea for.')]);
      expect(alone.facts).toEqual([]);
      const told = await extract([turn('Melanie', 'Hi!'), turn('Caroline', 'You found the perfect spot for your store.')]);
      expect(told.facts.map((f) => [f.statement, entityName(told, f.subjectRef)])).toEqual([["Melanie found the perfect spot for Melanie's store", 'Melanie']]);
    });

    it('covers plans, progressives, preferences and intransitive past events, and dates them', async () => {
      const res = await extract([
        turn('Caroline', "I'm planning to go to a transgender conference next month."),
        turn('Caroline', "I've been painting a lot lately."),
        turn('Caroline', 'I love hiking with my family.'),
        turn('Caroline', 'I graduated two weeks ago!'),
        turn('Caroline', 'Last Saturday we adopted a puppy.'),
      ]);
      expect(res.facts.map((f) => [f.factType, f.statement, f.validFrom?.slice(0, 10) ?? null])).toEqual([
        ['plan', 'Caroline plans to go to a transgender conference in June 2023', null],
        ['other', 'Caroline has been painting a lot lately', null],
        ['preference', "Caroline likes hiking with Caroline's family", null],
        ['event', 'Caroline graduated two weeks before 8 May 2023', '2023-04-24'],
        ['event', 'Caroline adopted a puppy on Saturday, 6 May 2023', '2023-05-06'],
      ]);
    });

    it('reads a picture shared, a statement before a dash and its question, a past clause after "when" or "since", and a dropped "I\'m" before a gerund', async () => {
      const res = await extract([
        turn('Melanie', "Here's a photo of my horse painting. Here's one of my trophies from a dance contest, nice reminder of the hard work."),
        turn('Melanie', 'FYI, I finished another pottery project - want to see a pic?'),
        turn('Melanie', 'We were all freaked when my son got into an accident.'),
        turn('Caroline', "It made me reflect on how far I've come since I started transitioning three years ago."),
        turn('Caroline', "Researching adoption agencies — it's been a dream to have a family."),
        turn('John', 'I heard some cool stories from an elderly veteran named Samuel.'),
      ]);
      expect(res.facts.map((f) => f.statement)).toEqual([
        "Melanie shared a photo of Melanie's horse painting",
        "Melanie shared one of Melanie's trophies from a dance contest, nice reminder of the hard work",
        'Melanie finished another pottery project',
        "Melanie's son got into an accident",
        'Caroline started transitioning in 2020',
        'Caroline is researching adoption agencies',
        'John heard some cool stories from an elderly veteran named Samuel',
      ]);
      // Each fact rests on the words it was read from, not on the clause around them.
      const son = res.facts.find((f) => f.statement.includes('son got'));
      expect(son?.sources[0]?.start).toBe('Melanie: We were all freaked when '.length);
    });

    it('keeps "a quiet weekend" as a thing had, reads "over the weekend" as a time, and drops a subordinate clause that is no event', async () => {
      const res = await extract([
        turn('Melanie', 'I had a quiet weekend after the trip.'),
        // Said on a Wednesday: the weekend gone, not the one ahead (chrono's reading).
        anEvent('Melanie: I went hiking over the weekend.', { actor: 'Melanie', occurredAt: new Date('2023-05-10T13:56:00Z'), conversationId: 'locomo' }),
        turn('Maria', "She's always there to greet me when I come home."),
        turn('John', "I don't want future generations to go through that."),
        turn('Melanie', 'meeting w/ legal'),
      ]);
      const statements = res.facts.map((f) => f.statement);
      expect(statements).toContain('Melanie had a quiet weekend after the trip');
      expect(res.facts.find((f) => f.statement === 'Melanie went hiking')?.validFrom?.slice(0, 10)).toBe('2023-05-06');
      expect(statements.some((s) => /comes home/.test(s))).toBe(false);
      // "don't want … to go" is a wish about others: not a preference against the Go language.
      expect(statements.some((s) => /\bGo\b/.test(s))).toBe(false);
      // A note's first line in -ing is not what the speaker is doing.
      expect(statements.some((s) => /is meeting/.test(s))).toBe(false);
    });

    it('resolves "it" only to a thing named in this turn or the one before', async () => {
      const res = await extract([
        turn('Caroline', 'I went to the LGBTQ conference at the Hilton.'),
        turn('Melanie', 'Wow, how was it?'),
        turn('Caroline', 'Really good!'),
        turn('Melanie', 'Cool.'),
        turn('Caroline', 'I loved "Becoming Nicole" by Amy Ellis Nutt. It\'s a real inspiring true story about a trans girl.'),
      ]);
      expect(res.facts.some((f) => /conference is a/.test(f.statement))).toBe(false);
    });

    it('states nothing for greetings, reactions, thoughts and questions', async () => {
      const res = await extract([
        turn('Melanie', 'Hey Caroline! Good to see you!'),
        turn('Caroline', "Wow, that's great!"),
        turn('Melanie', 'I totally agree, Caroline.'),
        turn('Caroline', "I can't wait to see it!"),
        turn('Melanie', 'I love it!'),
        turn('Caroline', 'What made you try pottery?'),
        turn('Melanie', "I'm so tired today."),
      ]);
      expect(res.facts).toEqual([]);
    });
  });
});

describe('RuleExtractor: what first-use answers need (issue 23)', () => {
  const ex = new RuleExtractor();
  const at = new Date('2026-11-20T10:00:00Z');
  const run = (items: Array<{ role: string; content: string }>) =>
    ex.extract(
      items.map((m, i) => ({
        id: `e${i}`,
        content: m.content,
        kind: 'message',
        role: m.role,
        actor: null,
        occurredAt: at,
        conversationId: 'c',
        sequenceNum: i,
      })),
      { namespace: 'n', entityTypes: [], relationshipTypes: [], factTypes: [] },
    );

  it("keeps an assistant's report of what it did, with place and time, and drops its pleasantries", async () => {
    const res = await run([
      { role: 'user', content: 'Can you book dinner for Friday?' },
      { role: 'assistant', content: "I've reserved a table for two at Nopa on Friday at 8 pm." },
      { role: 'assistant', content: 'Good morning! How can I help?' },
    ]);
    expect(res.facts.map((f) => f.statement)).toEqual([expect.stringMatching(/^The assistant has reserved a table for two at Nopa on Friday, .* at 8 pm$/)]);
  });

  it('turns an instruction about how to answer into a preference of the user', async () => {
    const res = await run([{ role: 'user', content: 'When you book flights for me, always pick an aisle seat' }]);
    expect(res.facts).toEqual([
      expect.objectContaining({
        factType: 'preference',
        statement: 'The user wants the assistant to always pick an aisle seat when the assistant book flights for the user',
      }),
    ]);
  });

  it('reads instructions as chat writes them: after "also" or "btw", with "pls", a condition without a comma, a request asked as a question', async () => {
    const wanted = async (content: string): Promise<string[]> =>
      (await run([{ role: 'user', content }])).facts.filter((f) => f.factType === 'preference').map((f) => f.statement);
    expect(await wanted('oh that makes sense. also pls answer in bullet points, I read these between meetings on my phone')).toEqual([
      'The user wants the assistant to answer in bullet points',
    ]);
    expect(await wanted("and when you give me code use plain JavaScript, the app isn't typed")).toEqual([
      'The user wants the assistant to use plain JavaScript when the assistant give the user code',
    ]);
    expect(await wanted("also give me distances in miles, I can't think in km at all")).toEqual([
      'The user wants the assistant to give the user distances in miles',
    ]);
    expect(await wanted('running question: can you switch to metric for me? the club plan is all in km')).toEqual([
      'The user wants the assistant to switch to metric',
    ]);
    expect(await wanted('can you stop with the bullet lists btw? just write normally, a few short sentences.')).toEqual([
      'The user wants the assistant to stop with the bullet lists',
      'The user wants the assistant to write normally, a few short sentences',
    ]);
    // Between two people an imperative is encouragement, not an instruction to the agent.
    const between = await extract([
      anEvent('Caroline: I finally finished the mural!', { actor: 'Caroline' }),
      anEvent('Melanie: Keep it up, you are making a big impact.', { actor: 'Melanie' }),
    ]);
    expect(between.facts.filter((f) => f.factType === 'preference')).toEqual([]);
    // A one-off request is not a way of answering.
    expect(await wanted('can you give me a recipe for dal?')).toEqual([]);
    expect(await wanted('could you help me plan meals for the week?')).toEqual([]);
  });

  it("reads an assistant's confirmation of a standing instruction as the user's preference", async () => {
    const wanted = async (content: string): Promise<string[]> =>
      (
        await run([
          { role: 'user', content: 'ok' },
          { role: 'assistant', content },
        ])
      ).facts.map((f) => `${f.factType}: ${f.statement}`);
    expect(await wanted("Got it, I'll write all code examples in TypeScript from now on, with types.")).toEqual([
      'preference: The user wants the assistant to write all code examples in TypeScript, with types',
    ]);
    expect(await wanted('Got it, short paragraphs from now on, no bullet lists. And hang in there with the headache.')).toEqual([
      'preference: The user wants short paragraphs, no bullet lists',
    ]);
    expect(await wanted("Sure, I'll use metric from now on: kilometers for distance and min/km for pace.")).toEqual([
      'preference: The user wants the assistant to use metric, kilometers for distance and min/km for pace',
    ]);
    expect(await wanted("Noted. Going forward I'll call you Sam.")).toEqual(['preference: The user wants the assistant to call the user Sam']);
    expect(await wanted('Good night:\n- Linear is the tracker\n- Metric from now on')).toContain('preference: The user wants metric');
    // A promise without "from now on" is no way of answering; nor is the assistant being somewhere.
    const preferences = async (content: string): Promise<string[]> => (await wanted(content)).filter((f) => f.startsWith('preference'));
    expect(await preferences("Sure, I'll send the summary tomorrow.")).toEqual([]);
    expect(await preferences("I'll be here from now on whenever you need me.")).toEqual([]);
  });

  it('states what a sentence says before its question, and two things done as two', async () => {
    const said = async (content: string): Promise<string[]> => (await run([{ role: 'user', content }])).facts.map((f) => f.statement);
    expect(await said("I'm vegetarian, any recipe ideas?")).toEqual(['The user is vegetarian']);
    expect(await said('My sister lives in Denver, is it far from Boulder?')).toEqual(["The user's sister lives in Denver"]);
    expect(await said('I have a question, what is the best way to learn Rust?')).toEqual([]);
    // After a short lead that names the topic.
    expect(await said('different topic, my sister Anjali is visiting from Denver next month, good day trips near the bay?')).toEqual([
      expect.stringMatching(/^The user's sister Anjali is visiting from Denver in /),
    ]);
    expect(await said("random q, I'm allergic to shellfish, what can I eat in Kyoto?")).toEqual(['The user is allergic to shellfish']);
    expect(await said('other than that, is it far?')).toEqual([]);
    expect(await said('I dropped pottery and joined a climbing gym')).toEqual(['The user no longer uses pottery', 'The user joined a climbing gym']);
    expect(await said('I gave up on Duolingo and signed up for Babbel')).toEqual(['The user gave up on Duolingo', 'The user signed up for Babbel']);
    expect(await said('rent here is $2,100')).toEqual(['The user said rent here is $2,100']);
    // Still requests, not statements.
    expect(await said('order more printer paper')).toEqual([]);
  });

  it('ends a list of values at a clause after it: the clause is no value', async () => {
    const said = async (content: string): Promise<string[]> => (await run([{ role: 'user', content }])).facts.map((f) => f.statement);
    expect(await said("I'm allergic to peanuts, so be careful with recipes.")).toEqual(['The user is allergic to peanuts']);
    expect(await said("I'm allergic to cats and dogs, so visits are tricky")).toEqual(['The user is allergic to cats', 'The user is allergic to dogs']);
    expect(await said('I use Postgres and Redis, so ping me if the cache acts up')).toEqual(['The user uses PostgreSQL', 'The user uses Redis']);
  });

  it('leaves chat filler off the end of a statement and writes "rn" out', async () => {
    const res = await run([
      { role: 'user', content: 'and marketing renamed the app lol' },
      { role: 'user', content: 'honestly I live on coffee rn' },
    ]);
    expect(res.facts.map((f) => f.statement)).toEqual(['Marketing renamed the app', 'The user lives on coffee right now']);
  });

  it('keeps an informative sentence no rule reads as said, below the promotion bar, but not a question or a reaction', async () => {
    const res = await run([
      { role: 'user', content: 'The grant proposal is due on December 15' },
      { role: 'user', content: 'Sorry, correction: the flight to Tokyo is actually on Wednesday' },
      { role: 'user', content: 'anyway what is the weather like' },
      { role: 'user', content: 'That was amazing!' },
    ]);
    expect(res.facts.map((f) => [f.statement, f.predicate, f.confidence])).toEqual([
      ['The grant proposal is due on December 15', 'said', 0.55],
      [expect.stringMatching(/^Correction: the flight to Tokyo is actually on Wednesday, /), 'said', 0.55],
    ]);
  });

  it('keeps a leading "the" when the speaker is only known by role ("the user" is no name to strip)', async () => {
    const res = await run([
      { role: 'user', content: 'the meeting is at 3pm' },
      { role: 'user', content: 'rent here is $2,100 which hurts' },
      { role: 'user', content: 'standup is at 10:00 every day' },
    ]);
    expect(res.facts.map((f) => f.statement)).toEqual([
      'The user said the meeting is at 3pm',
      'The user said rent here is $2,100',
      'The user said standup is at 10:00 every day',
    ]);
  });

  it('joins a note typed as fragments into the fact of its first line, resting on every line', async () => {
    const res = await run([
      { role: 'user', content: 'meeting w/ legal' },
      { role: 'user', content: 'thurs 2pm' },
      { role: 'user', content: 'room 4b' },
      { role: 'user', content: 'lol' },
      { role: 'assistant', content: 'Noted.' },
    ]);
    expect(res.facts.map((f) => [f.statement, f.sources.map((s) => s.eventId)])).toEqual([['Meeting w/ legal, thurs 2pm, room 4b', ['e0', 'e1', 'e2']]]);
    // A fragment after a turn whose fact a rule read, or a question, is no part of a note.
    const other = await run([
      { role: 'user', content: 'I moved to Berlin' },
      { role: 'user', content: 'room 4b' },
      { role: 'user', content: 'meeting w/ legal' },
      { role: 'user', content: 'which room?' },
    ]);
    expect(other.facts.map((f) => f.statement)).toEqual(['The user moved to Berlin', 'Meeting w/ legal']);
  });

  it('continues a note begun in earlier turns (derived before): the batch fact rests on every line, never on earlier turns alone', async () => {
    const turn = (i: number, content: string, over: Partial<ExtractionEvent> = {}): ExtractionEvent => ({
      id: `t${i}`,
      content,
      kind: 'message',
      role: 'user',
      actor: null,
      occurredAt: new Date(at.getTime() + i * 60_000),
      conversationId: 'c',
      sequenceNum: i,
      ...over,
    });
    const ctx = (earlier: ExtractionEvent[]) => ({ namespace: 'n', entityTypes: [], relationshipTypes: [], factTypes: [], earlier });
    const said = (r: ExtractionResult) => r.facts.map((f) => [f.statement, f.sources.map((s) => s.eventId)]);
    const [head, time, room] = [turn(0, 'meeting w/ legal'), turn(1, 'thurs 2pm'), turn(2, 'room 4b')];

    expect(said(await ex.extract([time], ctx([head])))).toEqual([['Meeting w/ legal, thurs 2pm', ['t0', 't1']]]);
    expect(said(await ex.extract([room], ctx([head, time])))).toEqual([['Meeting w/ legal, thurs 2pm, room 4b', ['t0', 't1', 't2']]]);
    // The earlier turns' own facts are not the batch's: they were derived with their turns.
    expect(said(await ex.extract([turn(3, 'I moved to Berlin')], ctx([head, time])))).toEqual([['The user moved to Berlin', ['t3']]]);
    // No note to continue: another speaker's turn, a turn whose fact a rule read, or a gap of more than ten minutes.
    expect(said(await ex.extract([room], ctx([head, turn(1, 'ok', { role: 'assistant' })])))).toEqual([]);
    expect(said(await ex.extract([room], ctx([turn(1, 'I moved to Berlin')])))).toEqual([]);
    expect(said(await ex.extract([turn(20, 'room 4b')], ctx([head, time])))).toEqual([]);
  });

  it('does not end a statement at an abbreviation', async () => {
    const res = await run([{ role: 'user', content: 'My therapist is Dr. Miller, I see her every other Tuesday' }]);
    expect(res.facts.map((f) => f.statement)).toContain("The user's therapist is Dr. Miller");
  });

  it('keeps what remains after a stop as the current belief, not as another thing stopped', async () => {
    const res = await run([
      { role: 'user', content: 'I quit coffee last month, only green tea now' },
      { role: 'user', content: 'I stopped using Windows, just Linux these days' },
    ]);
    const said = res.facts.map((f) => [f.statement, f.isNegation]);
    expect(said).toEqual(
      expect.arrayContaining([
        [expect.stringMatching(/^The user no longer uses coffee/), true],
        ['The user now uses only green tea', false],
        ['The user no longer uses Windows', true],
        ['The user now uses only Linux', false],
      ]),
    );
    // Linux was not stopped: the remainder is not read as part of the stopped list.
    expect(said).not.toContainEqual(['The user no longer uses Linux', true]);
  });

  it('reads "it\'s X now" after a stop as what remains, and a remark about how it feels as nothing', async () => {
    const res = await run([
      { role: 'user', content: "ugh slept so badly. I quit coffee on monday, it's green tea in the morning now." },
      { role: 'user', content: "I stopped smoking, it's so much better now" },
    ]);
    const said = res.facts.map((f) => [f.statement, f.isNegation]);
    expect(said).toContainEqual(['The user now uses green tea in the morning', false]);
    expect(said.some(([s]) => /better/.test(String(s)))).toBe(false);
  });

  it('keeps the new value said after a change ("renamed the app. it\'s Stockpot now"), and not a remark about it', async () => {
    const res = await run([
      { role: 'user', content: "and marketing renamed the app lol. it's Stockpot now, the old name was taken on the app store in 3 countries" },
      { role: 'user', content: "I changed my number, it's 555-0199 now" },
      { role: 'user', content: "we changed the standup time, it's 9:30 now" },
      { role: 'user', content: "I moved the meeting. it's so much better now" },
      { role: 'user', content: "we're all set, it's Friday now" },
    ]);
    const said = res.facts.map((f) => f.statement);
    expect(said).toEqual(expect.arrayContaining(['The app is now Stockpot', "The user's number is now 555-0199", 'The standup time is now 9:30']));
    // A remark is no value, and without a change before it "it's Friday now" names nothing that changed.
    expect(said.filter((s) => / is now /.test(s))).toHaveLength(3);
  });

  it('reads a team\'s size said in passing or as the answer to "how big is the team?", as one value, and nothing else of the sentence repeats it', async () => {
    const res = await run([
      { role: 'assistant', content: 'Nice, a shared grocery list app is a good fit. How big is the team?' },
      { role: 'user', content: 'seven people total incl me. Yuki is our designer' },
      { role: 'user', content: "also two contractors started monday so we're nine now, slack is already louder" },
      { role: 'user', content: "now that we're eleven on the team standups are getting long again" },
      { role: 'user', content: 'My team has eight engineers' },
      { role: 'assistant', content: 'With eleven people, async standups could help.' },
      { role: 'user', content: "we're 2 weeks out from launch" },
      { role: 'user', content: "we're five now" },
    ]);
    const sizes = res.facts.filter((f) => f.predicate === 'team_size');
    expect(sizes.map((f) => [f.statement, f.objectValue, f.sources[0]?.eventId])).toEqual([
      ["The user's team is seven people", 'seven people', 'e1'],
      ["The user's team is nine people", 'nine people', 'e2'],
      ["The user's team is eleven people", 'eleven people', 'e3'],
      ["The user's team is eight people", 'eight people', 'e4'],
    ]);
    // The size is the turn's only statement of a count: a "said" copy would outlive the next size.
    expect(res.facts.filter((f) => f.predicate !== 'team_size' && /\b(?:seven|nine|eleven|eight)\b/i.test(f.statement))).toEqual([]);
    // The other sentence of the answer still counts.
    expect(res.facts.map((f) => f.statement)).toContain("Yuki is the user's designer");
  });

  it('reads a progressive of getting or making something as a plan under way, with whom it is for', async () => {
    const res = await run([
      { role: 'user', content: "For Mom I'm getting a scarf" },
      { role: 'user', content: "we're baking a cake for Sam" },
    ]);
    expect(res.facts.map((f) => [f.statement, f.factType])).toEqual(
      expect.arrayContaining([
        ['The user is getting a scarf for Mom', 'plan'],
        ['The user is baking a cake for Sam', 'plan'],
      ]),
    );
  });
});
