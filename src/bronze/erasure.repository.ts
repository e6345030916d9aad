import { pgError } from '../platform/postgres/pg-error';
import { ApprovalException, ApprovalExceptionCode } from '../access/approval.exception';
import { col, Sql } from '../platform/postgres/sql';

export interface ErasureResult {
  retiredFacts: number;
  keptFacts: number;
  destroyedAt: Date;
}

export interface ErasureCall {
  eventId: string;
  approvalId: string;
  namespace: string;
  /** The executor's token secret: the database names the executor from it (it must hold admin on the namespace). */
  credential: string;
}

/** SQLSTATEs bronze.destroy_event raises, and what each means to the caller. */
const REFUSALS: Record<string, ApprovalExceptionCode> = {
  P0002: ApprovalExceptionCode.APPROVAL_NOT_FOUND,
  '22023': ApprovalExceptionCode.PARAMS_MISMATCH,
  '42501': ApprovalExceptionCode.NOT_APPROVED,
  '55000': ApprovalExceptionCode.ALREADY_DESTROYED,
};

/**
 * Calls `bronze.destroy_event_as`, the owner's SECURITY DEFINER function that proves the executor
 * by its token secret (admin on the namespace) and runs `bronze.destroy_event`, which consumes the
 * approval and erases the event in one statement (migrations 1764400000200, 1764400001410). Its
 * refusals become ApprovalExceptions; "approval … was already executed" and "expired" keep their own codes.
 */
export class ErasureRepository {
  constructor(private readonly sql: Sql) {}

  async destroy(call: ErasureCall): Promise<ErasureResult> {
    try {
      return await this.sql.transaction((tx) =>
        tx.one(
          `SELECT retired_facts, kept_facts, destroyed_at FROM bronze.destroy_event_as($1, $2::uuid, $3::uuid, $4)`,
          [call.credential, call.eventId, call.approvalId, call.namespace],
          (r) => ({ retiredFacts: col.number(r, 'retired_facts'), keptFacts: col.number(r, 'kept_facts'), destroyedAt: col.date(r, 'destroyed_at') }),
        ),
      );
    } catch (err) {
      const pg = pgError(err);
      const code = pg && REFUSALS[pg.code];
      if (!pg || !code) throw err;
      const refined =
        code === ApprovalExceptionCode.NOT_APPROVED && /already executed/.test(pg.message)
          ? ApprovalExceptionCode.ALREADY_EXECUTED
          : code === ApprovalExceptionCode.NOT_APPROVED && /expired/.test(pg.message)
            ? ApprovalExceptionCode.EXPIRED
            : code === ApprovalExceptionCode.APPROVAL_NOT_FOUND && /^event /.test(pg.message)
              ? ApprovalExceptionCode.EVENT_NOT_FOUND
              : code;
      throw new ApprovalException(refined, pg.message);
    }
  }
}
