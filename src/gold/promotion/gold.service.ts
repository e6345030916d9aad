import { randomUUID } from 'node:crypto';
import { AuthContext } from '../../access/auth-context';
import { Capability } from '../../access/capability';
import { decodeCursor, encodeCursor } from '../../common/cursor';
import { isUuid } from '../../common/ids';
import { requireWithin } from '../../common/input';
import { MAX_JOB_REASON } from '../../common/limits';
import { Sql } from '../../platform/postgres/sql';
import { JobRepository } from '../../platform/jobs/job.repository';
import { JobRow } from '../../platform/jobs/job';
import { GoldException, GoldExceptionCode } from '../gold.exception';
import { GoldEntityRow, GoldRelationshipRow, PromotionRepository } from './promotion.repository';
import { goldContent } from './resolution-rules';
import { FactReader } from '../../silver/fact-reader';
import { matchesText } from '../../access/text-visibility';

export interface GoldEntityFilterInput {
  type: string | null;
  nameContains: string | null;
  includeRetired: boolean;
}

export interface GoldPage {
  edges: Array<{ cursor: string; node: GoldEntityRow }>;
  hasNextPage: boolean;
  endCursor: string | null;
}

/**
 * What callers do with Gold: read it (capability "read" by id, "list" for listings), ask for a
 * promotion (capability "review": promotion is reversible curation, and "admin" implies it), and
 * split a merge (also "review"). Batch reads for the loaders check no grants; the fields do.
 */
export class GoldService {
  constructor(
    private readonly sql: Sql,
    private readonly repo: PromotionRepository,
    private readonly jobs: JobRepository,
    private readonly opts: { maxPageSize: number; fallbackType: string },
    /** Names as callers see them (a name found only in redacted spans is hidden: FactReader.presentResolved). */
    private readonly facts: FactReader,
  ) {}

  visible<T extends { namespace: string }>(auth: AuthContext, row: T | null | undefined): T | null {
    auth.requirePrincipal();
    return row && auth.can(Capability.READ, row.namespace) ? row : null;
  }

  /** Queues a promotion of the namespace (one queued or running per namespace: that one is returned). */
  async requestPromotion(auth: AuthContext, namespace: string, reason: string | null): Promise<JobRow> {
    const principal = auth.require(Capability.REVIEW, namespace);
    const text = requireWithin(reason?.trim() || 'promotion requested', 'reason', MAX_JOB_REASON);
    return (await this.jobs.enqueue({ kind: 'promote', namespace, params: {}, reason: text, createdBy: principal.tokenId })).job;
  }

  async list(auth: AuthContext, namespace: string, filter: GoldEntityFilterInput, first: number | null, after: string | null): Promise<GoldPage> {
    auth.require(Capability.LIST, namespace);
    const size = first ?? 50;
    if (!Number.isInteger(size) || size < 1 || size > this.opts.maxPageSize) {
      throw new GoldException(GoldExceptionCode.INVALID_ARGUMENT, `first must be between 1 and ${this.opts.maxPageSize} (MAX_PAGE_SIZE)`);
    }
    const afterId = after ? decodeCursor(after).id : null;
    const rows = await this.repo.listGoldEntities(namespace, filter, size + 1, afterId);
    const page = rows.slice(0, size);
    const shown = await this.facts.presentResolved(page);
    // nameContains matches the names callers see: a hidden name answers no filter (the page may come out short; endCursor goes on).
    const needle = filter.nameContains;
    const edges = shown
      .filter((g) => !needle || [g.name, ...g.aliases].some((n) => matchesText(n, needle)))
      .map((node) => ({ cursor: encodeCursor({ micros: '0', id: node.id }), node }));
    const last = page.at(-1);
    return { edges, hasNextPage: rows.length > size, endCursor: last ? encodeCursor({ micros: '0', id: last.id }) : null };
  }

