import { ApprovalException, ApprovalExceptionCode } from '../access/approval.exception';
import { ApprovalRepository } from '../access/approval.repository';
import { AccessException, AccessExceptionCode } from '../access/access.exception';
import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { requireUuid } from '../common/input';
import { AppException } from '../common/app-exception';
import { AuditLog, countOnlyAudit } from '../platform/telemetry/audit';
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
    /** Logs and counts each erasure and each refused attempt (platform/telemetry/audit.ts). */
    private readonly audit: AuditLog = countOnlyAudit,
  ) {}

  async destroyEvent(auth: AuthContext, eventId: string, approvalId: string): Promise<{ event: BronzeEvent; erasure: ErasureResult }> {
    const principal = auth.requirePrincipal();
    requireUuid(eventId, 'eventId');
    requireUuid(approvalId, 'approvalId');
    const secret = auth.credential();
    const record = { operation: 'erase_event' as const, principalId: principal.principalId, tokenId: principal.tokenId, approvalId, ids: { eventId } };
    const refuse = async (err: AppException, namespace?: string): Promise<never> => {
      await this.approvals.logRefusal(approvalId, secret, `destroyEvent refused: ${err.message}`);
      this.audit.irreversible({ ...record, outcome: 'refused', namespace, code: err.code });
      throw err;
    };
    const [event] = await this.events.findByIds([eventId]);
    // An event outside the caller's namespaces does not exist for them.
    if (!event || !(auth.can(Capability.READ, event.namespace) || auth.can(Capability.APPROVE, event.namespace))) {
      return refuse(new ApprovalException(ApprovalExceptionCode.EVENT_NOT_FOUND, `event ${eventId} not found in your namespaces`));
    }
    if (!auth.can(Capability.ADMIN, event.namespace)) {
      const message = `token "${principal.name}" needs "admin" on namespace "${event.namespace}" to execute destroyEvent`;
      return refuse(new AccessException(AccessExceptionCode.FORBIDDEN, message), event.namespace);
    }
    let erasure: ErasureResult;
    try {
      erasure = await this.erasures.destroy({ eventId, approvalId, namespace: event.namespace, credential: secret });
    } catch (err) {
      if (err instanceof ApprovalException) return refuse(err, event.namespace);
      throw err;
    }
    this.audit.irreversible({
      ...record,
      outcome: 'executed',
      namespace: event.namespace,
      ids: { eventId, retiredFacts: erasure.retiredFacts, keptFacts: erasure.keptFacts },
    });
    const [after] = await this.events.findByIds([eventId]);
    return { event: after as BronzeEvent, erasure };
  }
}
