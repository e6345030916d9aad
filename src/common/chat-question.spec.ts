import { asks, withoutVocative } from './chat-question';

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
