import { Foreground, MAX_PAUSE_MS, READING_FOR_MS } from './foreground';
import { Stage, StageRunner } from './stages';

/** A stage whose steps never find work, counting them. */
function idleStage(name: string, wakeOn: string[], extra: Partial<Stage> = {}): Stage & { calls: () => number } {
  let calls = 0;
  return {
    name,
    wakeOn,
    pollMs: 60_000,
    step: () => {
      calls += 1;
      return Promise.resolve(false);
    },
    calls: () => calls,
    ...extra,
  };
}

describe('StageRunner', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('wakes the stages that listen on a channel, and only those', async () => {
    const runner = new StageRunner(() => undefined);
    const projector = idleStage('projector', ['events', 'facts']);
    const jobs = idleStage('jobs', ['jobs']);
    runner.register(projector);
    runner.register(jobs);
    runner.start();
    await jest.advanceTimersByTimeAsync(0);
    expect([projector.calls(), jobs.calls()]).toEqual([1, 1]);
    runner.wake('facts');
    await jest.advanceTimersByTimeAsync(0);
    expect([projector.calls(), jobs.calls()]).toEqual([2, 1]);
    await runner.stop();
  });

  it('startOnly starts the named stages that are registered, honours startWhen, and returns their stops', async () => {
    const runner = new StageRunner(() => undefined);
    const usage = idleStage('usage', []);
    let ready: (ok: boolean) => void = () => undefined;
    const plans = idleStage('search-plans', [], { startWhen: new Promise<boolean>((r) => (ready = r)) });
    const projector = idleStage('projector', []);
    for (const s of [usage, plans, projector]) runner.register(s);
    const stops = runner.startOnly(['usage', 'search-plans', 'not-registered']);
    await jest.advanceTimersByTimeAsync(0);
    expect([usage.calls(), plans.calls(), projector.calls()]).toEqual([1, 0, 0]);
    ready(true);
    await jest.advanceTimersByTimeAsync(0);
    expect([usage.calls(), plans.calls(), projector.calls()]).toEqual([1, 1, 0]);
    expect(stops.map((s) => s.what)).toEqual(['usage loop', 'search-plans loop']);
    // Not a worker: /health does not report this process's stages as one.
    expect(runner.started).toBe(false);
    for (const s of stops) await s.run();
    expect(runner.status()['usage']?.running).toBe(false);
  });

  it('starts a stage with startWhen once it resolves true, never when it resolves false', async () => {
    const runner = new StageRunner(() => undefined);
    let ready: (ok: boolean) => void = () => undefined;
    const later = idleStage('projector', [], { startWhen: new Promise<boolean>((r) => (ready = r)) });
    const never = idleStage('other', [], { startWhen: Promise.resolve(false) });
    runner.register(later);
    runner.register(never);
    runner.start();
    await jest.advanceTimersByTimeAsync(0);
    expect([later.calls(), never.calls()]).toEqual([0, 0]);
    ready(true);
    await jest.advanceTimersByTimeAsync(0);
    expect([later.calls(), never.calls()]).toEqual([1, 0]);
    await runner.stop();
  });

  it('stops the last registered stage first, as named shutdown steps', () => {
    const runner = new StageRunner(() => undefined);
    for (const name of ['projector', 'derivation', 'jobs']) runner.register(idleStage(name, []));
    expect(runner.stopSteps().map((s) => s.what)).toEqual(['jobs loop', 'derivation loop', 'projector loop']);
    expect(() => runner.register(idleStage('jobs', []))).toThrow(/registered already/);
  });

  it('pauses a stage after a step that did work while searches are served, for its share of the step, and not otherwise', async () => {
    let now = 0;
    const foreground = new Foreground(1, () => now);
    const pauses: Array<[string, number]> = [];
    const slept: number[] = [];
    const runner = new StageRunner(() => undefined, {
      foreground,
      paused: (stage, ms) => pauses.push([stage, ms]),
      now: () => now,
      sleep: (ms) => {
        slept.push(ms);
        now += ms;
        return Promise.resolve();
      },
    });
    // Steps of 80 ms, then longer than MAX_PAUSE_MS, that did work; the third finds none, and the stage waits for a wake.
    const took = [80, MAX_PAUSE_MS + 500, 30];
    let calls = 0;
    let searching = true;
    runner.register({
      name: 'derivation',
      wakeOn: ['events'],
      pollMs: 60_000,
      step: () => {
        now += took[calls % 3] as number;
        if (searching) foreground.heard();
        calls += 1;
        return Promise.resolve(calls % 3 !== 0);
      },
    });
    foreground.heard();
    runner.start();
    await jest.advanceTimersByTimeAsync(0);
    // Heard at 0; 80 ms step → 80 ms pause, a longer one → MAX_PAUSE_MS, none after no work.
    expect(slept).toEqual([80, MAX_PAUSE_MS]);
    expect(pauses).toEqual([
      ['derivation', 80],
      ['derivation', MAX_PAUSE_MS],
    ]);
    // No search for longer than READING_FOR_MS: the same steps run back to back.
    searching = false;
    now += READING_FOR_MS + 1;
    runner.wake('events');
    await jest.advanceTimersByTimeAsync(0);
    expect(calls).toBe(6);
    expect(slept).toHaveLength(2);
    await runner.stop();
  });

  it('ends a pause at once when it stops', async () => {
    const foreground = new Foreground(1);
    const paused: number[] = [];
    const runner = new StageRunner(() => undefined, { foreground, paused: (_, ms) => paused.push(ms) });
    let steps = 0;
    runner.register({
      name: 'derivation',
      wakeOn: [],
      pollMs: 60_000,
      step: async () => {
        steps += 1;
        await new Promise((r) => setTimeout(r, MAX_PAUSE_MS * 10));
        foreground.heard();
        return true;
      },
    });
    runner.start();
    await jest.advanceTimersByTimeAsync(MAX_PAUSE_MS * 10);
    // The step took 10 × MAX_PAUSE_MS while a search was heard: the stage now pauses MAX_PAUSE_MS.
    expect(steps).toBe(1);
    let stopped = false;
    const stopping = runner.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(true);
    await stopping;
    expect(steps).toBe(1);
    expect(paused).toHaveLength(1);
    expect(paused[0]).toBeLessThan(MAX_PAUSE_MS);
  });
});
