import { InputException, InputExceptionCode } from '../common/app-exception';
import { AuditLog, countOnlyAudit } from '../platform/telemetry/audit';
import { isValidNamespace, NAMESPACE_RULE } from '../common/namespace';
import { requireUuid } from '../common/input';
import { AuthContext } from './auth-context';
import { AccessException, AccessExceptionCode } from './access.exception';
import { Capability } from './capability';
import { ApprovalException, ApprovalExceptionCode } from './approval.exception';
import { paramsHash, parseApprovalParams } from './approval-params';
import { ApprovalRepository, Decision } from './approval.repository';
import { ALL_NAMESPACES, ApprovalAction, ApprovalRequestRow, ApprovalStatus, ApprovalStep, ApprovalView, REQUEST_CAPABILITY } from './approval.types';

export interface ApprovalRequestInput {
  namespace: string;
  action: ApprovalAction;
  params: unknown;
  reason: string;
}

export interface ApprovalSettings {
  /** APPROVAL_TTL: seconds a request stays usable. */
  ttlSeconds: number;
  /** Most requests one `approvals` query returns. */
  maxPageSize: number;
}

/** Looks events up by id, any namespace (the service compares namespaces itself). */
export type EventLookup = (
  ids: readonly string[],
) => Promise<ReadonlyArray<{ readonly id: string; readonly namespace: string; readonly destroyedAt: Date | null }>>;

const MAX_REASON = 2000;

/**
 * Approval requests for irreversible operations (invariant 7, docs/approvals.md): requested by a
 * holder of the action's capability, approved or rejected by a different principal holding
 * "approve" on the namespace (admin does not imply it), every step and every refusal logged.
 */
export class ApprovalService {
  constructor(
    private readonly approvals: ApprovalRepository,
    private readonly events: EventLookup,
    private readonly settings: ApprovalSettings,
    /** Logs and counts every decision and refused attempt (platform/telemetry/audit.ts). */
    private readonly audit: AuditLog = countOnlyAudit,
  ) {}

  /**
   * A namespace's requests with their history. "approve" sees every action; otherwise the
   * actions the caller may request (admin: both, overlay: OVERWRITE_OVERLAY); none: FORBIDDEN.
   */
  async list(auth: AuthContext, namespace: string, status: ApprovalStatus | null): Promise<ApprovalView[]> {
    const principal = auth.requirePrincipal();
    const actions = Object.values(ApprovalAction).filter((a) => auth.can(Capability.APPROVE, namespace) || auth.can(REQUEST_CAPABILITY[a], namespace));
    if (actions.length === 0) {
      throw new AccessException(
        AccessExceptionCode.FORBIDDEN,
        `token "${principal.name}" needs "approve", "admin" or "overlay" on namespace "${namespace}" to list its approval requests`,
      );
    }
    return this.withHistory(await this.approvals.list(namespace, actions, status, this.settings.maxPageSize));
  }

  async request(auth: AuthContext, input: ApprovalRequestInput): Promise<ApprovalView> {
    if (input.action === ApprovalAction.RETAIN_BRONZE) {
      if (input.namespace !== ALL_NAMESPACES) {
        throw new InputException(
          InputExceptionCode.INVALID_ARGUMENT,
          `namespace: RETAIN_BRONZE is requested on "${ALL_NAMESPACES}" (a Bronze partition holds the events of every namespace)`,
        );
      }
    } else if (!isValidNamespace(input.namespace)) throw new InputException(InputExceptionCode.INVALID_ARGUMENT, `namespace: ${NAMESPACE_RULE}`);
    auth.require(REQUEST_CAPABILITY[input.action], input.namespace);
    const reason = input.reason.trim();
    if (reason.length === 0 || reason.length > MAX_REASON) {
      throw new InputException(
        InputExceptionCode.INVALID_ARGUMENT,
        `reason must be 1 to ${MAX_REASON} characters: say why this irreversible operation is needed`,
      );
    }
    const params = parseApprovalParams(input.action, input.params);
    if (input.action === ApprovalAction.DESTROY_EVENT) await this.checkDestroyable(input.namespace, params.eventId as string);
    const row = await this.approvals.create(
      { namespace: input.namespace, action: input.action, params, paramsHash: paramsHash(params), reason, ttlSeconds: this.settings.ttlSeconds },
      auth.credential(),
    );
    return (await this.withHistory([row]))[0] as ApprovalView;
  }

  approve(auth: AuthContext, id: string, reason: string | null): Promise<ApprovalView> {
    return this.decide(auth, id, ApprovalStep.APPROVED, reason);
  }

  reject(auth: AuthContext, id: string, reason: string | null): Promise<ApprovalView> {
    return this.decide(auth, id, ApprovalStep.REJECTED, reason);
  }

