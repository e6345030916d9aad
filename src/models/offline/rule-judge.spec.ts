import type { JudgeCandidate, JudgeInput } from '../../silver/model-ports';
import { RuleJudge } from './rule-judge';
import { OFFLINE_RULES_MODEL } from './rule-set';

const T0 = new Date('2025-03-10T09:00:00Z');
const T1 = new Date('2025-03-24T10:00:00Z');

function aFact(over: Partial<JudgeInput['fact']> = {}): JudgeInput['fact'] {
  return {
    statement: 'The user uses Neovim',
    factType: 'preference',
    subjectName: 'the user',
    predicate: 'uses',
    objectValue: 'Neovim',
    isNegation: false,
    validFrom: T1,
    replacesValue: null,
    ...over,
  };
}
function aCandidate(over: Partial<JudgeCandidate> = {}): JudgeCandidate {
  return {
    id: 'old',
    statement: 'The user uses Vim',
    factType: 'preference',
    subjectName: 'the user',
    predicate: 'uses',
    objectValue: 'Vim',
    isNegation: false,
    validFrom: T0,
    similarity: 0.5,
    ...over,
  };
}
const decide = (fact: JudgeInput['fact'], candidates: JudgeCandidate[], judge = new RuleJudge()) => judge.decideOne({ fact, candidates });

