/**
 * Runs `step` until stopped: again at once when it did work, else after `pollMs` or a `wake()`.
 * A `wake()` that arrives while a step runs is kept, so the loop steps again at once: the work it
 * announces may have been committed after the step looked (an ingest NOTIFY during a projector
 * batch waited a whole poll interval before). A throwing step is logged and retried after the poll delay.
 */
/** What a loop has done so far: for /health (times as epoch milliseconds). */
export interface LoopStatus {
  readonly running: boolean;
  /** Steps ended, failed ones included. */
  readonly steps: number;
  /** When the last step ended (null: none has). */
  readonly lastStepAt: number | null;
  /** When a step now running began (null: the loop waits between steps). */
  readonly stepStartedAt: number | null;
  /** The last failed step: when, and its error's message. */
  readonly lastError: { readonly at: number; readonly message: string } | null;
  /** When the current run of failed steps began (null: the last step succeeded, or none ran). */
  readonly failingSince: number | null;
}

export class PollingLoop {
  private running = false;
  private steps = 0;
  private lastStepAt: number | null = null;
  private stepStartedAt: number | null = null;
  private lastError: { at: number; message: string } | null = null;
  private failingSince: number | null = null;
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private done: Promise<void> | undefined;

  constructor(
    private readonly step: () => Promise<boolean>,
    private readonly pollMs: number,
    private readonly log: (msg: string) => void,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.done = this.loop();
  }

  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  status(): LoopStatus {
    return {
      running: this.running,
      steps: this.steps,
      lastStepAt: this.lastStepAt,
      stepStartedAt: this.stepStartedAt,
      lastError: this.lastError,
      failingSince: this.failingSince,
    };
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.done;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      let worked = false;
      this.woken = false;
      this.stepStartedAt = Date.now();
      try {
        worked = await this.step();
        this.failingSince = null;
      } catch (err) {
        this.log(String(err));
        this.lastError = { at: Date.now(), message: (err instanceof Error ? err.message : String(err)).slice(0, 300) };
        this.failingSince ??= this.stepStartedAt;
      }
      this.steps++;
      this.lastStepAt = Date.now();
      this.stepStartedAt = null;
      if (worked || this.woken) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.pollMs);
        this.wakeUp = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }
}
