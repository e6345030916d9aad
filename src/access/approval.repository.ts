import { pgError } from '../platform/postgres/pg-error';
import { col, Sql, SqlRow } from '../platform/postgres/sql';
import { ApprovalException, ApprovalExceptionCode } from './approval.exception';
import { ApprovalAction, ApprovalLogEntry, ApprovalRequestRow, ApprovalStatus, ApprovalStep } from './approval.types';

const REQUEST_COLUMNS = `r.id::text AS id, r.namespace, r.action, r.params, r.params_hash, r.reason, r.requested_by::text AS requested_by,
  r.requested_by_name,
  CASE WHEN r.status IN ('PENDING', 'APPROVED') AND r.expires_at <= now() THEN 'EXPIRED' ELSE r.status END AS status,
  r.created_at, r.expires_at, r.decided_by::text AS decided_by, r.decided_by_name, r.decided_at, r.decision_reason,
  r.executed_by, r.executed_by_name, r.executed_at`;

function toRequest(r: SqlRow): ApprovalRequestRow {
  return {
    id: col.string(r, 'id'),
    namespace: col.string(r, 'namespace'),
    action: col.string(r, 'action') as ApprovalAction,
    params: r.params as Record<string, unknown>,
    paramsHash: col.string(r, 'params_hash'),
    reason: col.string(r, 'reason'),
    requestedBy: col.string(r, 'requested_by'),
    requestedByName: col.string(r, 'requested_by_name'),
    status: col.string(r, 'status') as ApprovalStatus,
    createdAt: col.date(r, 'created_at'),
    expiresAt: col.date(r, 'expires_at'),
    decidedBy: col.stringOrNull(r, 'decided_by'),
    decidedByName: col.stringOrNull(r, 'decided_by_name'),
    decidedAt: col.dateOrNull(r, 'decided_at'),
    decisionReason: col.stringOrNull(r, 'decision_reason'),
    executedBy: col.stringOrNull(r, 'executed_by'),
    executedByName: col.stringOrNull(r, 'executed_by_name'),
    executedAt: col.dateOrNull(r, 'executed_at'),
  };
}

const toLogEntry = (r: SqlRow): ApprovalLogEntry => ({
  id: col.string(r, 'id'),
  requestId: col.string(r, 'request_id'),
  namespace: col.string(r, 'namespace'),
  step: col.string(r, 'step') as ApprovalStep,
  principalId: col.string(r, 'principal_id'),
  principalName: col.string(r, 'principal_name'),
  detail: col.stringOrNull(r, 'detail'),
  at: col.date(r, 'at'),
});

export interface NewApprovalRequest {
  namespace: string;
  action: ApprovalAction;
  params: Record<string, unknown>;
  paramsHash: string;
  reason: string;
  ttlSeconds: number;
}

export type Decision = ApprovalStep.APPROVED | ApprovalStep.REJECTED;

