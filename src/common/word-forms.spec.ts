import { wordKey, wordKeys } from './word-forms';

describe('word forms', () => {
  it('gives inflections and near derivations one key', () => {
    const same = (...ws: string[]) => expect(new Set(ws.map(wordKey)).size).toBe(1);
    same('allergies', 'allergic', 'allergy', 'Allergies');
    same('moved', 'moving', 'moves', 'move');
    same('coffee', 'coffees');
    same('drinks', 'drinking', 'drink');
    same('appointment', 'appointments');
    same('studies', 'study', 'studied');
  });

  it('keeps different words apart', () => {
    expect(wordKey('movie')).not.toBe(wordKey('move'));
    expect(wordKey('dentist')).not.toBe(wordKey('dinner'));
    expect(wordKey('tea')).not.toBe(wordKey('team'));
  });

  it('keys a text without its stop words and single letters, numbers as written', () => {
    expect(wordKeys("I'm allergic to peanuts, 2 of them!")).toEqual(['allerg', 'peanut', '2']);
    expect(wordKeys('Which food allergies does the user have?')).toEqual(['food', 'allerg', 'doe', 'user']);
  });
});

describe('wordKey remembers keys without changing them', () => {
  it('gives a word the same key when asked again, in any case, and after the memory starts again', () => {
    const first = ['allergies', 'Moving', 'coffees', '2024', 'ox'].map(wordKey);
    for (let i = 0; i < 60_000; i++) wordKey(`zq${i.toString(36)}`);
    expect(['ALLERGIES', 'moving', 'Coffees', '2024', 'OX'].map(wordKey)).toEqual(first);
    expect(first).toEqual(['allerg', 'move', 'coffe', '2024', 'ox']);
  });
});
