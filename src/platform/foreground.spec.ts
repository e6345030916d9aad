import { Foreground, MAX_PAUSE_MS, NOTE_EVERY_MS, READING_FOR_MS, ReadNotes } from './foreground';

describe('ReadNotes', () => {
  it('sends one note per NOTE_EVERY_MS however many searches, and a failed send is only a warning', async () => {
    let now = 0;
    let sent = 0;
    const warnings: string[] = [];
    const notes = new ReadNotes(
      () => {
        sent += 1;
        return sent === 3 ? Promise.reject(new Error('connection lost')) : Promise.resolve();
      },
      (m) => warnings.push(m),
      () => now,
    );
    for (let i = 0; i < 10; i++) notes.reading();
    expect(sent).toBe(1);
    now += NOTE_EVERY_MS - 1;
    notes.reading();
    expect(sent).toBe(1);
    now += 1;
    notes.reading();
    now += NOTE_EVERY_MS;
    notes.reading();
    await Promise.resolve();
    expect(sent).toBe(3);
    expect(warnings).toEqual(['reads note: connection lost']);
  });
});

describe('Foreground', () => {
  it('asks for a pause of its share of the step while a note is fresh, at most MAX_PAUSE_MS, none with share 0', () => {
    let now = 10_000;
    const half = new Foreground(0.5, () => now);
    const off = new Foreground(0, () => now);
    expect(half.pauseAfter(100)).toBe(0);
    half.heard();
    off.heard();
    expect(half.reading).toBe(true);
    expect(half.pauseAfter(100)).toBe(50);
    expect(half.pauseAfter(10_000)).toBe(MAX_PAUSE_MS);
    expect(off.pauseAfter(100)).toBe(0);
    now += READING_FOR_MS;
    expect(half.pauseAfter(100)).toBe(50);
    now += 1;
    expect(half.reading).toBe(false);
    expect(half.pauseAfter(100)).toBe(0);
  });
});
