import { JobHandler } from '../../platform/jobs/job-handler';
import { JobPayloads } from '../../platform/jobs/job-kinds';
import { namespaceHash } from '../../platform/telemetry/tracing';
import { ChainRepository } from './chain.repository';
import { chainVerifications, ChainVerificationRepository } from './chain-verify.repository';
import { verifyNamespace } from './verify-chain';

/** Where the job reports a broken chain (pino's warn and error; fields first). */
export interface ChainVerifyLog {
  warn(fields: Record<string, unknown>, msg: string): void;
  error(fields: Record<string, unknown>, msg: string): void;
}

/**
 * `verify_chain` jobs (docs/operations.md "Scheduled verify"): recompute one namespace's hash
 * chain from the database as `medallion verify --namespace` does, store the result, count it, and
 * log a break (ids and the reason the verifier gives, which names no content). A failure to
 * verify is stored as `error` and counted, the job itself succeeding: the next run tries again.
 */
export function chainVerifyJob(
  chain: ChainRepository,
  verifications: ChainVerificationRepository,
  log?: ChainVerifyLog,
): JobHandler<JobPayloads, 'verify_chain'> {
  return {
    async run(job) {
      if (job.namespace === null) return { kind: 'failed', error: 'verify_chain needs a namespace' };
      const startedAt = new Date();
      try {
        const result = await verifyNamespace(chain, job.namespace);
        await verifications.record(job.namespace, job.id, startedAt, { result });
        chainVerifications.labels(result.ok ? 'intact' : 'broken').inc();
        if (!result.ok)
          log?.warn(
            { audit: 'chain_verification', namespaceHash: namespaceHash(job.namespace), jobId: job.id, broken: result.broken },
            'scheduled verify: hash chain BROKEN',
          );
        return {
          kind: 'success',
          message: result.ok ? `chain intact, ${result.links} link(s)` : `chain BROKEN at position ${result.broken?.position}: ${result.broken?.reason}`,
          progressDone: result.links,
        };
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        await verifications.record(job.namespace, job.id, startedAt, { error });
        chainVerifications.labels('error').inc();
        log?.error({ audit: 'chain_verification', namespaceHash: namespaceHash(job.namespace), jobId: job.id, error }, 'scheduled verify failed');
        return { kind: 'success', message: `verify failed: ${error}` };
      }
    },
  };
}
