import { registerEnumType } from 'type-graphql';
import { ApprovalActionName } from './approval.port';
import { Capability } from './capability';

/** The irreversible operations (invariant 7); everything reversible runs without approval. */
export enum ApprovalAction {
  DESTROY_EVENT = 'DESTROY_EVENT',
  OVERWRITE_OVERLAY = 'OVERWRITE_OVERLAY',
  /** Drop Bronze's monthly partitions before a month (docs/lifecycle.md); requested on namespace "*": a partition holds every namespace. */
  RETAIN_BRONZE = 'RETAIN_BRONZE',
}

/** The namespace a RETAIN_BRONZE request names: requester, approver and executor need their capability on every namespace. */
export const ALL_NAMESPACES = '*';

/** Stored status, except EXPIRED, which a read also reports for a PENDING or APPROVED request past its expiry. */
export enum ApprovalStatus {
  PENDING = 'PENDING',
  APPROVED = 'APPROVED',
  REJECTED = 'REJECTED',
  EXPIRED = 'EXPIRED',
  EXECUTED = 'EXECUTED',
}

/** One line of the append-only audit log. */
export enum ApprovalStep {
  REQUESTED = 'REQUESTED',
  APPROVED = 'APPROVED',
  REJECTED = 'REJECTED',
  EXECUTED = 'EXECUTED',
  /** Any refused attempt: self-approval, no "approve", expired, already decided or executed, wrong parameters. */
  REFUSED = 'REFUSED',
}

registerEnumType(ApprovalAction, { name: 'ApprovalAction', description: 'Irreversible operations that need a second principal holding "approve".' });
registerEnumType(ApprovalStatus, { name: 'ApprovalStatus' });
registerEnumType(ApprovalStep, { name: 'ApprovalStep' });

/** The capability a requester needs for each action on the namespace. */
export const REQUEST_CAPABILITY: Readonly<Record<ApprovalAction, Capability>> = {
  [ApprovalAction.DESTROY_EVENT]: Capability.ADMIN,
  [ApprovalAction.OVERWRITE_OVERLAY]: Capability.OVERLAY,
  [ApprovalAction.RETAIN_BRONZE]: Capability.ADMIN,
};

export const toActionName = (a: ApprovalAction): ApprovalActionName => a;

export interface ApprovalRequestRow {
  id: string;
  namespace: string;
  action: ApprovalAction;
  params: Record<string, unknown>;
  paramsHash: string;
  reason: string;
  requestedBy: string;
  requestedByName: string;
  /** Effective: EXPIRED once a PENDING or APPROVED request is past expiresAt. */
  status: ApprovalStatus;
  createdAt: Date;
  expiresAt: Date;
  decidedBy: string | null;
  decidedByName: string | null;
  decidedAt: Date | null;
  decisionReason: string | null;
  executedBy: string | null;
  executedByName: string | null;
  executedAt: Date | null;
}

export interface ApprovalLogEntry {
  id: string;
  requestId: string;
  namespace: string;
  step: ApprovalStep;
  principalId: string;
  principalName: string;
  detail: string | null;
  at: Date;
}

/** A request with its audit history, oldest step first. */
export interface ApprovalView {
  request: ApprovalRequestRow;
  history: ApprovalLogEntry[];
}
