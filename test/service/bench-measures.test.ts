import {
  answerWords,
  contentWords,
  lightStem,
  matchesReference,
  rankByCosine,
  referenceCeiling,
  referenceFacts,
  rrfFuse,
  scoreReferences,
  wordRecall,
} from '../../bench/measures';

/**
 * The pure measures behind bench/recall (raw-turn fusion, answer-word recall) and
 * bench/silver-reference (content words, the match rule, coverage and recall), on fixtures
 * written here: no public evaluation data is read.
 */
describe('bench measures', () => {
  describe('words', () => {
    it('stems plurals lightly and leaves digits and -ss/-us/-is words alone', () => {
      expect(['stories', 'paintings', 'classes', 'class', 'focus', 'this', 'runs', 'kids', '2023', 'bus'].map(lightStem)).toEqual([
        'story',
        'painting',
        'class',
        'class',
        'focus',
        'this',
        'run',
        'kid',
        '2023',
        'bus',
      ]);
    });

    it('answer words: lowercase, stop words and single letters out, numbers kept, a number answer read as text', () => {
      expect(answerWords('7 May 2023')).toEqual(['7', 'may', '2023']);
      expect(answerWords('The week before 1 January 2023')).toEqual(['week', '1', 'january', '2023']);
      expect(answerWords('Kickboxing, Taekwondo')).toEqual(['kickboxing', 'taekwondo']);
      expect(answerWords(3)).toEqual(['3']);
      expect(answerWords(null)).toEqual([]);
      expect(answerWords(undefined)).toEqual([]);
      expect(answerWords("Caroline's a")).toEqual(['caroline']);
    });

    it('content words: 4+ characters (a year counts), stop words out, stemmed, distinct', () => {
      expect(contentWords('Melanie painted a lake sunrise last year, and she paints lakes in 2022.')).toEqual([
        'melanie',
        'painted',
        'lake',
        'sunrise',
        'last',
        'year',
        'paint',
        '2022',
      ]);
    });

    it('word recall: the share of wanted stems in a text; null when nothing is wanted', () => {
      expect(wordRecall(answerWords('pottery classes'), 'Melanie: I signed up for a pottery class!')).toBe(1);
      expect(wordRecall(answerWords('7 May 2023'), 'Caroline went to the support group on 2023-05-07')).toBeCloseTo(1 / 3);
      expect(wordRecall([], 'anything')).toBeNull();
    });
  });

  describe('the reference match rule (at least half of the reference content words)', () => {
    const reference = 'Caroline attended an LGBTQ support group recently and found the transgender stories inspiring.';
    // caroline attended lgbtq support group recently found transgender story inspiring: 10 words

    it('matches a statement holding half of them, on stems', () => {
      expect(matchesReference(reference, 'Caroline attended a LGBTQ support group with transgender story nights')).toBe(true); // 7 of 10
      expect(matchesReference(reference, 'Caroline found transgender stories at the LGBTQ support group')).toBe(true); // 7 of 10 ("stories" → story)
    });

    it('does not match one holding fewer than half', () => {
      expect(matchesReference(reference, 'Caroline went to an LGBTQ support group')).toBe(false); // 4 of 10
      expect(matchesReference(reference, "The user's therapist is Dr")).toBe(false);
    });
  });

  describe('reference facts and scoring', () => {
    const known = new Set(['D1:2', 'D1:3', 'D1:5', 'D2:1', 'D2:4']);
    const observation = {
      session_2_observation: { Jon: [['Jon opened a dance studio downtown.', ['D2:01', 'D2:4']]] },
      session_1_observation: {
        Gina: [
          ['Gina lost her job at the store.', 'D1:03'],
          ['Gina started an online clothing business.', 'D1:5; D1:2'],
          ['A reference that cites a turn the conversation lacks.', 'D9:9'],
        ],
      },
    };

    it('reads sessions in order, normalises ids (zero padding, lists, ";"), drops unknown turns', () => {
      const { facts, dropped } = referenceFacts(observation, known);
      expect(dropped).toBe(1);
      expect(facts).toEqual([
        { text: 'Gina lost her job at the store.', speaker: 'Gina', turns: ['D1:3'] },
        { text: 'Gina started an online clothing business.', speaker: 'Gina', turns: ['D1:5', 'D1:2'] },
        { text: 'Jon opened a dance studio downtown.', speaker: 'Jon', turns: ['D2:1', 'D2:4'] },
      ]);
      expect(referenceFacts(null, known)).toEqual({ facts: [], dropped: 0 });
    });

    it('coverage counts reference turns with any derived fact; recall needs a match from one of its own turns', () => {
      const { facts } = referenceFacts(observation, known);
      const derived = new Map<string, string[]>([
        ['D1:3', ['Gina works at a store']], // covered; gina, store: 2 of 3 (gina lost store; "job" is too short) → matched
        ['D1:2', ['The user is tired']], // covered, no match for the business fact
        ['D2:4', ['Jon opened a dance studio']], // matched through its second turn
        ['D1:1', ['Gina started an online clothing business']], // not a turn of that reference: does not count
      ]);
      const score = scoreReferences(facts, derived);
      expect(score.referenceTurns).toBe(5); // D1:3, D1:5, D1:2, D2:1, D2:4
      expect(score.coveredTurns).toBe(3);
      expect(score.coverage).toBe(0.6);
      expect(score.referenceFacts).toBe(3);
      expect(score.matched).toBe(2);
      expect(score.recall).toBe(0.667);
      expect(score.misses.map((m) => m.text)).toEqual(['Gina started an online clothing business.']);
    });

    it('the ceiling: a reference the whole turn holds, one a single sentence holds, one summarised across sentences, one in other words', () => {
      const turns = new Map([
        ['D1:1', 'Caroline: I went to a support group yesterday. It was so powerful! The stories were inspiring.'],
        ['D1:2', 'Melanie: Thanks! Family time matters to me.'],
      ]);
      const refs = [
        { text: 'Caroline went to a support group.', speaker: 'Caroline', turns: ['D1:1'] }, // one sentence holds it
        { text: 'Caroline found the support group stories powerful and inspiring.', speaker: 'Caroline', turns: ['D1:1'] }, // across both sentences
        { text: 'Melanie values family and finds it special and important.', speaker: 'Melanie', turns: ['D1:2'] }, // 3 of 6 words: family, melanie… held
        { text: 'Melanie cherishes weekends with relatives.', speaker: 'Melanie', turns: ['D1:2'] }, // other words
      ];
      // Content words (the speaker's name counts with every sentence): [caroline, went, support, group] 4/4 in the first
      // sentence; [caroline, found, support, group, story, powerful, inspiring] 6/7 in the turn, at most 3/7 in one
      // sentence; [melanie, value, family, find, special, important] 2/6; [melanie, cherishe, weekend, relative] 1/4.
      expect(referenceCeiling(refs, turns)).toEqual({ wholeTurn: 0.5, bestSentence: 0.25 });
    });
  });

  describe('raw-turn fusion', () => {
    it('RRF with k = 60 and equal weights: an id high in both lists beats one first in a single list', () => {
      // a: 1/61 + 1/63; b: 1/62 + 1/61; c: 1/63 + 1/64; d: 1/62
      expect(
        rrfFuse([
          ['a', 'b', 'c'],
          ['b', 'd', 'a', 'c'],
        ]),
      ).toEqual(['b', 'a', 'c', 'd']);
      expect(rrfFuse([['x'], ['y']])).toEqual(['x', 'y']); // a tie goes to the earlier list
      expect(rrfFuse([['x', 'x', 'y']])).toEqual(['x', 'y']); // a repeated id counts once, at its best rank
    });

    it('weights scale a list', () => {
      expect(rrfFuse([['x'], ['y']], 60, [1, 2])).toEqual(['y', 'x']);
    });

    it('ranks by cosine (dot product of unit vectors), ties by position', () => {
      const ids = ['t1', 't2', 't3'];
      expect(
        rankByCosine(
          [1, 0],
          [
            [0, 1],
            [1, 0],
            [0.6, 0.8],
          ],
          ids,
        ),
      ).toEqual(['t2', 't3', 't1']);
      expect(
        rankByCosine(
          [1, 0],
          [
            [0, 1],
            [0, 1],
          ],
          ['a', 'b'],
        ),
      ).toEqual(['a', 'b']);
    });
  });
});
