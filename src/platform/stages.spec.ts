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
});
