import { AccessException, AccessExceptionCode } from '../../access/access.exception';
import { ApprovalGate } from '../approval.port';

/** The gate wired until approvals land: every use is refused, so another principal's overlay cannot be changed yet. */
export const unavailableApprovals: ApprovalGate = {
  async consume() {
    throw new AccessException(
      AccessExceptionCode.FORBIDDEN,
      'approvals are not available on this server yet: only the author of an overlay can revise or retract it',
    );
  },
};
