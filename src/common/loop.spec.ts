import { PollingLoop } from './loop';

/** A step that blocks each call until `release()`, counting calls. */
function gatedStep(): { step: () => Promise<boolean>; calls: () => number; release: () => void } {
  let calls = 0;
  let open: (() => void) | undefined;
  return {
    step: () => {
      calls += 1;
      return new Promise<boolean>((resolve) => (open = () => resolve(false)));
    },
    calls: () => calls,
    release: () => open?.(),
  };
}

describe('PollingLoop', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('steps again at once after a wake() that arrived while a step was running (no poll interval passes)', async () => {
    const gate = gatedStep();
    const loop = new PollingLoop(gate.step, 60_000, () => undefined);
    loop.start();
    expect(gate.calls()).toBe(1);
    loop.wake(); // e.g. an ingest NOTIFY while the projector's batch runs
    gate.release();
    await jest.advanceTimersByTimeAsync(0);
    expect(gate.calls()).toBe(2);
    const stopped = loop.stop();
    gate.release();
    await stopped;
  });

  it('waits for the poll interval or a wake() when idle', async () => {
    const gate = gatedStep();
    const loop = new PollingLoop(gate.step, 60_000, () => undefined);
    loop.start();
    gate.release();
    await jest.advanceTimersByTimeAsync(59_000);
    expect(gate.calls()).toBe(1);
    loop.wake();
    await jest.advanceTimersByTimeAsync(0);
    expect(gate.calls()).toBe(2);
    gate.release();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(gate.calls()).toBe(3);
    const stopped = loop.stop();
    gate.release();
    await stopped;
  });
});
