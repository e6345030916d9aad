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
      for (const namespace of await repo.namespaces()) sealed += await repo.seal(namespace);
      return sealed > 0;
    },
  };
}
