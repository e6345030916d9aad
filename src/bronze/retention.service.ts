import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { ALL_NAMESPACES } from '../access/approval.types';
import { Clock, systemClock } from '../common/clock';
import { requireUuid } from '../common/input';
import { isUuid } from '../common/ids';
import { AppException } from '../common/app-exception';
import { ApprovalException } from '../access/approval.exception';
import { ApprovalRepository } from '../access/approval.repository';
import { AuditLog, countOnlyAudit } from '../platform/telemetry/audit';
import { BronzeException, BronzeExceptionCode } from './bronze.exception';
import { RetentionPartition, RetentionRepository } from './retention.repository';

export interface RetentionPlan {
  before: Date;
  /** The latest `before` the configuration allows now (BRONZE_RETENTION_DAYS). */
  latestAllowed: Date;
  partitions: RetentionPartition[];
  events: number;
}

const DAY_MS = 86_400_000;
const firstOfMonth = (t: number): Date => {
  const d = new Date(t);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
};

/**
 * Bronze retention (docs/lifecycle.md): dropping the monthly partitions before a month is the one
 * irreversible lifecycle step, so it needs an approved RETAIN_BRONZE request on namespace "*" (a
 * partition holds every namespace's events) and "admin" on "*" to run; `plan` is its dry run.
 * `before` must be the first day of a month at least BRONZE_RETENTION_DAYS back (0 turns retention off).
 */
export class RetentionService {
  constructor(
    private readonly repo: RetentionRepository,
    private readonly settings: { retentionDays: number },
    private readonly clock: Clock = systemClock,
    /** Where refused attempts on an approval are logged (the approval's history), and how each drop or refusal is logged and counted. */
    private readonly audit: { approvals?: ApprovalRepository; log: AuditLog } = { log: countOnlyAudit },
  ) {}

  async plan(auth: AuthContext, before: Date): Promise<RetentionPlan> {
    auth.require(Capability.ADMIN, ALL_NAMESPACES);
    const latestAllowed = this.check(before);
    const partitions = await this.repo.plan(before);
    return { before, latestAllowed, partitions, events: partitions.reduce((s, p) => s + p.events, 0) };
  }

  async retain(auth: AuthContext, before: Date, approvalId: string): Promise<RetentionPartition[]> {
    const principal = auth.requirePrincipal();
    const month = Number.isNaN(before.getTime()) ? null : before.toISOString().slice(0, 10);
    const record = {
      operation: 'retain_bronze' as const,
      principalId: principal.principalId,
      tokenId: principal.tokenId,
      approvalId,
      namespace: ALL_NAMESPACES,
    };
    try {
      auth.require(Capability.ADMIN, ALL_NAMESPACES);
      requireUuid(approvalId, 'approvalId');
      this.check(before);
      const dropped = await this.repo.drop(month as string, approvalId, auth.credential());
      this.audit.log.irreversible({
        ...record,
        outcome: 'executed',
        ids: { before: month, partitions: dropped.length, events: dropped.reduce((n, p) => n + p.events, 0) },
      });
      return dropped;
    } catch (err) {
      if (err instanceof AppException) {
        if (err instanceof ApprovalException && isUuid(approvalId))
          await this.audit.approvals?.logRefusal(approvalId, auth.credential(), `retainBronze refused: ${err.message}`);
        this.audit.log.irreversible({
          ...record,
          approvalId: isUuid(approvalId) ? approvalId : null,
          outcome: 'refused',
          ids: { before: month },
          code: err.code,
        });
      }
      throw err;
    }
  }

  /** The month bound checks; returns the latest allowed bound. */
  private check(before: Date): Date {
    if (this.settings.retentionDays === 0) {
      throw new BronzeException(
        BronzeExceptionCode.INVALID_ARGUMENT,
        'Bronze retention is off (BRONZE_RETENTION_DAYS=0): set how many days of events to keep before partitions may be dropped',
      );
    }
    if (before.getTime() !== firstOfMonth(before.getTime()).getTime()) {
      throw new BronzeException(
        BronzeExceptionCode.INVALID_ARGUMENT,
        `before must be the first instant of a month in UTC (YYYY-MM-01T00:00:00Z); got ${before.toISOString()}`,
      );
    }
    const latestAllowed = firstOfMonth(this.clock.now().getTime() - this.settings.retentionDays * DAY_MS);
    if (before.getTime() > latestAllowed.getTime()) {
      throw new BronzeException(
        BronzeExceptionCode.INVALID_ARGUMENT,
        `before ${before.toISOString().slice(0, 10)} would drop events younger than BRONZE_RETENTION_DAYS (${this.settings.retentionDays}); the latest allowed is ${latestAllowed.toISOString().slice(0, 10)}`,
      );
    }
    return latestAllowed;
  }
}
