/** How `MemoryClient.ingest` retries transient failures. */
export interface RetryOptions {
  /** Attempts after the first one (0 turns retrying off). Default 5. */
  retries: number;
  /** The delay before the first retry; each next one doubles. Default 250 ms. */
  initialDelayMs: number;
  /** The longest delay between two attempts. Default 8000 ms. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: Readonly<RetryOptions> = Object.freeze({ retries: 5, initialDelayMs: 250, maxDelayMs: 8000 });

/**
 * The delay before retry number `attempt` (1-based): exponential, capped, with jitter (between half
 * and all of it), so many clients that failed together do not retry together.
 */
export function backoffDelay(attempt: number, opts: RetryOptions, random: () => number = Math.random): number {
  const ceiling = Math.min(opts.maxDelayMs, opts.initialDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `attempt` until it succeeds, `isRetryable` says no, or the retries are spent. A server's
 * `Retry-After` (seconds, given by `retryAfterMs`) is honoured when longer than the backoff.
 */
export async function withRetry<T>(
  attempt: () => Promise<T>,
  opts: RetryOptions,
  isRetryable: (err: unknown) => boolean,
  retryAfterMs: (err: unknown) => number | undefined = () => undefined,
): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (n > opts.retries || !isRetryable(err)) throw err;
      await sleep(Math.max(backoffDelay(n, opts), Math.min(retryAfterMs(err) ?? 0, opts.maxDelayMs)));
    }
  }
}