describe('RuleJudge', () => {
  it('ADDs when there is nothing related', () => {
    expect(decide(aFact(), [])).toMatchObject({ action: 'ADD', targetId: null });
    expect(new RuleJudge().model).toBe(OFFLINE_RULES_MODEL);
  });

  it('SKIPs the same triple, alias-aware and case-insensitive', () => {
    const d = decide(aFact({ statement: 'The user uses postgres', objectValue: 'postgres' }), [
      aCandidate({ statement: 'The user uses PostgreSQL', objectValue: 'PostgreSQL' }),
    ]);
    expect(d).toMatchObject({ action: 'SKIP', targetId: 'old' });
    expect(d.reason).toContain('already known');
  });

  it('SUPERSEDEs the fact named by replacesValue (the vim → neovim case)', () => {
    const d = decide(aFact({ statement: 'The user switched to Neovim', replacesValue: 'vim' }), [
      aCandidate({ id: 'docker', statement: 'The user uses Docker', objectValue: 'Docker' }),
      aCandidate(),
    ]);
    expect(d).toMatchObject({ action: 'SUPERSEDE', targetId: 'old' });
  });

  it('SUPERSEDEs a same-category value on a change statement, but not an unrelated one', () => {
    const change = aFact({ statement: 'The user switched to Neovim' });
    expect(decide(change, [aCandidate()])).toMatchObject({ action: 'SUPERSEDE', targetId: 'old' });
    expect(decide(change, [aCandidate({ statement: 'The user uses Docker', objectValue: 'Docker' })])).toMatchObject({ action: 'ADD' });
    // Without a change word "uses" holds many values.
    expect(decide(aFact(), [aCandidate()])).toMatchObject({ action: 'ADD' });
  });

  it('SUPERSEDEs a single-valued predicate with a new value', () => {
    const d = decide(aFact({ statement: 'Dana lives in Hamburg', factType: 'attribute', subjectName: 'Dana', predicate: 'lives_in', objectValue: 'Hamburg' }), [
      aCandidate({ statement: 'Dana lives in Berlin', factType: 'attribute', subjectName: 'Dana', predicate: 'lives_in', objectValue: 'Berlin' }),
    ]);
    expect(d).toMatchObject({ action: 'SUPERSEDE', targetId: 'old' });
    expect(d.reason).toContain('one value');
  });

  it("SUPERSEDEs a team's size with the next size, and keeps the same size as known", () => {
    const size = (n: string) => ({ statement: `The user's team is ${n} people`, factType: 'attribute', predicate: 'team_size', objectValue: `${n} people` });
    expect(decide(aFact(size('eleven')), [aCandidate(size('nine'))])).toMatchObject({ action: 'SUPERSEDE', targetId: 'old' });
    expect(decide(aFact(size('nine')), [aCandidate(size('nine'))])).toMatchObject({ action: 'SKIP', targetId: 'old' });
  });

  it('SUPERSEDEs when a negation flips', () => {
    const d = decide(aFact({ statement: 'The user no longer uses Vim', objectValue: 'Vim', isNegation: true }), [aCandidate()]);
    expect(d).toMatchObject({ action: 'SUPERSEDE', targetId: 'old' });
    expect(d.reason).toContain('negation');
  });

  it('leaves other subjects alone', () => {
    expect(decide(aFact({ subjectName: 'Dana', statement: 'Dana switched to Neovim' }), [aCandidate()])).toMatchObject({ action: 'ADD' });
  });

  it('never SKIPs a statement whose object names another thing than the candidate, however many words they share', () => {
    // Free-text objects (a general clause keeps the whole statement as its object) overlap in all but the place.
    const said = (place: string) => `Dana's sister Dana lives in ${place}`;
    const d = decide(aFact({ statement: said('Dublin'), subjectName: 'Dana', predicate: 'live', objectValue: said('Dublin'), factType: 'other' }), [
      aCandidate({ statement: said('Turin'), subjectName: 'Dana', predicate: 'live', objectValue: said('Turin'), factType: 'other', similarity: 0.9 }),
    ]);
    expect(d.action).not.toBe('SKIP');
    // The same words again are a repeat.
    expect(
      decide(aFact({ statement: said('Turin'), subjectName: 'Dana', predicate: 'live', objectValue: said('Turin'), factType: 'other' }), [
        aCandidate({ statement: said('Turin'), subjectName: 'Dana', predicate: 'live', objectValue: said('Turin'), factType: 'other', similarity: 0.9 }),
      ]),
    ).toMatchObject({ action: 'SKIP', targetId: 'old' });
  });

  it('UPDATEs the same fact said with more detail', () => {
    const d = decide(aFact({ statement: 'The user uses Neovim with a Lua config', objectValue: 'Neovim' }), [
      aCandidate({ statement: 'The user uses Neovim', objectValue: 'Neovim' }),
    ]);
    expect(d).toMatchObject({ action: 'UPDATE', targetId: 'old' });
  });

  it('SKIPs near-identical statements at the configurable threshold', () => {
    const fact = aFact({ statement: 'Standup is at 9:30 every day', factType: 'other', predicate: null, objectValue: null });
    const candidate = aCandidate({ statement: 'Standup is at 9.30 every day', factType: 'other', predicate: null, objectValue: null, similarity: 0.93 });
    expect(decide(fact, [candidate])).toMatchObject({ action: 'SKIP', targetId: 'old' });
    expect(decide(fact, [candidate], new RuleJudge({ skipSimilarity: 0.95 }))).toMatchObject({ action: 'ADD' });
  });

  it('decides a batch in input order', async () => {
    const decisions = await new RuleJudge().decide([
      { fact: aFact(), candidates: [] },
      { fact: aFact({ objectValue: 'Vim', statement: 'The user uses Vim' }), candidates: [aCandidate()] },
    ]);
    expect(decisions.map((d) => d.action)).toEqual(['ADD', 'SKIP']);
  });
});

