import { malformedStatement } from './statement-shape';

describe('malformedStatement', () => {
  it('reads an object that opens a clause as malformed', () => {
    expect(malformedStatement('The user is allergic to so be careful with recipes', 'so be careful with recipes')).toMatch(/opens a clause/);
    expect(malformedStatement('Maya switched to which is tiring', 'which is tiring')).toMatch(/opens a clause/);
    expect(malformedStatement('John had and the memories John and others have', 'and the memories John and others have')).toMatch(/opens a clause/);
  });

  it('reads a preposition followed by a connector as a cut phrase, also without an object value', () => {
    expect(malformedStatement('The user is allergic to so be careful with recipes', null)).toMatch(/preposition/);
    expect(malformedStatement('The user moved to because of work', null)).toMatch(/preposition/);
  });

  it('reads a statement ending on a conjunction, an article or a bare copula as cut', () => {
    expect(malformedStatement('The user added the version column and', 'the version column and')).toMatch(/conjunction or determiner/);
    expect(malformedStatement('The user booked a table at the', null)).toMatch(/conjunction or determiner/);
    expect(malformedStatement("Gina's favourite memory was", null)).toMatch(/auxiliary/);
  });

  it('leaves well-formed statements alone, clauses that end of their own accord and "so" as an amount included', () => {
    for (const [s, o] of [
      ['The user is allergic to peanuts', 'peanuts'],
      ['John had so much fun making them together', 'so much fun making them together'],
      ['Seeing the impact fills Maria with so much joy', null],
      ['These moments remind Maria of how important kindness and compassion are', null],
      ['Maria is here to help out however Maria can', null],
      ['Gina is trying to learn as much as Gina can', null],
      ['Maria loves spending time with the friends Maria has', null],
      ['John said it is important to make people feel noticed and listened to', null],
      ['John questioned if John was on the right track', 'if John was on the right track'],
      ['John said it is awesome how connecting with and helping others brings Maria joy', null],
      ['The user thinks so', null],
    ] as const)
      expect(malformedStatement(s, o)).toBeNull();
  });
});
