import { Stage } from '../../platform/stages';
import { ChainRepository } from './chain.repository';

/** How often the sealer looks for unsealed records when it found none (docs/operations.md "Tamper evidence"). */
export const CHAIN_SEAL_POLL_MS = 2000;
/** How often the sealer looks for unsealed records even when nothing ticked: the backstop for writes that bypass triggers. */
export const CHAIN_SWEEP_MS = 5 * 60_000;

export interface ChainSealerOptions {
  pollMs?: number;
  sweepMs?: number;
  /** The clock of the periodic sweep (tests). */
  now?: () => number;
}

/**
 * The background stage that extends every namespace's hash chain: each step seals one round (up to
 * 1000 records of each kind) per namespace that has unsealed records. Ingest never waits for it.
 *
 * An idle step is one statement: `probe()` reads `ops.chain_tick`, which every statement inserting
 * a chained record advances (migration 1764400001160), and the xmin of its snapshot. Only when the
 * tick moved, when the writers that may still have been open at the last listing have all ended,
 * when the last step sealed something, or every `sweepMs`, does the step list the namespaces with
 * unsealed records (one statement) and seal those alone.
 *
 * Pacing: a round that saw new ticks (writers active since the last listing) does not step again
 * at once; the next round comes after `pollMs`. So during bulk ingest the sealer seals about one
 * round per poll (1000 records of each kind per namespace every 2 s) and leaves the CPU to ingest;
 * when the ticks stop it seals round after round until nothing is left (a backlog of 10k events
 * takes a few seconds). Under sustained ingest above that rate the backlog grows until ingest pauses.
 *
 * Why no record is missed. A writer's transaction id is assigned by its insert, before its
 * statement-level trigger takes a tick, so before the probe that reads that tick; the listing
 * that follows the probe takes its snapshot after it. So every writer whose tick the probe saw is,
 * in the listing's snapshot, committed (its rows are listed), aborted, or in progress with an id
 * below the listing's `bound` (the listing's own transaction id, assigned after its snapshot).
 * The stage lists again at the first probe whose xmin reaches `bound`: those writers have all
 * ended before that probe, and the new listing (its snapshot later still) sees what they
 * committed; after that second listing no writer of a tick up to the listed one is left, so the
 * bound is cleared. Ticks the probe had not seen are above the listed tick and cause a listing of
 * their own. Nothing depends on clocks or on the rows' timestamps. The sweep is the backstop for
 * rows that reach the tables without the trigger (`session_replication_role = replica`, a restore).
 */
export function chainSealerStage(repo: ChainRepository, opts: ChainSealerOptions = {}): Stage {
  const sweepMs = opts.sweepMs ?? CHAIN_SWEEP_MS;
  const now = opts.now ?? Date.now;
  /** The tick the last listing covered; null: never listed (a new process lists at once). */
  let listedTick: string | null = null;
  /** Writers of ticks up to `listedTick` may still be open, all with ids below this; null: none can be. */
  let bound: bigint | null = null;
  /** The last listing sealed something or failed: list again (there may be more than one round's worth). */
  let again = true;
  let lastListAt = 0;

  return {
    name: 'chain-sealer',
    wakeOn: [],
    pollMs: opts.pollMs ?? CHAIN_SEAL_POLL_MS,
    async step() {
      const { tick, xmin } = await repo.probe();
      const ticked = tick !== listedTick;
      const settled = bound !== null && xmin >= bound;
      if (!ticked && !settled && !again && now() - lastListAt < sweepMs) return false;
      const listedAt = now();
      const listing = await repo.unsealedNamespaces();
      // A new tick: its writers may be open until `listing.bound`. Settled (same tick): every writer of a
      // tick up to `listedTick` ended before this probe, so this listing saw them all.
      if (ticked) bound = listing.bound;
      else if (settled) bound = null;
      listedTick = tick;
      lastListAt = listedAt;
      again = false;
      let sealed = 0;
      let failure: unknown;
      // One namespace's failure (logged by the runner, retried next step) does not hold up the others.
      for (const namespace of listing.namespaces) {
        try {
          sealed += await repo.seal(namespace);
        } catch (err) {
          failure ??= new Error(`sealing namespace ${namespace}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      again = sealed > 0 || failure !== undefined;
      if (failure) throw failure;
      // Paced while writers are busy: a round that found new ticks (records written since the last
      // listing) is followed by a pause of `pollMs`, not by the next round at once. During bulk
      // ingest the sealer then takes one round (up to 1000 records of each kind per namespace) per
      // poll instead of competing for the CPU without a break (35-45 % of service ingest on 2
      // cores, bench/results/ingest-s15-*.json); once the ticks stop, `again` lists at the next
      // step and rounds follow one another until the backlog is sealed.
      return sealed > 0 && !ticked;
    },
  };
}
