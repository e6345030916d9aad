import { stateOf } from './states';

describe('states', () => {
  it('reads the state a statement gives its own subject, by kind', () => {
    expect(stateOf('The user is vegetarian', 'the user')).toEqual({ kind: 'diet', state: 'vegetarian' });
    expect(stateOf('The user went fully vegan', 'the user')).toEqual({ kind: 'diet', state: 'vegan' });
    expect(stateOf('Sam is now married', 'Sam')).toEqual({ kind: 'relationship', state: 'married' });
    expect(stateOf('Priya has been retired since May', 'Priya')).toEqual({ kind: 'work', state: 'retired' });
  });

  it('reads no state of someone else, of the past, or of a word that is no state', () => {
    expect(stateOf("The user's sister is vegan", 'the user')).toBeNull();
    expect(stateOf('The user was married', 'the user')).toBeNull();
    expect(stateOf('The user is tired', 'the user')).toBeNull();
    expect(stateOf('The user is vegetarian', null)).toBeNull();
  });
});
