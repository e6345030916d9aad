import { Counter } from 'prom-client';
import { telemetryRegistry } from './metrics';
import { namespaceHash } from './tracing';

/**
 * The record of irreversible operations and approval decisions (issue 43 item 5, docs/operations.md
 * "Irreversible operations"): one structured log line each (pino, ids and codes only: never a
 * reason, a name or content a person typed; the namespace as its hash, as traces carry it) and a
 * count in fixed label sets. The durable audit trail stays `access.approval_log`; these make the
 * operations visible to log search and alerting.
 */
export const IRREVERSIBLE_OPERATIONS = ['erase_event', 'retain_bronze', 'overwrite_overlay'] as const;
export type IrreversibleOperation = (typeof IRREVERSIBLE_OPERATIONS)[number];
export const APPROVAL_ACTIONS = ['DESTROY_EVENT', 'OVERWRITE_OVERLAY', 'RETAIN_BRONZE'] as const;
export type AuditedAction = (typeof APPROVAL_ACTIONS)[number];
export type ApprovalDecisionOutcome = 'approved' | 'rejected' | 'refused';

export const auditMetrics = {
  irreversible: new Counter({
    name: 'medallion_irreversible_operations_total',
    help: 'Irreversible operations by operation (erase_event, retain_bronze, overwrite_overlay) and outcome (executed, refused)',
    labelNames: ['operation', 'outcome'],
    registers: [telemetryRegistry],
  }),
  decisions: new Counter({
    name: 'medallion_approval_decisions_total',
    help: 'Approval decisions by action (DESTROY_EVENT, OVERWRITE_OVERLAY, RETAIN_BRONZE) and decision (approved, rejected, refused)',
    labelNames: ['action', 'decision'],
    registers: [telemetryRegistry],
  }),
} as const;

// Every series of the fixed label sets exists from the start (0), so a rate or an alert never reads "no data" for "none yet".
for (const operation of IRREVERSIBLE_OPERATIONS) for (const outcome of ['executed', 'refused']) auditMetrics.irreversible.labels(operation, outcome).inc(0);
for (const action of APPROVAL_ACTIONS) for (const decision of ['approved', 'rejected', 'refused']) auditMetrics.decisions.labels(action, decision).inc(0);

/** What the audit log writes with: pino's `info`/`warn` (fields first). */
export interface AuditSink {
  info(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
}

export interface IrreversibleRecord {
  operation: IrreversibleOperation;
  outcome: 'executed' | 'refused';
  /** The acting principal and token (ids). */
  principalId?: string;
  tokenId?: string;
  approvalId?: string | null;
  namespace?: string;
  /** Ids and counts of what was done or aimed at: eventId, overlayId, before (a month), partitions, events, retiredFacts… */
  ids?: Record<string, string | number | null>;
  /** For a refusal: the error's code (never its message, which may quote names). */
  code?: string;
}

export interface DecisionRecord {
  action: AuditedAction;
  decision: ApprovalDecisionOutcome;
  principalId: string;
  tokenId?: string;
  approvalId: string;
  namespace: string;
  code?: string;
}

/** The ids every audit line carries: who acted, with which token, on which approval, in which namespace (hashed). */
function who(r: { principalId?: string; tokenId?: string; approvalId?: string | null; namespace?: string }): Record<string, unknown> {
  return {
    principalId: r.principalId,
    tokenId: r.tokenId,
    approvalId: r.approvalId ?? undefined,
    namespaceHash: r.namespace === undefined ? undefined : namespaceHash(r.namespace),
  };
}

/** Counts and logs irreversible operations and approval decisions. */
export class AuditLog {
  constructor(private readonly sink?: AuditSink) {}

  irreversible(r: IrreversibleRecord): void {
    auditMetrics.irreversible.labels(r.operation, r.outcome).inc();
    const fields = { audit: 'irreversible_operation', operation: r.operation, outcome: r.outcome, ...who(r), ...(r.ids ?? {}), code: r.code };
    this.write(r.outcome === 'executed', fields, `irreversible operation ${r.outcome}: ${r.operation}`);
  }

  decision(r: DecisionRecord): void {
    auditMetrics.decisions.labels(r.action, r.decision).inc();
    const fields = { audit: 'approval_decision', action: r.action, decision: r.decision, ...who(r), code: r.code };
    this.write(r.decision !== 'refused', fields, `approval decision ${r.decision}: ${r.action}`);
  }

  /** Done at info, refused at warn. */
  private write(done: boolean, fields: Record<string, unknown>, msg: string): void {
    if (done) this.sink?.info(fields, msg);
    else this.sink?.warn(fields, msg);
  }
}

/** Counts without logging (tests and tools that build services without a logger). */
export const countOnlyAudit = new AuditLog();
