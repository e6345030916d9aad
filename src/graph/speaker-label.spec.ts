import { splitSpeakerLabel } from './speaker-label';

describe('splitSpeakerLabel: who speaks, apart from what the turn says', () => {
  it("takes the actor's label out of the text, in any case", () => {
    expect(splitSpeakerLabel('Caroline: I went to the support group', 'Caroline')).toEqual({ speaker: 'Caroline', body: 'I went to the support group' });
    expect(splitSpeakerLabel('jd_88: lol', 'JD_88')).toEqual({ speaker: 'jd_88', body: 'lol' });
  });

  it('without an actor, takes out a label that looks like a name or a handle', () => {
    expect(splitSpeakerLabel('kat.w: did it work for u?', null)).toEqual({ speaker: 'kat.w', body: 'did it work for u?' });
    expect(splitSpeakerLabel('Mary Ann Lee: ok', null)).toEqual({ speaker: 'Mary Ann Lee', body: 'ok' });
  });

  it('keeps a heading, a phrase, a URL and a bare label as text', () => {
    // A label that is not the actor is a heading of what the actor wrote.
    expect(splitSpeakerLabel('Note: buy milk', 'Sam')).toEqual({ speaker: 'Sam', body: 'Note: buy milk' });
    expect(splitSpeakerLabel('My answer: yes', null)).toEqual({ speaker: null, body: 'My answer: yes' });
    expect(splitSpeakerLabel('The reason is simple: rent', null)).toEqual({ speaker: null, body: 'The reason is simple: rent' });
    expect(splitSpeakerLabel('http://example.com is down', null)).toEqual({ speaker: null, body: 'http://example.com is down' });
    expect(splitSpeakerLabel('Sam:', 'Sam')).toEqual({ speaker: 'Sam', body: 'Sam:' });
    expect(splitSpeakerLabel('I parked on level 3', 'Sam')).toEqual({ speaker: 'Sam', body: 'I parked on level 3' });
  });
});
