/**
 * Runs `step` until stopped: again at once when it did work, else after `pollMs` or a `wake()`.
 * A throwing step is logged and retried after the poll delay.
 */
export class PollingLoop {
  private running = false;
  private wakeUp: (() => void) | undefined;
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
      try {
        worked = await this.step();
      } catch (err) {
        this.log(String(err));
      }
      if (worked) continue;
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
