import { LoopStatus, PollingLoop } from '../common/loop';
import { ShutdownStep } from '../common/shutdown';

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
  private wasStarted = false;

  constructor(private readonly log: (msg: string) => void) {}

  register(stage: Stage): StageHandle {
    if (this.stages.has(stage.name)) throw new Error(`a stage named ${stage.name} is registered already`);
    const loop = new PollingLoop(() => stage.step(), stage.pollMs, this.log);
    this.stages.set(stage.name, { stage, loop });
    return loop;
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
    for (const { stage, loop } of this.stages.values()) {
      if (stage.startWhen) void stage.startWhen.then((ok) => ok && !this.stopped && loop.start());
      else loop.start();
    }
  }

  /**
   * Stops the stages one at a time, the last registered first, each waiting for its step in
   * progress. As shutdown steps, so a slow stop says which stage it waits on.
   */
  stopSteps(): ShutdownStep[] {
    return [...this.stages.values()].reverse().map(({ stage, loop }) => ({
      what: `${stage.name} loop`,
      run: () => {
        this.stopped = true;
        return loop.stop();
      },
    }));
  }

  async stop(): Promise<void> {
    for (const step of this.stopSteps()) await step.run();
  }
}