  private async decide(auth: AuthContext, id: string, decision: Decision, reason: string | null): Promise<ApprovalView> {
    const principal = auth.requirePrincipal();
    requireUuid(id, 'id');
    if (reason !== null && reason.length > MAX_REASON)
      throw new InputException(InputExceptionCode.INVALID_ARGUMENT, `reason must be at most ${MAX_REASON} characters`);
    const verb = decision === ApprovalStep.APPROVED ? 'approve' : 'reject';
    const request = await this.approvals.find(id);
    const record = (outcome: 'approved' | 'rejected' | 'refused', code?: string) => {
      // A request the caller cannot see is counted by nothing (its action would be a guess); the refusal is logged below.
      if (request && this.seesNamespace(auth, request.namespace))
        this.audit.decision({
          action: request.action,
          decision: outcome,
          principalId: principal.principalId,
          tokenId: principal.tokenId,
          approvalId: id,
          namespace: request.namespace,
          code,
        });
    };
    const refuse = async (code: ApprovalExceptionCode, message: string): Promise<never> => {
      await this.approvals.logRefusal(id, auth.credential(), `${verb} refused: ${message}`);
      record('refused', code);
      throw new ApprovalException(code, message);
    };
    // Outside the caller's namespaces a request does not exist for them (no probing by id).
    if (!request || !this.seesNamespace(auth, request.namespace)) {
      return refuse(ApprovalExceptionCode.APPROVAL_NOT_FOUND, `approval request ${id} not found in your namespaces`);
    }
    if (!auth.can(Capability.APPROVE, request.namespace)) {
      return refuse(
        ApprovalExceptionCode.NOT_APPROVER,
        `token "${principal.name}" lacks the "approve" capability on namespace "${request.namespace}" ("admin" does not imply it): ask a holder of "approve" to ${verb}`,
      );
    }
    if (request.requestedBy === principal.principalId) {
      return refuse(ApprovalExceptionCode.SELF_APPROVAL, `you requested ${id} yourself: a different principal holding "approve" must ${verb} it`);
    }
    // Two people: not the bootstrap admin, nothing the requester created, nothing that created the requester (docs/approvals.md).
    const conflict = await this.approvals.lineageConflict(request.requestedBy, principal.tokenId);
    if (conflict) {
      return refuse(
        ApprovalExceptionCode.SAME_LINEAGE,
        `token "${principal.name}" may not ${verb} ${id}: ${conflict}. A principal neither created by the requester nor holding the requester's secret must ${verb} it`,
      );
    }
    let decided: ApprovalRequestRow | null;
    try {
      decided = await this.approvals.decide(id, decision, auth.credential(), reason);
    } catch (err) {
      if (err instanceof ApprovalException) return refuse(err.code, err.message);
      throw err;
    }
    if (decided) {
      record(decision === ApprovalStep.APPROVED ? 'approved' : 'rejected');
      return (await this.withHistory([decided]))[0] as ApprovalView;
    }
    // The UPDATE's conditions did not hold: read again to say which.
    const now = await this.approvals.find(id);
    if (now?.status === ApprovalStatus.EXPIRED) {
      await this.approvals.markExpired(id);
      return refuse(ApprovalExceptionCode.EXPIRED, `approval request ${id} expired at ${now.expiresAt.toISOString()}: request a new one`);
    }
    return refuse(ApprovalExceptionCode.NOT_PENDING, `approval request ${id} is ${now?.status ?? 'gone'}: only a PENDING request can be decided`);
  }

  /** The caller holds any capability that shows approvals of this namespace. */
  private seesNamespace(auth: AuthContext, namespace: string): boolean {
    return [Capability.APPROVE, Capability.ADMIN, Capability.OVERLAY].some((c) => auth.can(c, namespace));
  }

  private async checkDestroyable(namespace: string, eventId: string): Promise<void> {
    const [event] = await this.events([eventId]);
    if (!event || event.namespace !== namespace) {
      throw new ApprovalException(ApprovalExceptionCode.INVALID_PARAMS, `params.eventId: no event ${eventId} in namespace "${namespace}"`);
    }
    if (event.destroyedAt) {
      throw new ApprovalException(
        ApprovalExceptionCode.ALREADY_DESTROYED,
        `params.eventId: event ${eventId} was already destroyed at ${event.destroyedAt.toISOString()}`,
      );
    }
  }

  private async withHistory(rows: ApprovalRequestRow[]): Promise<ApprovalView[]> {
    const history = await this.approvals.history(rows.map((r) => r.id));
    return rows.map((request) => ({ request, history: history.filter((h) => h.requestId === request.id) }));
  }
}
