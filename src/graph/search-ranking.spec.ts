import { Fact } from '../silver/silver.types';
import {
  askedNames,
  EMPTY_TURN,
  escapeLucene,
  eventInformation,
  factPolarity,
  answerFit,
  ANSWER_KIND_FACTOR,
  expectedAnswer,
  rankingPriors,
  foldEventsIntoFacts,
  fusedCandidates,
  fuseByReciprocalRank,
  rankMemoryHits,
  matchesSearchFilter,
  NAME_ONLY_TURN,
  NEGATED_FACT_FACTOR,
  newerFirst,
  withRoleNames,
  RRF_K,
  toLuceneQuery,
} from './search-ranking';

const fact = (over: Partial<Fact> = {}): Fact => ({
  id: 'f1',
  namespace: 'ns',
  statement: 'The user uses Neovim',
  factType: 'preference',
  subjectEntityId: 'u',
  predicate: 'uses',
  objectValue: 'Neovim',
  objectEntityId: 'nvim',
  isNegation: false,
  confidence: 0.9,
  importance: 0.5,
  validFrom: new Date('2026-03-01T00:00:00Z'),
  validTo: null,
  recordedAt: new Date('2026-03-08T00:00:00Z'),
  retiredAt: null,
  supersededById: null,
  extractionModel: 'm',
  derivationRunId: 'r',
  ...over,
});

describe('fuseByReciprocalRank', () => {
  it('sums 1/(RRF_K + rank) over the channels that found a fact and records them', () => {
    const fused = fuseByReciprocalRank({ vector: [{ id: 'a' }, { id: 'b' }], keyword: [{ id: 'b' }], graph: [{ id: 'c' }] });
    expect(fused.map((h) => h.id)).toEqual(['b', 'a', 'c']);
    expect(fused[0]).toEqual({ id: 'b', score: 1 / (RRF_K + 2) + 1 / (RRF_K + 1), channels: ['vector', 'keyword'] });
    expect(fused[1]?.channels).toEqual(['vector']);
  });

  it('weighs each channel: a hit at rank r adds weight / (RRF_K + r); weight 0 leaves the channel out', () => {
    const fused = fuseByReciprocalRank({ vector: [{ id: 'a' }], event_vector: [{ id: 'b' }], graph: [{ id: 'c' }] }, RRF_K, {
      vector: 0.5,
      event_vector: 1,
      graph: 0,
    });
    expect(fused.map((h) => [h.id, h.score])).toEqual([
      ['b', 1 / (RRF_K + 1)],
      ['a', 0.5 / (RRF_K + 1)],
    ]);
  });

  it('breaks ties deterministically and ignores duplicates within a channel', () => {
    const fused = fuseByReciprocalRank({ vector: [{ id: 'z' }, { id: 'z' }], keyword: [{ id: 'a' }] });
    expect(fused.map((h) => [h.id, h.channels])).toEqual([
      ['a', ['keyword']],
      ['z', ['vector']],
    ]);
  });
});

describe('the RRF constant of the whole ranking', () => {
  // b: third in both event channels; a: first in one. A large k lets agreement win, a small one the top rank.
  const lists = {
    vector: [],
    keyword: [],
    graph: [],
    event_vector: [
      { id: 'a', score: 1 },
      { id: 'x', score: 1 },
      { id: 'b', score: 1 },
    ],
    event_keyword: [
      { id: 'c', score: 1 },
      { id: 'y', score: 1 },
      { id: 'b', score: 1 },
    ],
  };

  it('is RRF_K unless given, in the candidates and in the ranked hits alike', () => {
    expect(fusedCandidates(lists, 1).events.map((h) => h.id)).toEqual(['b']);
    expect(rankMemoryHits(lists, () => true)[0]?.id).toBe('b');
    expect(rankMemoryHits(lists, () => true, {}, {}, RRF_K)[0]?.score).toBeCloseTo(2 / (RRF_K + 3), 12);
  });

  it('is taken from the caller (bench/recall-tune replays other values)', () => {
    expect(fusedCandidates(lists, 1, {}, 0.5).events.map((h) => h.id)).toEqual(['a']);
    expect(
      rankMemoryHits(lists, () => true, {}, {}, 0.5)
        .map((h) => h.id)
        .slice(0, 2),
    ).toEqual(['a', 'c']);
  });
});

