import { ApprovalException, ApprovalExceptionCode } from '../access/approval.exception';
import { ApprovalRepository } from '../access/approval.repository';
import { AccessException, AccessExceptionCode } from '../access/access.exception';
import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { requireUuid } from '../common/input';
import { ErasureRepository, ErasureResult } from './erasure.repository';
import { EventRepository } from './event.repository';
import { BronzeEvent } from './event.types';

/**
 * `destroyEvent`: the one exception to Bronze immutability (invariant 1), behind an approved
 * DESTROY_EVENT (invariant 7). The caller needs "admin" on the event's namespace; the database
 * function checks the approval and performs the erasure (docs/approvals.md).
 */
export class ErasureService {
  constructor(
    private readonly events: EventRepository,
    private readonly erasures: ErasureRepository,
    private readonly approvals: ApprovalRepository,
  ) {}

  async destroyEvent(auth: AuthContext, eventId: string, approvalId: string): Promise<{ event: BronzeEvent; erasure: ErasureResult }> {
    const principal = auth.requirePrincipal();
    requireUuid(eventId, 'eventId');
    requireUuid(approvalId, 'approvalId');
    const actor = { principalId: principal.principalId, name: principal.name };
    const [event] = await this.events.findByIds([eventId]);
    // An event outside the caller's namespaces does not exist for them.
    if (!event || !(auth.can(Capability.READ, event.namespace) || auth.can(Capability.APPROVE, event.namespace))) {
      await this.approvals.logRefusal(approvalId, actor, `destroyEvent refused: event ${eventId} not found in the caller's namespaces`);
      throw new ApprovalException(ApprovalExceptionCode.EVENT_NOT_FOUND, `event ${eventId} not found in your namespaces`);
    }
    if (!auth.can(Capability.ADMIN, event.namespace)) {
      const message = `token "${principal.name}" needs "admin" on namespace "${event.namespace}" to execute destroyEvent`;
      await this.approvals.logRefusal(approvalId, actor, `destroyEvent refused: ${message}`);
      throw new AccessException(AccessExceptionCode.FORBIDDEN, message);
    }
    let erasure: ErasureResult;
    try {
      erasure = await this.erasures.destroy({
        eventId,
        approvalId,
        namespace: event.namespace,
        executorId: principal.principalId,
        executorName: principal.name,
      });
    } catch (err) {
      if (err instanceof ApprovalException) await this.approvals.logRefusal(approvalId, actor, `destroyEvent refused: ${err.message}`);
      throw err;
    }
    const [after] = await this.events.findByIds([eventId]);
    return { event: after as BronzeEvent, erasure };
  }
}
