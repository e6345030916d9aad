/**
 * Runs `step` until stopped: again at once when it did work, else after `pollMs` or a `wake()`.
 * A `wake()` that arrives while a step runs is kept, so the loop steps again at once: the work it
 * announces may have been committed after the step looked (an ingest NOTIFY during a projector
 * batch waited a whole poll interval before). A throwing step is logged and retried after the poll delay.
 */
export class PollingLoop {
  private running = false;
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

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.done;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      let worked = false;
      this.woken = false;
      try {
        worked = await this.step();
      } catch (err) {
        this.log(String(err));
      }
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