describe('foldEventsIntoFacts', () => {
  const fused = () =>
    fuseByReciprocalRank({ vector: [{ id: 'f1' }, { id: 'f2' }], event_vector: [{ id: 'e2' }, { id: 'e1' }, { id: 'e3' }], event_keyword: [{ id: 'e2' }] });

  it('folds a raw event into the best fact that rests on it: its score and channels add, it is not listed again', () => {
    const hits = foldEventsIntoFacts(
      fused(),
      new Map([
        ['f1', ['e1']],
        ['f2', ['e1', 'e2']],
      ]),
    );
    expect(hits.map((h) => [h.kind, h.id])).toEqual([
      ['FACT', 'f2'],
      ['FACT', 'f1'],
      ['EVENT', 'e3'],
    ]);
    const f2 = hits[0];
    expect(f2?.channels).toEqual(['vector', 'event_vector', 'event_keyword']);
    expect(f2?.score).toBeCloseTo(1 / (RRF_K + 2) + 1 / (RRF_K + 1) + 1 / (RRF_K + 1), 12);
    // e1 is carried by f1 (ranked above f2 before folding), so it adds to f1, not to f2.
    expect(hits[1]?.score).toBeCloseTo(1 / (RRF_K + 1) + 1 / (RRF_K + 2), 12);
  });

  it('keeps events no fact hit carries as EVENT hits, in score order', () => {
    const hits = foldEventsIntoFacts(
      fused(),
      new Map([
        ['f1', []],
        ['f2', []],
      ]),
    );
    expect(hits.map((h) => h.id)).toEqual(['e2', 'f1', 'e1', 'f2', 'e3']);
    expect(hits.filter((h) => h.kind === 'EVENT').map((h) => h.id)).toEqual(['e2', 'e1', 'e3']);
  });

  it("hands a stale turn's relevance to the current fact that superseded it and ranks the turn right below, only when that fact is a hit", () => {
    const stale = new Map([
      ['e2', ['f2']],
      ['e3', ['gone']],
    ]);
    const hits = foldEventsIntoFacts(
      fused(),
      new Map([
        ['f1', []],
        ['f2', []],
      ]),
      stale,
    );
    // e2 was the best match (two channels); its successor f2 now leads, e2 right behind it.
    expect(hits.map((h) => h.id)).toEqual(['f2', 'e2', 'f1', 'e1', 'e3']);
    expect(hits[1]?.score).toBeLessThan(hits[0]?.score as number);
    expect(hits.find((h) => h.id === 'f2')?.channels).toEqual(expect.arrayContaining(['event_vector', 'event_keyword']));
  });
});

describe('toLuceneQuery', () => {
  it('keeps only lowercased words, so operators and syntax become text', () => {
    expect(toLuceneQuery('neovim" AND (vim OR ~* :\\ [Berlin TO Z] NOT')).toBe('neovim vim berlin not');
    expect(toLuceneQuery('  ?! ')).toBeNull();
    expect(toLuceneQuery('x b x c', 2)).toBe('x b');
  });

  it('leaves out stop words, unless the query has nothing else', () => {
    expect(toLuceneQuery('What did Caroline do at the LGBTQ support group?')).toBe('caroline lgbtq support group');
    expect(toLuceneQuery('Who are you?')).toBe('who are you');
  });

  it('escapes every reserved character', () => {
    expect(escapeLucene('a+b-c&&d||e!(f){g}[h]^i"j~k*l?m:n\\o/p')).toBe('a\\+b\\-c\\&\\&d\\|\\|e\\!\\(f\\)\\{g\\}\\[h\\]\\^i\\"j\\~k\\*l\\?m\\:n\\\\o\\/p');
  });
});