/** SQL of approval requests and their append-only audit log (`access.approval_requests`, `access.approval_log`). */
export class ApprovalRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * Stores the request through `access.request_approval` (SECURITY DEFINER), which also writes its
   * REQUESTED log line: the requester is whoever `secret` belongs to, never a name the caller passes.
   */
  async create(req: NewApprovalRequest, secret: string): Promise<ApprovalRequestRow> {
    return this.sql.transaction(async (tx) => {
      const id = await tx.one(
        `SELECT access.request_approval($1, $2, $3, $4::jsonb, $5, $6, $7)::text AS id`,
        [secret, req.namespace, req.action, JSON.stringify(req.params), req.paramsHash, req.reason, req.ttlSeconds],
        (r) => col.string(r, 'id'),
      );
      return tx.one(`SELECT ${REQUEST_COLUMNS} FROM access.approval_requests r WHERE r.id = $1::uuid`, [id], toRequest);
    });
  }

  async find(id: string): Promise<ApprovalRequestRow | null> {
    return this.sql.maybeOne(`SELECT ${REQUEST_COLUMNS} FROM access.approval_requests r WHERE r.id = $1::uuid`, [id], toRequest);
  }

  /** A namespace's requests of these actions, oldest first; with `status`, only those (effective status). */
  async list(namespace: string, actions: readonly ApprovalAction[], status: ApprovalStatus | null, limit: number): Promise<ApprovalRequestRow[]> {
    return this.sql.rows(
      `SELECT * FROM (SELECT ${REQUEST_COLUMNS} FROM access.approval_requests r WHERE r.namespace = $1 AND r.action = ANY($2::text[])) x
        WHERE $3::text IS NULL OR x.status = $3
        ORDER BY x.created_at, x.id LIMIT $4`,
      [namespace, actions, status, limit],
      toRequest,
    );
  }

  /** The audit lines of these requests, in the order they were written. */
  async history(requestIds: readonly string[]): Promise<ApprovalLogEntry[]> {
    if (requestIds.length === 0) return [];
    return this.sql.rows(
      `SELECT l.id::text AS id, l.request_id::text AS request_id, l.namespace, l.step, l.principal_id, l.principal_name, l.detail, l.at
         FROM access.approval_log l WHERE l.request_id = ANY($1::uuid[]) ORDER BY l.id`,
      [requestIds],
      toLogEntry,
    );
  }

  /**
   * Approves or rejects through `access.decide_approval` (SECURITY DEFINER): the database proves
   * the decider by `secret`, checks its `approve` grant and that it did not make the request, and
   * sets the decision only for a PENDING, unexpired request, with its log line. Null when the
   * request was not PENDING or had expired.
   */
  async decide(id: string, decision: Decision, secret: string, reason: string | null): Promise<ApprovalRequestRow | null> {
    let decided: string | null;
    try {
      decided = await this.sql.one(`SELECT access.decide_approval($1::uuid, $2, $3, $4)::text AS id`, [id, secret, decision, reason], (r) =>
        col.stringOrNull(r, 'id'),
      );
    } catch (err) {
      // The service checks every rule first; a refusal here means the state moved between (a revoked token, a new lineage).
      const pg = pgError(err);
      if (pg?.code === '42501') throw new ApprovalException(ApprovalExceptionCode.SAME_LINEAGE, pg.message.replace(/^decide_approval: /, ''));
      throw err;
    }
    return decided === null ? null : this.find(decided);
  }

  /** Stores EXPIRED on a request whose time ran out undecided, so the table says what reads say. */
  async markExpired(id: string): Promise<void> {
    await this.sql.execute(`SELECT access.expire_approval($1::uuid)`, [id]);
  }

  /**
   * The single-use gate for the holder of `secret` (`access.execute_approval`: the executor must
   * hold the action's capability; one UPDATE … WHERE … RETURNING and its EXECUTED log line), in the
   * caller's transaction. False when a condition of the approval failed.
   */
  async execute(tx: Sql, use: { id: string; namespace: string; action: string; hash: string; secret: string }): Promise<boolean> {
    try {
      const id = await tx.one(
        `SELECT access.execute_approval($1::uuid, $2, $3, $4, $5)::text AS id`,
        [use.id, use.secret, use.namespace, use.action, use.hash],
        (r) => col.stringOrNull(r, 'id'),
      );
      return id !== null;
    } catch (err) {
      const pg = pgError(err);
      if (pg?.code === '42501') throw new ApprovalException(ApprovalExceptionCode.NOT_EXECUTOR, pg.message.replace(/^execute_approval: /, ''));
      throw err;
    }
  }

  /**
   * Why this token may not decide a request of `requestedBy` (`access.lineage_conflict`: the
   * requester itself, the bootstrap admin, a descendant or an ancestor of the requester's tokens),
   * or null when it may. `access.decide_approval` applies the same function.
   */
  async lineageConflict(requestedBy: string, tokenId: string): Promise<string | null> {
    return this.sql.one(`SELECT access.lineage_conflict($1::uuid, $2::uuid) AS conflict`, [requestedBy, tokenId], (r) => col.stringOrNull(r, 'conflict'));
  }

  /**
   * Logs a refused attempt on request `id` by the holder of `secret` (`access.log_refusal`), in
   * whatever namespace the request lives (an attempt from outside it is logged there too). On the
   * pool, outside any caller's transaction, so the line stays when the refused operation rolls
   * back. Nothing is written for an id that names no request.
   */
  async logRefusal(id: string, secret: string, detail: string): Promise<void> {
    await this.sql.execute(`SELECT access.log_refusal($1::uuid, $2, $3)`, [id, secret, detail.slice(0, 2000)]);
  }
}