describe('RuleJudge: updates and distinct look-alikes (issue 23)', () => {
  const judge = new RuleJudge();
  const other = (over: Partial<JudgeCandidate>) => aCandidate({ predicate: null, objectValue: null, factType: 'other', ...over });

  it('a negated fact ends the older positive fact holding its object, whatever each predicate', () => {
    const coffee = other({ id: 'coffee', statement: 'The user drinks about four cups of coffee a day', predicate: 'drink' });
    const tea = other({ id: 'tea', statement: 'The user likes tea', predicate: 'likes' });
    const d = judge.decideOne({
      fact: aFact({ statement: 'The user no longer uses coffee', objectValue: 'coffee', isNegation: true }),
      candidates: [tea, coffee],
    });
    expect(d).toMatchObject({ action: 'SUPERSEDE', targetId: 'coffee' });
  });

  it('a negated fact ends the standing fact it names, not a past event that names the same thing', () => {
    const bowl = other({ id: 'bowl', statement: 'The user made a lopsided bowl at pottery on 23 March 2025', factType: 'event', similarity: 0.9 });
    const klass = other({ id: 'class', statement: 'The user does a pottery class thursday nights', similarity: 0.8 });
    const fact = aFact({ statement: 'The user no longer uses pottery', objectValue: 'pottery', isNegation: true });
    expect(judge.decideOne({ fact, candidates: [bowl, klass] })).toMatchObject({ action: 'SUPERSEDE', targetId: 'class' });
    // With no standing fact to end, the event is what the stop contradicts, as before.
    expect(judge.decideOne({ fact, candidates: [bowl] })).toMatchObject({ action: 'SUPERSEDE', targetId: 'bowl' });
  });

  it("a new amount of the same thing replaces the old one without a change word; another thing's amount does not", () => {
    const be = (statement: string) => aFact({ statement, predicate: 'be', objectValue: statement, factType: 'other' });
    const rent = other({ id: 'rent', statement: "Budget is a thing, rent here is $1,850 so the user can't go crazy", predicate: 'be', objectValue: 'a thing' });
    expect(judge.decideOne({ fact: be('Rent here is $2,100'), candidates: [rent] })).toMatchObject({ action: 'SUPERSEDE', targetId: 'rent' });
    const standup = other({
      id: 'standup',
      statement: 'The user said standup is at 10:00 every day',
      predicate: 'said',
      objectValue: 'standup is at 10:00 every day',
    });
    expect(judge.decideOne({ fact: be('Standup is at 9:30 now'), candidates: [standup] })).toMatchObject({ action: 'SUPERSEDE', targetId: 'standup' });
    const daughter = other({ id: 'daughter', statement: "Caroline's daughter is 5", predicate: 'be', objectValue: '5' });
    expect(judge.decideOne({ fact: be("Caroline's son is 7"), candidates: [daughter] }).action).toBe('ADD');
    // A past amount is no current one.
    expect(judge.decideOne({ fact: be('Rent was $1,200 in college'), candidates: [rent] }).action).toBe('ADD');
  });

  it('a new state of the same kind replaces the old one (a diet, a relationship status); another kind or person does not', () => {
    const vegetarian = other({ id: 'veg', statement: 'The user is vegetarian', predicate: 'be', objectValue: 'vegetarian', factType: 'attribute' });
    const busy = other({ id: 'busy', statement: 'Work has been busy', predicate: 'be', objectValue: 'busy', similarity: 0.95 });
    const vegan = aFact({ statement: 'The user went fully vegan', predicate: 'go', objectValue: 'fully vegan', factType: 'event' });
    expect(judge.decideOne({ fact: vegan, candidates: [busy, vegetarian] })).toMatchObject({ action: 'SUPERSEDE', targetId: 'veg' });
    const sister = aFact({ statement: "The user's sister is vegan", predicate: 'be', objectValue: 'vegan', factType: 'other' });
    expect(judge.decideOne({ fact: sister, candidates: [vegetarian] }).action).toBe('ADD');
    const married = aFact({ statement: 'The user is married', predicate: 'be', objectValue: 'married', factType: 'attribute' });
    expect(judge.decideOne({ fact: married, candidates: [vegetarian] }).action).toBe('ADD');
  });

  it('a change said with a light verb ("is … now") replaces no fact it shares no topic with', () => {
    const remote = other({
      id: 'remote',
      statement: 'The user is no longer keeping the WeWork desks, the whole company is fully remote starting april',
      predicate: 'be',
      objectValue: 'no longer keeping the WeWork desks, the whole company is fully remote starting april',
      similarity: 0.75, // below the "same meaning" bar
    });
    const climbing = aFact({
      statement: "Thursdays are climbing nights now, there's a bouldering gym ten minutes from the user",
      predicate: 'be',
      objectValue: "climbing nights now, there's a bouldering gym ten minutes from the user",
      factType: 'other',
      sourceText: "oh and I dropped pottery. thursdays are climbing nights now, there's a bouldering gym ten minutes from us",
    });
    expect(judge.decideOne({ fact: climbing, candidates: [remote] }).action).toBe('ADD');
    // Sharing its topic, it still does.
    const office = other({
      id: 'office',
      statement: 'The office is a WeWork on Mission Street',
      predicate: 'be',
      objectValue: 'a WeWork on Mission Street',
      similarity: 0.9,
    });
    const moved = aFact({ statement: 'The office is fully remote now', predicate: 'be', objectValue: 'fully remote now', factType: 'other' });
    expect(judge.decideOne({ fact: moved, candidates: [office] })).toMatchObject({ action: 'SUPERSEDE', targetId: 'office' });
  });

  it('a change statement supersedes the older fact sharing its topic, seen in its source sentence', () => {
    const team = other({ id: 'team', statement: "The user's team has eight engineers", similarity: 0.87 });
    const ship = other({ id: 'ship', statement: 'The user ships the billing service on Thursdays', similarity: 0.8 });
    const fact = aFact({ statement: 'The user is twelve people on the team', predicate: 'be', objectValue: 'twelve people on the team', factType: 'other' });
    expect(judge.decideOne({ fact: { ...fact, sourceText: 'we are twelve people on the team now after the reorg' }, candidates: [ship, team] })).toMatchObject({
      action: 'SUPERSEDE',
      targetId: 'team',
    });
    // Without a change word it is a new fact, not a replacement.
    expect(judge.decideOne({ fact: { ...fact, sourceText: 'we are twelve people on the team' }, candidates: [ship, team] }).action).toBe('ADD');
  });

  it('"again" after a stop replaces the stop; a change does not touch an unrelated fact of the subject', () => {
    const stop = other({ id: 'stop', statement: 'The user stopped going to the gym after the knee injury', predicate: 'stop' });
    const sister = other({ id: 'sister', statement: "The user's sister visited last weekend", similarity: 0.78 });
    const fact = aFact({ statement: 'The user started going to the gym again', predicate: 'start', objectValue: 'going to the gym again', factType: 'plan' });
    expect(judge.decideOne({ fact, candidates: [sister, stop] })).toMatchObject({ action: 'SUPERSEDE', targetId: 'stop' });
    expect(judge.decideOne({ fact, candidates: [sister] }).action).toBe('ADD');
  });

  it('a change about a named speaker does not touch a fact of hers that shares only her name', () => {
    const acme = other({ id: 'acme', statement: 'Dana works at Acme', subjectName: 'Dana', predicate: 'work', objectValue: 'Acme', similarity: 0.5 });
    const fact = aFact({
      statement: 'Dana does not use Vim',
      subjectName: 'Dana',
      predicate: 'use',
      objectValue: 'Vim',
      isNegation: true,
      sourceText: 'I no longer use vim',
    });
    expect(judge.decideOne({ fact, candidates: [acme] }).action).toBe('ADD');
    const vim = other({ id: 'vim', statement: 'Dana edits everything in vim', subjectName: 'Dana', predicate: 'edit', objectValue: 'everything in vim' });
    expect(judge.decideOne({ fact, candidates: [acme, vim] })).toMatchObject({ action: 'SUPERSEDE', targetId: 'vim' });
  });

  it('a stop and what remains, said in one sentence, both hold; the belief stated before ends', () => {
    const drank = other({ id: 'drank', statement: 'The user drinks about four cups of coffee a day', predicate: 'drink', similarity: 0.8 });
    const quit = other({ id: 'quit', statement: 'The user no longer uses coffee', predicate: 'uses', isNegation: true, similarity: 0.85, sameSource: true });
    const fact = aFact({ statement: 'The user now uses only green tea', objectValue: 'green tea', sourceText: 'I quit coffee last month, only green tea now' });
    expect(judge.decideOne({ fact, candidates: [quit, drank] })).toMatchObject({ action: 'SUPERSEDE', targetId: 'drank' });
  });

  it('a stop ends the habit whatever the word forms and intensifiers: "coffees" is coffee, "completely" names no topic', () => {
    const habit = other({
      id: 'habit',
      statement: 'The user drinks three coffees a day',
      predicate: 'drinks',
      objectValue: 'three coffees a day',
      similarity: 0.6,
    });
    const stop = aFact({
      statement: 'The user no longer uses coffee completely',
      predicate: 'uses',
      objectValue: 'coffee completely',
      isNegation: true,
      sourceText: 'I quit coffee completely',
    });
    expect(judge.decideOne({ fact: stop, candidates: [habit] })).toMatchObject({ action: 'SUPERSEDE', targetId: 'habit' });
    // Another drink is not ended by it.
    const tea = other({ id: 'tea', statement: 'The user drinks two teas a day', predicate: 'drinks', objectValue: 'two teas a day', similarity: 0.6 });
    expect(judge.decideOne({ fact: stop, candidates: [tea] }).action).toBe('ADD');
  });

  it('keeps two distinct facts that embed almost alike: SKIP needs the same content, not a cosine alone', () => {
    const peanuts = other({ id: 'peanuts', statement: 'The user is allergic to peanuts', similarity: 0.99 });
    const cats = aFact({ statement: 'The user is allergic to cats', predicate: null, objectValue: null, factType: 'other' });
    expect(judge.decideOne({ fact: cats, candidates: [peanuts] }).action).toBe('ADD');
    const again = aFact({ statement: 'The user is allergic to peanuts', predicate: null, objectValue: null, factType: 'other' });
    expect(judge.decideOne({ fact: again, candidates: [peanuts] })).toMatchObject({ action: 'SKIP', targetId: 'peanuts' });
  });
  it('keeps several ways of answering side by side, and lets a change on the same topic replace the old one', () => {
    const wants = (statement: string, objectValue: string, sourceText: string) => aFact({ statement, objectValue, sourceText, predicate: 'wants' });
    const bullets = aCandidate({
      id: 'bullets',
      statement: 'The user wants the assistant to answer in bullet points',
      predicate: 'wants',
      objectValue: 'answer in bullet points',
      similarity: 0.8,
    });
    const javascript = aCandidate({
      id: 'js',
      statement: 'The user wants the assistant to use plain JavaScript when the assistant give the user code',
      predicate: 'wants',
      objectValue: 'use plain JavaScript when the assistant give the user code',
      similarity: 0.82,
    });
    // Another instruction is one more way of answering, not a replacement of the most similar one.
    expect(
      decide(wants('The user wants the assistant to give the user distances in miles', 'give the user distances in miles', 'also give me distances in miles'), [
        javascript,
        bullets,
      ]),
    ).toMatchObject({ action: 'ADD' });
    // The assistant's "from now on" on the same topic replaces the older way.
    expect(
      decide(
        wants(
          'The user wants short paragraphs, no bullet lists',
          'short paragraphs, no bullet lists',
          'Got it, short paragraphs from now on, no bullet lists.',
        ),
        [javascript, bullets],
      ),
    ).toMatchObject({ action: 'SUPERSEDE', targetId: 'bullets' });
    expect(
      decide(
        wants(
          'The user wants the assistant to write all code examples in TypeScript, with types',
          'write all code examples in TypeScript, with types',
          "Got it, I'll write all code examples in TypeScript from now on, with types.",
        ),
        [bullets, javascript],
      ),
    ).toMatchObject({ action: 'SUPERSEDE', targetId: 'js' });
    // It replaces no fact about the world that shares its words.
    const renamed = aCandidate({
      id: 'app',
      statement: 'The app is now Stockpot',
      predicate: 'is',
      objectValue: 'Stockpot',
      factType: 'attribute',
      similarity: 0.9,
    });
    expect(
      decide(wants('The user wants the assistant to call the app Stockpot', 'call the app Stockpot', "Got it, I'll call the app Stockpot from now on."), [
        renamed,
      ]).action,
    ).toBe('ADD');
  });
});