describe('matchesSearchFilter', () => {
  it('keeps only the namespace and, by default, current facts', () => {
    expect(matchesSearchFilter(fact(), 'ns', {}, null)).toBe(true);
    expect(matchesSearchFilter(fact({ namespace: 'other' }), 'ns', { includeSuperseded: true }, null)).toBe(false);
    expect(matchesSearchFilter(fact({ validTo: new Date('2026-03-05T00:00:00Z') }), 'ns', {}, null)).toBe(false);
    expect(matchesSearchFilter(fact({ retiredAt: new Date() }), 'ns', {}, null)).toBe(false);
    expect(matchesSearchFilter(fact({ validTo: new Date('2026-03-05T00:00:00Z') }), 'ns', { includeSuperseded: true }, null)).toBe(true);
  });

  it('asOf T keeps facts with validFrom <= T < validTo', () => {
    const f = fact({ validTo: new Date('2026-04-01T00:00:00Z') });
    expect(matchesSearchFilter(f, 'ns', {}, new Date('2026-03-01T00:00:00Z'))).toBe(true);
    expect(matchesSearchFilter(f, 'ns', {}, new Date('2026-02-28T23:59:59Z'))).toBe(false);
    expect(matchesSearchFilter(f, 'ns', {}, new Date('2026-04-01T00:00:00Z'))).toBe(false);
    expect(matchesSearchFilter(fact({ retiredAt: new Date() }), 'ns', {}, new Date('2026-03-02T00:00:00Z'))).toBe(false);
    expect(matchesSearchFilter(fact({ retiredAt: new Date() }), 'ns', { includeSuperseded: true }, new Date('2026-03-02T00:00:00Z'))).toBe(true);
  });

  it('applies fact types, entity and minimum importance', () => {
    expect(matchesSearchFilter(fact(), 'ns', { factTypes: ['plan'] }, null)).toBe(false);
    expect(matchesSearchFilter(fact(), 'ns', { factTypes: ['preference'] }, null)).toBe(true);
    expect(matchesSearchFilter(fact(), 'ns', { entityId: 'nvim' }, null)).toBe(true);
    expect(matchesSearchFilter(fact(), 'ns', { entityId: 'berlin' }, null)).toBe(false);
    expect(matchesSearchFilter(fact(), 'ns', { minImportance: 0.6 }, null)).toBe(false);
    expect(matchesSearchFilter(fact(), 'ns', { minImportance: 0.5 }, null)).toBe(true);
  });
});

