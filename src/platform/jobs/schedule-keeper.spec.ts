import { scheduleKeeper } from './schedule-keeper';

describe('scheduleKeeper', () => {
  it('runs at once, then at most once per interval, and retries a failed check at the next call', async () => {
    let t = 0;
    let calls = 0;
    let fail = false;
    const keep = scheduleKeeper(
      900,
      async () => {
        calls += 1;
        if (fail) throw new Error('database away');
      },
      60_000,
      () => t,
    );
    await keep();
    expect(calls).toBe(1);
    t = 59_999;
    await keep();
    expect(calls).toBe(1);
    t = 60_000;
    fail = true;
    await expect(keep()).rejects.toThrow('database away');
    t = 60_001;
    fail = false;
    await keep();
    expect(calls).toBe(3);
  });

  it('does nothing when the schedule interval is 0 (on demand only)', async () => {
    let calls = 0;
    const keep = scheduleKeeper(0, async () => {
      calls += 1;
    });
    await keep();
    expect(calls).toBe(0);
  });
});