  async entitiesByIds(ids: readonly string[]): Promise<GoldEntityRow[]> {
    return this.facts.presentResolved(await this.repo.goldEntitiesByIds(ids.filter(isUuid)));
  }

  relationshipsByIds(ids: readonly string[]): Promise<GoldRelationshipRow[]> {
    return this.repo.goldRelationshipsByIds(ids.filter(isUuid));
  }

  relationshipsOf(goldIds: readonly string[], asOf: Date | null): Promise<GoldRelationshipRow[]> {
    return this.repo.goldRelationshipsOf(goldIds, asOf);
  }

  /**
   * Undoes a merge: the given Silver entities leave the Gold entity and form a new one together;
   * each of them is recorded as apart from each member that stays, so promotion never joins them
   * again. Both entities' versions move on, the split is logged, the graph follows via the outbox.
   */
  async split(auth: AuthContext, goldId: string, silverIds: readonly string[], reason: string): Promise<GoldEntityRow[]> {
    const [g] = await this.repo.goldEntitiesByIds(isUuid(goldId) ? [goldId] : []);
    if (!g || !auth.can(Capability.READ, g.namespace))
      throw new GoldException(GoldExceptionCode.NOT_FOUND, `no Gold entity ${goldId} among the namespaces you may read`);
    const principal = auth.require(Capability.REVIEW, g.namespace);
    if (reason.trim().length < 3)
      throw new GoldException(GoldExceptionCode.INVALID_ARGUMENT, 'reason is required: say why the merge was wrong (it is kept in the promotion log)');
    const moving = [...new Set(silverIds)].sort();
    const notMembers = moving.filter((id) => !g.memberIds.includes(id));
    if (moving.length === 0 || notMembers.length > 0) {
      throw new GoldException(
        GoldExceptionCode.INVALID_ARGUMENT,
        `silverEntityIds must be members of the Gold entity (mergedFrom); not members: ${notMembers.join(', ') || '(none given)'}`,
      );
    }
    const staying = g.memberIds.filter((id) => !moving.includes(id));
    if (staying.length === 0)
      throw new GoldException(GoldExceptionCode.INVALID_ARGUMENT, 'leave at least one member: a split moves some of mergedFrom to a new Gold entity');
    const stats = new Map((await this.repo.candidates(g.namespace)).map((c) => [c.id, c]));
    const of = (ids: string[]) => ids.map((id) => stats.get(id)).filter((c): c is NonNullable<typeof c> => !!c && !c.retired);
    const keep = goldContent(of(staying), this.opts.fallbackType, null);
    const moved = goldContent(of(moving), this.opts.fallbackType, null);
    const newId = randomUUID();
    const runId = randomUUID();
    await this.sql.transaction(async (tx) => {
      await this.repo.removeMembers(tx, g.id, moving, `split: ${reason}`);
      await this.repo.updateEntities(tx, [{ id: g.id, ...keep, retired: false, retiredReason: null }]);
      await this.repo.insertEntities(tx, g.namespace, [{ id: newId, ...moved, retired: false, retiredReason: null }]);
      await this.repo.addMembers(
        tx,
        g.namespace,
        moving.map((silverId) => ({ goldId: newId, silverId, step: 'split' })),
      );
      await this.repo.addSeparations(
        tx,
        g.namespace,
        moving.flatMap((m) => staying.map((s) => [m, s] as [string, string])),
        principal.tokenId,
      );
      const entry = { goldRelationshipId: null, scores: {}, judgeModel: null, promptVersion: null, step: 'split', reason };
      await this.repo.log(
        tx,
        g.namespace,
        runId,
        [
          { ...entry, action: 'split', goldEntityId: g.id, silverIds: moving },
          { ...entry, action: 'create', goldEntityId: newId, silverIds: moving },
        ],
        principal.tokenId,
      );
      await this.repo.outbox(tx, g.namespace, randomUUID(), [g.id, newId], []);
    });
    return this.facts.presentResolved(await this.repo.goldEntitiesByIds([g.id, newId]));
  }
}
