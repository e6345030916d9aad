import { Stage } from '../../platform/stages';
import { ChainRepository } from './chain.repository';

/** How often the sealer looks for unsealed records when it found none (docs/operations-export.md "Tamper evidence"). */
export const CHAIN_SEAL_POLL_MS = 2000;

/**
 * The background stage that extends every namespace's hash chain: each step seals one round (up to
 * 1000 records of each kind) per namespace that has unsealed records. Ingest never waits for it.
 */
export function chainSealerStage(repo: ChainRepository, pollMs = CHAIN_SEAL_POLL_MS): Stage {
  return {
    name: 'chain-sealer',
    wakeOn: [],
    pollMs,
    async step() {
      let sealed = 0;
      let failure: unknown;
      // One namespace's failure (logged by the runner, retried next step) does not hold up the others.
      for (const namespace of await repo.namespaces()) {
        try {
          sealed += await repo.seal(namespace);
        } catch (err) {
          failure ??= new Error(`sealing namespace ${namespace}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      if (failure) throw failure;
      return sealed > 0;
    },
  };
}
