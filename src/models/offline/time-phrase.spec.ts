import { resolveTimes, writeOutTimes } from './time-phrase';

const ref = new Date('2023-05-08T13:56:00Z'); // a Monday
const written = (text: string, mode: 'past' | 'any' = 'past') => writeOutTimes(text, resolveTimes(text, ref, mode));

describe('time phrases', () => {
  it('writes relative days, weeks, months and years out against the reference date', () => {
    expect(written('went to a support group yesterday')).toBe('went to a support group on 7 May 2023');
    expect(written('ran a race last Saturday')).toBe('ran a race on Saturday, 6 May 2023');
    expect(written('reserved a table on Friday at 8 pm', 'any')).toBe('reserved a table on Friday, 5 May 2023 at 8 pm');
    expect(written('went to a parade last week')).toBe('went to a parade in the week before 8 May 2023');
    expect(written('graduated two weeks ago')).toBe('graduated two weeks before 8 May 2023');
    expect(written('painted it last year')).toBe('painted it in 2022');
    expect(written('going camping next month', 'any')).toBe('going camping in June 2023');
    expect(written('flying out tomorrow', 'any')).toBe('flying out on 9 May 2023');
  });

  it('leaves out its own "on" or "in" after a preposition of the text ("by Friday", "moved in last month")', () => {
    expect(written('she wants the report by Wednesday', 'any')).toBe('she wants the report by Wednesday, 10 May 2023');
    expect(written('done by next week', 'any')).toBe('done by the week after 8 May 2023');
    expect(written('I moved in last month')).toBe('I moved in April 2023');
    expect(written('stayed there until yesterday')).toBe('stayed there until 7 May 2023');
    // Without a preposition before it, the phrase keeps its own.
    expect(written('went hiking yesterday')).toBe('went hiking on 7 May 2023');
  });

  it('moves a past-tense weekday back a week and leaves absolute dates as written', () => {
    const [friday] = resolveTimes('I went there on Friday', ref, 'past');
    expect(friday?.date.toISOString().slice(0, 10)).toBe('2023-05-05');
    expect(written('moved to Hamburg on 3 May 2021')).toBe('moved to Hamburg on 3 May 2021');
    expect(resolveTimes('I may go', ref, 'past')).toEqual([]); // "may" the verb is no month
  });

  it('leaves a weekday that recurs as written: "every Monday", "thursday nights" name no one day', () => {
    expect(written('I do a pottery class thursday nights', 'any')).toBe('I do a pottery class thursday nights');
    expect(written('I run every Monday', 'any')).toBe('I run every Monday');
    expect(written('we meet each Friday at 9', 'any')).toBe('we meet each Friday at 9');
    expect(written('I have yoga on tuesday evenings', 'any')).toBe('I have yoga on tuesday evenings');
    // One evening is a day.
    expect(written('on Friday night we went out')).toBe('on Friday, 5 May 2023 we went out');
  });
});
