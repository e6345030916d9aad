import { col, Sql, SqlRow } from '../platform/postgres/sql';
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

export interface Actor {
  readonly principalId: string;
  readonly name: string;
}

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
   * The request and its REQUESTED log line, in one transaction. Stored by `access.request_approval`
   * (SECURITY DEFINER): the requester is whoever `secret` belongs to, never a name the caller passes.
   */
  async create(req: NewApprovalRequest, by: Actor, secret: string): Promise<ApprovalRequestRow> {
    return this.sql.transaction(async (tx) => {
      const id = await tx.one(
        `SELECT access.request_approval($1, $2, $3, $4::jsonb, $5, $6, $7)::text AS id`,
        [secret, req.namespace, req.action, JSON.stringify(req.params), req.paramsHash, req.reason, req.ttlSeconds],
        (r) => col.string(r, 'id'),
      );
      const row = await tx.one(`SELECT ${REQUEST_COLUMNS} FROM access.approval_requests r WHERE r.id = $1::uuid`, [id], toRequest);
      await this.log(tx, row.id, row.namespace, ApprovalStep.REQUESTED, by, `reason: ${req.reason}`);
      return row;
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
    const decided = await this.sql.one(`SELECT access.decide_approval($1::uuid, $2, $3, $4)::text AS id`, [id, secret, decision, reason], (r) =>
      col.stringOrNull(r, 'id'),
    );
    return decided === null ? null : this.find(decided);
  }

  /** Stores EXPIRED on a request whose time ran out undecided, so the table says what reads say. */
  async markExpired(id: string): Promise<void> {
    await this.sql.execute(`SELECT access.expire_approval($1::uuid)`, [id]);
  }

  /**
   * The single-use gate (`access.consume_approval`: one UPDATE … WHERE … RETURNING), with its
   * EXECUTED log line, in the caller's transaction. False when a condition failed.
   */
  async consume(tx: Sql, use: { id: string; namespace: string; action: string; hash: string; executor: string }): Promise<boolean> {
    const id = await tx.one(
      `SELECT access.consume_approval($1::uuid, $2, $3, $4, $5)::text AS id`,
      [use.id, use.namespace, use.action, use.hash, use.executor],
      (r) => col.stringOrNull(r, 'id'),
    );
    if (id === null) return false;
    await tx.execute(
      `INSERT INTO access.approval_log (request_id, namespace, step, principal_id, principal_name, detail)
       SELECT r.id, r.namespace, 'EXECUTED', $2, COALESCE(r.executed_by_name, $2), 'executed ' || r.action FROM access.approval_requests r WHERE r.id = $1::uuid`,
      [use.id, use.executor],
    );
    return true;
  }

  /**
   * Logs a refused attempt on request `id`, in whatever namespace it lives (an attempt from
   * outside it is logged there too). On the pool, outside any caller's transaction, so the line
   * stays when the refused operation rolls back. Nothing is written for an id that does not exist.
   */
  async logRefusal(id: string, by: Actor, detail: string): Promise<void> {
    await this.sql.execute(
      `INSERT INTO access.approval_log (request_id, namespace, step, principal_id, principal_name, detail)
       SELECT r.id, r.namespace, 'REFUSED', $2, $3, $4 FROM access.approval_requests r WHERE r.id = $1::uuid`,
      [id, by.principalId, by.name, detail.slice(0, 2000)],
    );
  }

  private async log(tx: Sql, id: string, namespace: string, step: ApprovalStep, by: Actor, detail: string | null): Promise<void> {
    await tx.execute(
      `INSERT INTO access.approval_log (request_id, namespace, step, principal_id, principal_name, detail) VALUES ($1::uuid, $2, $3, $4, $5, $6)`,
      [id, namespace, step, by.principalId, by.name, detail],
    );
  }
}
