import { AppLogger } from './logger';

/** One thing a stop waits for, named so the log says what a slow stop is waiting on. */
export interface ShutdownStep {
  readonly what: string;
  run(): Promise<void>;
}

/**
 * Runs the steps in order, logging each before it starts ("waiting for …") and how long it took;
 * a failing step is logged and the rest still run. A group (an array) is steps that do not depend
 * on one another: they run at the same time, each logged on its own, and the next step waits for all.
 */
export async function runShutdown(steps: ReadonlyArray<ShutdownStep | readonly ShutdownStep[]>, log: Pick<AppLogger, 'info' | 'error'>): Promise<void> {
  const t0 = Date.now();
  for (const step of steps) {
    if (isGroup(step)) await Promise.all(step.map((s) => runStep(s, log)));
    else await runStep(step, log);
  }
  log.info({ ms: Date.now() - t0 }, 'shutdown: done');
}

function isGroup(step: ShutdownStep | readonly ShutdownStep[]): step is readonly ShutdownStep[] {
  return Array.isArray(step);
}

async function runStep(step: ShutdownStep, log: Pick<AppLogger, 'info' | 'error'>): Promise<void> {
  const t = Date.now();
  log.info({ step: step.what }, `shutdown: waiting for ${step.what}`);
  try {
    await step.run();
    log.info({ step: step.what, ms: Date.now() - t }, `shutdown: ${step.what} stopped`);
  } catch (err) {
    log.error({ err, step: step.what, ms: Date.now() - t }, `shutdown: stopping ${step.what} failed`);
  }
}
