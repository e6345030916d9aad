import { randomUUID } from 'node:crypto';
import { AuthContext } from '../../access/auth-context';
import { Capability } from '../../access/capability';
import { decodeCursor, encodeCursor } from '../../common/cursor';
import { isUuid } from '../../common/ids';
import { Sql } from '../../platform/postgres/sql';
import { GoldException, GoldExceptionCode } from '../gold.exception';
import { GoldSupersession, parseReviewDecision } from './conflict-rules';
import { GoldClaimReader } from './gold-claims';
import { REVIEW_STATUSES, ReviewItemRow, ReviewRepository, ReviewStatus } from './review.repository';

export interface ReviewPage {
  edges: Array<{ cursor: string; node: ReviewItemRow }>;
  hasNextPage: boolean;
  endCursor: string | null;
}

/** Longest reviewer note kept with a decision. */
export const REVIEW_NOTE_MAX = 2000;

/**
 * The review queue (docs/gold-review.md): conflicts promotion did not decide. Reading the queue
 * and resolving an item need "review" on the item's namespace ("admin" implies it); an item of a
 * namespace the caller may neither read nor review is NOT_FOUND. Batch reads for loaders and Gold
 * reads (`supersededAmong`) check no grants: their callers do.
 */
export class ReviewService implements GoldClaimReader {
  constructor(
    private readonly sql: Sql,
    private readonly repo: ReviewRepository,
    private readonly opts: { maxPageSize: number },
  ) {}

  async queue(auth: AuthContext, namespace: string, status: string | null, first: number | null, after: string | null): Promise<ReviewPage> {
    auth.require(Capability.REVIEW, namespace);
    const wanted = status == null ? null : (status.trim().toUpperCase() as ReviewStatus);
    if (wanted !== null && !REVIEW_STATUSES.includes(wanted))
      throw new GoldException(GoldExceptionCode.INVALID_ARGUMENT, `status must be one of ${REVIEW_STATUSES.join(', ')} (or omitted for all)`);
    const size = first ?? 50;
    if (!Number.isInteger(size) || size < 1 || size > this.opts.maxPageSize)
      throw new GoldException(GoldExceptionCode.INVALID_ARGUMENT, `first must be between 1 and ${this.opts.maxPageSize} (MAX_PAGE_SIZE)`);
    const rows = await this.repo.page(namespace, wanted, size + 1, after ? decodeCursor(after) : null);
    const edges = rows.slice(0, size).map(({ micros, ...node }) => ({ cursor: encodeCursor({ micros, id: node.id }), node }));
    return { edges, hasNextPage: rows.length > size, endCursor: edges.at(-1)?.cursor ?? null };
  }

  /**
   * Applies a reviewer's decision to a PENDING item and logs it (gold.claim_decisions, source
   * "review", with the principal): KEEP:<factId> supersedes the item's other facts at Gold from
   * the kept fact's valid_from on; KEEP_ALL and DISMISS supersede nothing. An item is decided once:
   * resolving a decided item is ALREADY_DECIDED (CONFLICT), never an overwrite.
   */
  async resolve(auth: AuthContext, id: string, decision: string, note: string | null): Promise<ReviewItemRow> {
    const item = isUuid(id) ? await this.repo.byId(id) : null;
    if (!item || !(auth.can(Capability.READ, item.namespace) || auth.can(Capability.REVIEW, item.namespace)))
      throw new GoldException(GoldExceptionCode.NOT_FOUND, `no review item ${id} among the namespaces you may read`);
    const principal = auth.require(Capability.REVIEW, item.namespace);
    const parsed = parseReviewDecision(decision, item.factIds);
    if ('error' in parsed) throw new GoldException(GoldExceptionCode.INVALID_ARGUMENT, parsed.error);
    const text = note?.trim() || null;
    if (text && text.length > REVIEW_NOTE_MAX)
      throw new GoldException(GoldExceptionCode.INVALID_ARGUMENT, `note must be at most ${REVIEW_NOTE_MAX} characters`);
    if (item.status !== 'PENDING') throw alreadyDecided(item);
    const canonical = parsed.kind === 'KEEP' ? `KEEP:${parsed.factId}` : parsed.kind;
    const supersededFrom = parsed.kind === 'KEEP' ? await this.repo.validFromOf(parsed.factId) : null;
    return this.sql.transaction(async (tx) => {
      const closed = await this.repo.close(tx, item.id, parsed.kind === 'DISMISS' ? 'DISMISSED' : 'RESOLVED', canonical, text, principal.tokenId);
      if (!closed) {
        const now = await this.repo.byId(item.id);
        throw alreadyDecided(now ?? item);
      }
      const losers = parsed.kind === 'KEEP' ? item.factIds.filter((f) => f !== parsed.factId).sort() : [];
      await this.repo.insertDecisions(tx, item.namespace, [
        {
          id: randomUUID(),
          conflictKey: item.conflictKey,
          source: 'review',
          goldEntityId: item.goldEntityId,
          kind: item.kind,
          rule: 'review',
          outcome: parsed.kind === 'KEEP' ? 'supersede' : parsed.kind === 'KEEP_ALL' ? 'keep_all' : 'dismiss',
          factIds: item.factIds,
          winnerIds: parsed.kind === 'KEEP' ? [parsed.factId] : [],
          loserIds: losers,
          supersededFrom,
          scores: {},
          reason: `review: ${canonical}${text ? ` (${text})` : ''}`,
          reviewItemId: item.id,
          runId: randomUUID(),
          decidedBy: principal.tokenId,
        },
      ]);
      return closed;
    });
  }

  /**
   * The facts among `factIds` superseded at Gold (by a promotion rule or a reviewer), through
   * Silver lineage; one SQL statement. Every Gold read of facts (GoldEntity.facts, about,
   * preferences, relatedContext) drops those: `withoutSupersededAtGold` (gold-claims.ts).
   */
  supersededAmong(factIds: readonly string[]): Promise<GoldSupersession[]> {
    return this.repo.supersededAmong(factIds);
  }
}

function alreadyDecided(item: ReviewItemRow): GoldException {
  return new GoldException(
    GoldExceptionCode.ALREADY_DECIDED,
    `review item ${item.id} is ${item.status} already (${item.decision ?? 'no decision'} by ${item.decidedBy ?? 'unknown'} at ${item.decidedAt?.toISOString() ?? '?'}); an item is decided once`,
  );
}
