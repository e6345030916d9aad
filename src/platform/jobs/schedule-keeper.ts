/** How often a worker re-checks which namespaces need a schedule. */
export const SCHEDULE_CHECK_MS = 60_000;

/**
 * Wraps `ensure` (which creates the schedules a worker is responsible for) so that calling the
 * result runs it at most once per `checkMs`; an interval of 0 seconds (the feature is off) makes
 * it do nothing. A failed check is retried at the next call, not after a full interval.
 */
export function scheduleKeeper(
  everySeconds: number,
  ensure: () => Promise<void>,
  checkMs: number = SCHEDULE_CHECK_MS,
  now: () => number = Date.now,
): () => Promise<void> {
  let last = Number.NEGATIVE_INFINITY;
  return async () => {
    if (everySeconds <= 0 || now() - last < checkMs) return;
    await ensure();
    last = now();
  };
}
