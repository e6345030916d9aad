import { LoopStatus, PollingLoop } from '../common/loop';
import { ShutdownStep } from '../common/shutdown';
import { Foreground } from './foreground';

/**
 * One kind of background work: a step that does a bounded amount of work and says whether it did
 * any. Derivation, the projectors and the job kernel are stages; they hand work to one another
 * through the database (the derivation queue, `ops.outbox`, `ops.jobs`), never in memory.
 */
export interface Stage {
  /** Names the stage in logs and to tests (`app.stages.get('projector')`); its stop is logged as "<name> loop". */
  readonly name: string;
  /** NOTIFY channels (platform/pubsub/topics.ts `CHANNELS`) whose notifications wake it at once. */
  readonly wakeOn: readonly string[];
  /** How long it waits after a step that did nothing when no notification comes (a fallback only). */
  readonly pollMs: number;
  /** One bounded round of work; true when it did some (then it steps again at once). A throw is logged and retried after `pollMs`. */
  step(): Promise<boolean>;
  /** The stage starts once this resolves true, and never when it resolves false; unset: with the runner. */
  readonly startWhen?: Promise<boolean>;
}

/** A registered stage's controls (tests quiet or pause a stage; the runner drives them otherwise). */
export interface StageHandle {
  start(): void;
  wake(): void;
  stop(): Promise<void>;
  /** Running or not, its last step and its last error (/health). */
  status(): LoopStatus;
}

/**
 * Runs every registered stage, each in its own `PollingLoop` (stepping again at once after work,
 * else after a wake or its poll), so no layer runs a loop of its own: a layer hands the
 * composition root a `Stage`, and the runner starts, wakes and stops it.
 */
export class StageRunner {
  private readonly stages = new Map<string, { stage: Stage; loop: PollingLoop }>();
  private stopped = false;
  /** Pauses in progress (readers first), ended by a stop. */
  private readonly pauses = new Set<() => void>();
  private wasStarted = false;

  constructor(
    private readonly log: (msg: string) => void,
    /** Readers first (platform/foreground.ts): after a step that did work, a stage pauses as long as this says. */
    private readonly yielding?: {
      readonly foreground: Foreground;
      readonly paused: (stage: string, ms: number) => void;
      readonly sleep?: (ms: number) => Promise<void>;
      readonly now?: () => number;
    },
  ) {}

  register(stage: Stage): StageHandle {
    if (this.stages.has(stage.name)) throw new Error(`a stage named ${stage.name} is registered already`);
    const loop = new PollingLoop(() => this.stepOf(stage), stage.pollMs, this.log);
    this.stages.set(stage.name, { stage, loop });
    return loop;
  }

  /** One step of `stage`, then the pause readers are owed when it did work. */
  private async stepOf(stage: Stage): Promise<boolean> {
    const y = this.yielding;
    if (!y) return stage.step();
    const now = y.now ?? (() => performance.now());
    const t0 = now();
    const worked = await stage.step();
    const pause = worked ? y.foreground.pauseAfter(now() - t0) : 0;
    if (pause > 0 && !this.stopped) {
      const paused = now();
      await (y.sleep ?? ((ms) => this.pauseFor(ms)))(pause);
      y.paused(stage.name, Math.min(pause, now() - paused));
    }
    return worked;
  }

  /** Resolves after `ms`, or at once when the runner stops (a stop never waits out a pause). */
  private pauseFor(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.pauses.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.pauses.add(done);
    });
  }

  /** The stage of that name, if registered. */
  get(name: string): StageHandle | undefined {
    return this.stages.get(name)?.loop;
  }

  get names(): string[] {
    return [...this.stages.keys()];
  }

  /** Whether `start()` ran: a process without workers registers stages it never starts. */
  get started(): boolean {
    return this.wasStarted;
  }

  /** Each registered stage's status, by name. */
  status(): Record<string, LoopStatus> {
    return Object.fromEntries([...this.stages].map(([name, { loop }]) => [name, loop.status()]));
  }

  /** Wakes every stage that listens on `channel`. */
  wake(channel: string): void {
    for (const { stage, loop } of this.stages.values()) if (stage.wakeOn.includes(channel)) loop.wake();
  }

  /** Starts every stage (a stage with `startWhen` once it resolves true). */
  start(): void {
    this.wasStarted = true;
    for (const entry of this.stages.values()) this.startOne(entry);
  }

  /**
   * Starts the named stages only, where they are registered (an API process without workers runs
   * its own few); `started` stays false, so /health does not report this process as a worker.
   * Their stops are returned as shutdown steps.
   */
  startOnly(names: readonly string[]): ShutdownStep[] {
    const entries = names.flatMap((n) => {
      const e = this.stages.get(n);
      return e ? [e] : [];
    });
    for (const e of entries) this.startOne(e);
    return entries.map((e) => this.stopStep(e));
  }

  private startOne({ stage, loop }: { stage: Stage; loop: PollingLoop }): void {
    if (stage.startWhen) void stage.startWhen.then((ok) => ok && !this.stopped && loop.start());
    else loop.start();
  }

  /**
   * Stops the stages one at a time, the last registered first, each waiting for its step in
   * progress. As shutdown steps, so a slow stop says which stage it waits on.
   */
  stopSteps(): ShutdownStep[] {
    return [...this.stages.values()].reverse().map((e) => this.stopStep(e));
  }

  /** A stage's stop: no later pause or start, the pauses in progress ended, then its step in progress awaited. */
  private stopStep({ stage, loop }: { stage: Stage; loop: PollingLoop }): ShutdownStep {
    return {
      what: `${stage.name} loop`,
      run: () => {
        this.stopped = true;
        for (const end of [...this.pauses]) end();
        return loop.stop();
      },
    };
  }

  async stop(): Promise<void> {
    for (const step of this.stopSteps()) await step.run();
  }
}