describe('small namespaces: generic words and empty turns decide nothing (issue 23)', () => {
  it('leaves the generic subject "user" out of keyword queries, unless nothing else is left', () => {
    expect(toLuceneQuery('Which seat does the user want on flights?')?.split(' ')).toEqual(expect.not.arrayContaining(['user']));
    expect(toLuceneQuery('Which seat does the user want on flights?')).toContain('seat');
    expect(toLuceneQuery("What is the user's blood type?")).toBe('blood type');
    expect(toLuceneQuery('the user')).toBe('the user');
  });

  it('rates what a turn can say: nothing for "?", "ok", "lol" or an emoji, less for a bare question', () => {
    for (const empty of ['?', 'ok', 'lol', '😂😂', 'Sam: ?', 'k']) expect(eventInformation(empty, 'Sam')).toBe(EMPTY_TURN);
    expect(eventInformation('Sam: Does it work for you?', 'Sam')).toBeLessThan(eventInformation('Sam: It works for me on Friday.', 'Sam'));
    expect(eventInformation('I parked on level 3, spot B12', null)).toBe(1);
    // The speaker's name before the colon is not content; another prefix is.
    expect(eventInformation('Sam: ok', 'Sam')).toBe(EMPTY_TURN);
    expect(eventInformation('Note: ok', 'Sam')).toBeGreaterThan(EMPTY_TURN);
    // Chat drops question marks: a turn that opens as a question still asks.
    expect(eventInformation('Sam: did u get the tent', 'Sam')).toBe(eventInformation('Sam: did u get the tent?', 'Sam'));
    expect(eventInformation('where r u guys going tmrw', null)).toBeLessThan(eventInformation('we are going to Porto tmrw', null));
    // A clause that opens with a question word and goes on as a statement states.
    expect(eventInformation('When you book flights for me, always pick an aisle seat', null)).toBe(1);
  });

  it('reads a turn that is only the name the question asks about ("KAT", "Jamie!!") as saying nothing', () => {
    const names = askedNames("Where are the three of them going to celebrate Kat's new job?");
    expect([...names]).toEqual(['kat']);
    expect(eventInformation('jd_88: KAT', 'jd_88', names)).toBe(NAME_ONLY_TURN);
    expect(eventInformation('Jamie!!', null, askedNames('What weekend did Jamie propose?'))).toBe(NAME_ONLY_TURN);
    // About the person asked about, which an empty turn by them ("Jamie: ?") is not.
    expect(eventInformation('Jamie: ?', 'Jamie', askedNames('Which tent did Jamie get?'))).toBe(EMPTY_TURN);
    expect(NAME_ONLY_TURN).toBeGreaterThan(EMPTY_TURN);
    // Without the question's names it is one word of content, as before.
    expect(eventInformation('jd_88: KAT', 'jd_88')).toBe(0.6);
    // A turn about the person still says something, and a name the question does not ask about is content.
    expect(eventInformation("kw_draws: Kat's interview is at Fernhill on Monday", 'kw_draws', names)).toBe(1);
    expect(eventInformation('Marco', null, names)).toBe(0.6);
    // The first word, "I" and lower-case words are no names; a question in lower case names none.
    expect([...askedNames('Where did I park?')]).toEqual([]);
    expect([...askedNames('when is kat moving?')]).toEqual([]);
    expect([...askedNames('Did Marco and Jamie meet Kat?')]).toEqual(['marco', 'jamie', 'kat']);
  });

  it('ranks an informative turn above an empty one that the channels placed first', () => {
    const fused = [
      { id: 'lol', score: 0.05, channels: ['event_keyword' as const] },
      { id: 'fact-turn', score: 0.03, channels: ['event_vector' as const] },
    ];
    const info = (id: string) => (id === 'lol' ? eventInformation('Sam: lol', 'Sam') : 1);
    expect(foldEventsIntoFacts(fused, new Map(), new Map(), { eventPrior: info }).map((h) => h.id)).toEqual(['fact-turn', 'lol']);
    expect(foldEventsIntoFacts(fused, new Map()).map((h) => h.id)).toEqual(['lol', 'fact-turn']);
  });

  it('ranks a positive fact above a negated one for a question about what someone does, not for one about what they avoid', () => {
    const liked = 'What music does the user like?';
    const avoided = "What music can't the user stand?";
    expect(factPolarity({ isNegation: true }, liked)).toBe(NEGATED_FACT_FACTOR);
    expect(factPolarity({ isNegation: false }, liked)).toBe(1);
    for (const q of [
      avoided,
      'What does the user dislike?',
      'Is the user allergic to anything?',
      "Which editor doesn't the user use?",
      'What did the user quit?',
      // Yes or no: the negated fact is the answer.
      'Does the user like country music?',
      'Kat, is the user into country music',
    ])
      expect(factPolarity({ isNegation: true }, q)).toBe(1);
    // The negated fact was ahead, with its own turn folded in; weighed as one hit, it falls behind.
    const fused = [
      { id: 'not-country', score: 0.03, channels: ['keyword' as const] },
      { id: 'country-turn', score: 0.01, channels: ['event_keyword' as const] },
      { id: 'jazz', score: 0.028, channels: ['vector' as const] },
    ];
    const events = new Map([
      ['not-country', ['country-turn']],
      ['jazz', []],
    ]);
    const prior = (id: string) => factPolarity({ isNegation: id === 'not-country' }, liked);
    expect(foldEventsIntoFacts(fused, events, new Map(), { factPrior: prior }).map((h) => h.id)).toEqual(['jazz', 'not-country']);
    expect(foldEventsIntoFacts(fused, events).map((h) => h.id)).toEqual(['not-country', 'jazz']);
  });

  it('weighs a hit that holds the kind of value its question asks for (a time, an amount) above one that does not', () => {
    for (const q of ["When is the user's dentist appointment?", 'what time does the gym open', 'Kat, which day is the party', 'How long ago did Bob move?'])
      expect(expectedAnswer(q)).toBe('time');
    for (const q of ['How many cats does the user have?', 'how often does she run']) expect(expectedAnswer(q)).toBe('amount');
    for (const q of ['What does the user like?', 'Where does Bob live?', 'Who is the manager?', 'Does the user run?']) expect(expectedAnswer(q)).toBeNull();
    const when = expectedAnswer('When is the dentist appointment?');
    expect(answerFit(when, 'The user has a dentist appointment on Tuesday, 10 March 2026 at 9')).toBe(ANSWER_KIND_FACTOR);
    expect(answerFit(when, 'I went to the support group yesterday')).toBe(ANSWER_KIND_FACTOR);
    expect(answerFit(when, 'The user does not like the dentist')).toBe(1);
    expect(answerFit('amount', 'The user drinks three coffees a day')).toBe(ANSWER_KIND_FACTOR);
    expect(answerFit('amount', 'The user likes coffee')).toBe(1);
    expect(answerFit(null, 'on Tuesday')).toBe(1);
    // Through the priors search builds: the dated fact overtakes the one sharing more words.
    const facts = new Map([
      ['scared', { isNegation: false, statement: 'The user is scared of the dentist' }],
      ['appointment', { isNegation: false, statement: 'The user has a dentist appointment next Tuesday at 9' }],
    ]);
    const priors = rankingPriors(
      "When is the user's dentist appointment?",
      () => undefined,
      (id) => facts.get(id),
    );
    const fused = [
      { id: 'scared', score: 0.033, channels: ['keyword' as const] },
      { id: 'appointment', score: 0.03, channels: ['vector' as const] },
    ];
    const events = new Map([
      ['scared', []],
      ['appointment', []],
    ]);
    expect(foldEventsIntoFacts(fused, events, new Map(), priors).map((h) => h.id)).toEqual(['appointment', 'scared']);
    expect(foldEventsIntoFacts(fused, events).map((h) => h.id)).toEqual(['scared', 'appointment']);
  });

  it('reads the name the user goes by as "the user", whole words only, keeping a possessive', () => {
    const names = new Map([
      ['maya', 'the user'],
      ['jo ann', 'the user'],
    ]);
    expect(withRoleNames("What is Maya's cat called?", names)).toBe("What is the user's cat called?");
    expect(withRoleNames('Where does JO ANN live, and does maya know?', names)).toBe('Where does the user live, and does the user know?');
    expect(withRoleNames('Is Mayan food spicy?', names)).toBe('Is Mayan food spicy?');
    expect(withRoleNames("What is Maya's cat called?", new Map())).toBe("What is Maya's cat called?");
    // The keyword query then leaves the role out, as it does "user".
    expect(toLuceneQuery(withRoleNames("What is Maya's cat called?", names))).toBe('cat called');
  });
});

