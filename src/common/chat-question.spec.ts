import { asks, asksYesOrNo, withoutVocative } from './chat-question';

describe('asks: a chat turn that asks, with or without its question mark', () => {
  it('reads questions, also without "?" and after the name of whom they address', () => {
    for (const q of [
      'Does it work for you?',
      'did u get the tent',
      'where r u guys going tmrw',
      'Marco did u ever get the bike',
      'Jamie how did the driving test go',
      'Kat, how was the panel',
      'Kat!! how did it go',
      "what's the wifi password",
    ])
      expect(asks(q)).toBe(true);
  });

  it('reads statements as statements, also those that open with a question word or an auxiliary', () => {
    for (const s of [
      'When you book flights for me, always pick an aisle seat',
      'Kat did the dishes',
      'I did get the tent',
      'How nice of you to bring the lantern',
      'we are going to Porto tmrw',
    ])
      expect(asks(s)).toBe(false);
  });

  it('takes the name a turn addresses off its front, and nothing else', () => {
    expect(withoutVocative('Kat!! how did it go')).toBe('how did it go');
    expect(withoutVocative('Marco did u ever get the bike')).toBe('did u ever get the bike');
    expect(withoutVocative('I did get the tent')).toBe('I did get the tent');
    expect(withoutVocative('Porto is lovely')).toBe('Porto is lovely');
  });
});

describe('asksYesOrNo: a question a denial answers as well as an affirmation', () => {
  it('reads questions that open with an auxiliary, also after a name', () => {
    for (const q of ['Does the user like country music?', 'is Kat coming', 'Marco, did u get the bike', "Can't the user eat nuts?"])
      expect(asksYesOrNo(q)).toBe(true);
  });

  it('leaves questions that ask for a thing, a place or a time', () => {
    for (const q of ['What music does the user like?', 'Which editor does the user use?', 'where r u', 'When did Kat move?'])
      expect(asksYesOrNo(q)).toBe(false);
  });
});
