import { AppLogger } from './logger';

/** One thing a stop waits for, named so the log says what a slow stop is waiting on. */
export interface ShutdownStep {
  readonly what: string;
  run(): Promise<void>;
}

/**
 * Runs the steps in order, logging each before it starts ("waiting for …") and how long it took;
 * a failing step is logged and the rest still run.
 */
export async function runShutdown(steps: readonly ShutdownStep[], log: Pick<AppLogger, 'info' | 'error'>): Promise<void> {
  const t0 = Date.now();
  for (const step of steps) {
    const t = Date.now();
    log.info({ step: step.what }, `shutdown: waiting for ${step.what}`);
    try {
      await step.run();
      log.info({ step: step.what, ms: Date.now() - t }, `shutdown: ${step.what} stopped`);
    } catch (err) {
      log.error({ err, step: step.what, ms: Date.now() - t }, `shutdown: stopping ${step.what} failed`);
    }
  }
  log.info({ ms: Date.now() - t0 }, 'shutdown: done');
}
