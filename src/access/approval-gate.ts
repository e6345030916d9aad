import { ApprovalGate, ApprovalUse } from './approval.port';
import { Sql } from '../platform/postgres/sql';
import { ApprovalException, ApprovalExceptionCode } from './approval.exception';
import { paramsHash } from './approval-params';
import { ApprovalRepository } from './approval.repository';
import { ApprovalStatus } from './approval.types';

/**
 * The Postgres ApprovalGate: `consume` runs `access.execute_approval` (the executor proven by its
 * token secret and holding the action's capability; then one UPDATE whose WHERE holds status
 * APPROVED, expiry, action, namespace and the parameter hash, and the EXECUTED line) in the
 * caller's transaction. When it matches nothing, the request is read to say which condition
 * failed, the refusal is logged outside the caller's transaction (it survives the rollback), and
 * a coded ApprovalException is thrown.
 */
export class PostgresApprovalGate implements ApprovalGate {
  constructor(private readonly approvals: ApprovalRepository) {}

  async consume(sql: Sql, use: ApprovalUse): Promise<void> {
    const hash = paramsHash(use.params);
    if (await this.approvals.execute(sql, { id: use.approvalId, namespace: use.namespace, action: use.action, hash, secret: use.credential })) return;
    const request = await this.approvals.find(use.approvalId);
    const refusal = explainRefusal(request, use, hash);
    await this.approvals.logRefusal(use.approvalId, use.credential, `execution refused: ${refusal.message}`);
    throw refusal;
  }
}

function explainRefusal(request: Awaited<ReturnType<ApprovalRepository['find']>>, use: ApprovalUse, hash: string): ApprovalException {
  if (!request || request.namespace !== use.namespace) {
    return new ApprovalException(ApprovalExceptionCode.APPROVAL_NOT_FOUND, `approval ${use.approvalId} not found in namespace "${use.namespace}"`);
  }
  if (request.action !== use.action) {
    return new ApprovalException(ApprovalExceptionCode.PARAMS_MISMATCH, `approval ${use.approvalId} is for ${request.action}, not ${use.action}`);
  }
  if (request.paramsHash !== hash) {
    return new ApprovalException(
      ApprovalExceptionCode.PARAMS_MISMATCH,
      `approval ${use.approvalId} was granted for other parameters (${JSON.stringify(request.params)}): request an approval for these`,
    );
  }
  switch (request.status) {
    case ApprovalStatus.EXECUTED:
      return new ApprovalException(ApprovalExceptionCode.ALREADY_EXECUTED, `approval ${use.approvalId} was already executed: an approval is single-use`);
    case ApprovalStatus.EXPIRED:
      return new ApprovalException(
        ApprovalExceptionCode.EXPIRED,
        `approval ${use.approvalId} expired at ${request.expiresAt.toISOString()}: request a new one`,
      );
    default:
      return new ApprovalException(
        ApprovalExceptionCode.NOT_APPROVED,
        `approval ${use.approvalId} is ${request.status}, not APPROVED: a second principal must approve it first`,
      );
  }
}
