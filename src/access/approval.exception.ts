import { AppErrorKind, AppException } from '../common/app-exception';
import { assertUnreachable } from '../common/assert-unreachable';

export enum ApprovalExceptionCode {
  /** No such request in a namespace the caller may see (or the event named is not there). */
  APPROVAL_NOT_FOUND = 'APPROVAL_NOT_FOUND',
  EVENT_NOT_FOUND = 'EVENT_NOT_FOUND',
  INVALID_PARAMS = 'INVALID_PARAMS',
  /** The operation's parameters hash differently from the approved ones, or the action differs. */
  PARAMS_MISMATCH = 'PARAMS_MISMATCH',
  ALREADY_DESTROYED = 'ALREADY_DESTROYED',
  SELF_APPROVAL = 'SELF_APPROVAL',
  /** The decider descends from the requester (or the requester from it), or is the bootstrap admin: not a second person. */
  SAME_LINEAGE = 'SAME_LINEAGE',
  NOT_APPROVER = 'NOT_APPROVER',
  /** The executing token is not live or lacks the action's capability (checked again by the database). */
  NOT_EXECUTOR = 'NOT_EXECUTOR',
  NOT_PENDING = 'NOT_PENDING',
  EXPIRED = 'EXPIRED',
  NOT_APPROVED = 'NOT_APPROVED',
  ALREADY_EXECUTED = 'ALREADY_EXECUTED',
}

function approvalKind(code: ApprovalExceptionCode): AppErrorKind {
  switch (code) {
    case ApprovalExceptionCode.APPROVAL_NOT_FOUND:
    case ApprovalExceptionCode.EVENT_NOT_FOUND:
      return AppErrorKind.NOT_FOUND;
    case ApprovalExceptionCode.INVALID_PARAMS:
    case ApprovalExceptionCode.PARAMS_MISMATCH:
    case ApprovalExceptionCode.ALREADY_DESTROYED:
      return AppErrorKind.BAD_INPUT;
    case ApprovalExceptionCode.SELF_APPROVAL:
    case ApprovalExceptionCode.SAME_LINEAGE:
    case ApprovalExceptionCode.NOT_APPROVER:
    case ApprovalExceptionCode.NOT_EXECUTOR:
    case ApprovalExceptionCode.NOT_PENDING:
    case ApprovalExceptionCode.EXPIRED:
    case ApprovalExceptionCode.NOT_APPROVED:
    case ApprovalExceptionCode.ALREADY_EXECUTED:
      return AppErrorKind.FORBIDDEN;
    default:
      return assertUnreachable(code);
  }
}

/** Why an approval step or an approved operation was refused. */
export class ApprovalException extends AppException<ApprovalExceptionCode> {
  constructor(code: ApprovalExceptionCode, message: string) {
    super(code, approvalKind(code), message);
    this.name = 'ApprovalException';
  }
}