describe('newerFirst: what was said later first among hits about the same thing (issue 44, item 2)', () => {
  const day = (d: number) => Date.UTC(2026, 2, d);
  const page = (ids: string[]) => ids.map((id, i) => ({ kind: 'FACT' as const, id, score: 0.3 - i * 0.05, channels: ['vector' as const] }));
  const said = new Map([
    ['drinks', { text: 'The user drinks three cups of coffee every morning', at: day(1) }],
    ['likes', { text: 'The user likes Thai food', at: day(2) }],
    ['quit', { text: 'The user no longer drinks coffee. I quit coffee, only green tea now', at: day(20) }],
    ['beans', { text: 'Ana roasts coffee beans at her cafe', at: day(25) }],
  ]);
  const dated = (h: { id: string }) => said.get(h.id);

  it('moves a later hit about the same thing just above the older one, with its score; the page keeps its hits', () => {
    const out = newerFirst(page(['drinks', 'likes', 'quit']), dated, 'how much coffee does the user drink?');
    expect(out.map((h) => h.id)).toEqual(['quit', 'drinks', 'likes']);
    expect(out[0]?.score).toBe(0.3);
  });

  it('leaves hits that share one word, or only a name the question asks about, where they were', () => {
    // "coffee" alone: Ana's beans are not what the user drinks.
    expect(newerFirst(page(['drinks', 'beans']), dated, 'how much coffee does the user drink?').map((h) => h.id)).toEqual(['drinks', 'beans']);
    const named = new Map([
      ['party', { text: 'Jamie threw a party for Kat', at: day(1) }],
      ['job', { text: 'Kat started a new job, Jamie said', at: day(9) }],
    ]);
    expect(newerFirst(page(['party', 'job']), (h) => named.get(h.id), 'What did Jamie do for Kat?').map((h) => h.id)).toEqual(['party', 'job']);
    // A reply in the same exchange restates; a hit found far less well is not lifted over the answer.
    const reply = new Map([...said, ['quit', { text: 'The user no longer drinks coffee. I quit coffee, only green tea now', at: day(1) + 60_000 }]]);
    expect(newerFirst(page(['drinks', 'likes', 'quit']), (h) => reply.get(h.id), 'coffee?').map((h) => h.id)).toEqual(['drinks', 'likes', 'quit']);
    const far = [...page(['drinks', 'likes']), { kind: 'EVENT' as const, id: 'quit', score: 0.1, channels: ['event_vector' as const] }];
    expect(newerFirst(far, dated, 'coffee?').map((h) => h.id)).toEqual(['drinks', 'likes', 'quit']);
    // Asked about the past, what was said then is what is wanted.
    expect(newerFirst(page(['drinks', 'likes', 'quit']), dated, 'how much coffee did the user drink before?').map((h) => h.id)).toEqual([
      'drinks',
      'likes',
      'quit',
    ]);
    // Undated hits stay put.
    expect(newerFirst(page(['drinks', 'quit']), () => undefined, 'coffee').map((h) => h.id)).toEqual(['drinks', 'quit']);
  });

  it('has every hit carry the hits said later about the same thing, also when a question about the past keeps the order', () => {
    const updated = (out: Array<{ id: string; updatedBy?: string[] }>) => Object.fromEntries(out.map((h) => [h.id, h.updatedBy ?? []]));
    const now = updated(newerFirst(page(['drinks', 'likes', 'quit', 'beans']), dated, 'how much coffee does the user drink?'));
    expect(now).toEqual({ quit: [], drinks: ['quit'], likes: [], beans: [] });
    const past = newerFirst(page(['drinks', 'likes', 'quit']), dated, 'how much coffee did the user drink before?');
    expect(past.map((h) => h.id)).toEqual(['drinks', 'likes', 'quit']);
    expect(updated(past)).toEqual({ drinks: ['quit'], likes: [], quit: [] });
    // A change sharing one topic word is named, but not lifted: the order is the ranking's.
    const green = new Map([
      ...said,
      ['quit', { text: 'The user no longer uses coffee completely. I quit coffee completely, only green tea now', at: day(20) }],
    ]);
    const loose = newerFirst(page(['drinks', 'likes', 'quit']), (h) => green.get(h.id), 'how much coffee does the user drink?');
    expect(loose.map((h) => h.id)).toEqual(['drinks', 'likes', 'quit']);
    expect(updated(loose)).toEqual({ drinks: ['quit'], likes: [], quit: [] });
    // Said in the same exchange, or one shared word without a change: nothing to carry.
    const reply = new Map([...said, ['quit', { text: 'The user no longer drinks coffee. I quit coffee, only green tea now', at: day(1) + 60_000 }]]);
    expect(updated(newerFirst(page(['drinks', 'quit', 'beans']), (h) => reply.get(h.id), 'coffee?'))).toEqual({ drinks: [], quit: [], beans: [] });
  });
});
