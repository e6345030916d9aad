/**
 * Background work yields to readers (issue 45, docs/operations.md "Searches while the memory
 * works"). On a small machine derivation, projection and the stores' writes take every core, and a
 * search waits for the CPU in each of its statements: bench/search-under-load measured each
 * channel 2-3 times slower while an import was derived, the API's own code unchanged. So while
 * searches are being served, each background stage pauses after a step that did work for a share
 * of that step's time (`BACKGROUND_YIELD`, default 1: half the rate at most), never longer than
 * `MAX_PAUSE_MS`: derivation goes on, at half its rate, and at full speed again a second after the
 * last search.
 *
 * The searches may be served by another process than the one deriving (`serve` and its worker
 * process, or `serve --no-worker` beside `worker`), so the API says "reading" with a NOTIFY on
 * `medallion_reads` at most every `NOTE_EVERY_MS`, and every process that runs stages listens.
 */

/** How often a process serving searches says so (one `pg_notify` per this many ms at most). */
export const NOTE_EVERY_MS = 250;
/** Searches count as going on for this long after the last note heard. */
export const READING_FOR_MS = 1_000;
/** The longest pause after one step (a stop ends a pause at once: platform/stages.ts). */
export const MAX_PAUSE_MS = 2_000;

/** The API's side: called at each search; sends a note when the last one is older than `NOTE_EVERY_MS`. */
export class ReadNotes {
  private last = -Infinity;

  constructor(
    private readonly send: () => Promise<void>,
    private readonly warn: (msg: string) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  reading(): void {
    const t = this.now();
    if (t - this.last < NOTE_EVERY_MS) return;
    this.last = t;
    // A lost note costs only a pause not taken: never a search's error, never awaited by it.
    this.send().catch((err: unknown) => this.warn(`reads note: ${err instanceof Error ? err.message : String(err)}`));
  }
}

/** The stages' side: what was heard, and how long a stage pauses after a step. */
export class Foreground {
  private lastHeard = -Infinity;

  constructor(
    /** Pause = this share of the step's time (0: never pause). */
    private readonly share: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A note arrived (any process's search). */
  heard(): void {
    this.lastHeard = this.now();
  }

  /** Whether searches were served within `READING_FOR_MS`. */
  get reading(): boolean {
    return this.now() - this.lastHeard <= READING_FOR_MS;
  }

  /** How long to pause after a step that did work and took `stepMs`: 0 when no one searches. */
  pauseAfter(stepMs: number): number {
    if (this.share <= 0 || !this.reading) return 0;
    return Math.min(MAX_PAUSE_MS, Math.max(0, stepMs) * this.share);
  }
}
