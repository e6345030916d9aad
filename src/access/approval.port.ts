import { Sql } from '../platform/postgres/sql';

/** The irreversible operations that need a second principal's approval (API.md "Approvals"). */
export type ApprovalActionName = 'DESTROY_EVENT' | 'OVERWRITE_OVERLAY' | 'RETAIN_BRONZE';

/** What an executor presents when it runs an approved operation. */
export interface ApprovalUse {
  readonly approvalId: string;
  readonly namespace: string;
  readonly action: ApprovalActionName;
  /** The operation's parameters; their canonical hash must equal the one approved. */
  readonly params: Readonly<Record<string, unknown>>;
  /**
   * The executing token's secret: `access.execute_approval` proves who executes by it (never by an
   * id the caller names) and writes the EXECUTED line in that principal's name.
   */
  readonly credential: string;
}

/**
 * The one gate irreversible operations pass through. `consume` marks the approval EXECUTED if
 * and only if it is APPROVED, unexpired, for this action and namespace, with the same parameter
 * hash, and not executed before: one statement, inside the caller's transaction, so the
 * operation and the approval's use commit or roll back together. Otherwise it throws a coded
 * error (NOT_FOUND, FORBIDDEN or BAD_USER_INPUT saying which condition failed).
 */
export interface ApprovalGate {
  consume(sql: Sql, use: ApprovalUse): Promise<void>;
}
