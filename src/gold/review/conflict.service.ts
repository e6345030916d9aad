import { randomUUID } from 'node:crypto';
import { Sql } from '../../platform/postgres/sql';
import { ConflictSettings, decideConflict, findConflicts, hiddenAtGold } from './conflict-rules';
import { ClaimDecisionWrite, ReviewItemWrite, ReviewRepository } from './review.repository';

export interface ConflictPassResult {
  /** Conflicts found among current facts (decided before or not). */
  found: number;
  /** Decided by a rule in this run. */
  decided: number;
  /** Sent to the review queue in this run. */
  queued: number;
}

export interface ConflictPassHooks {
  fence?: (tx: Sql) => Promise<void>;
  createdBy?: string | null;
}

/**
 * The conflict pass of a promotion run (docs/gold-review.md), after the entities are written:
 * reads the current Silver facts of each Gold entity's members less those superseded at Gold
 * already, finds conflicts (conflict-rules.ts), skips those decided or queued before (by key: the lineage roots of their
 * facts), and writes the rest in one fenced transaction per `batchSize` conflicts: a decision row
 * for each, plus a review item for each it does not decide. Writes no Silver row.
 */
export class ConflictService {
  constructor(
    private readonly sql: Sql,
    private readonly repo: ReviewRepository,
    private readonly settings: ConflictSettings & { batchSize: number },
  ) {}

  async run(namespace: string, runId: string, hooks: ConflictPassHooks = {}): Promise<ConflictPassResult> {
    const claims = await this.repo.claims(namespace);
    // Current at Gold: a fact a decision superseded (a rule's or a reviewer's) takes part in no new conflict.
    const superseded = new Map((await this.repo.supersededAmong(claims.map((c) => c.id))).map((s) => [s.factId, s]));
    const conflicts = findConflicts(
      claims.filter((c) => !hiddenAtGold(superseded.get(c.id), null)),
      this.settings,
    );
    const known = await this.repo.decidedKeys(namespace);
    const fresh = conflicts.filter((c) => !known.has(c.key));
    let decided = 0;
    let queued = 0;
    const size = Math.max(1, this.settings.batchSize);
    for (let i = 0; i < fresh.length; i += size) {
      const items: ReviewItemWrite[] = [];
      const decisions: ClaimDecisionWrite[] = [];
      for (const c of fresh.slice(i, i + size)) {
        const v = decideConflict(c, this.settings);
        const factIds = c.facts.map((f) => f.id);
        const base = { id: randomUUID(), conflictKey: c.key, source: 'promotion' as const, goldEntityId: c.goldEntityId, kind: c.kind, factIds, runId };
        if (v.outcome === 'supersede') {
          decided += 1;
          decisions.push({
            ...base,
            rule: v.rule,
            outcome: 'supersede',
            winnerIds: v.winnerIds,
            loserIds: v.loserIds,
            supersededFrom: v.supersededFrom,
            scores: v.scores,
            reason: v.reason,
            reviewItemId: null,
            decidedBy: hooks.createdBy ?? null,
          });
          continue;
        }
        queued += 1;
        const itemId = randomUUID();
        items.push({
          id: itemId,
          kind: c.kind,
          conflictKey: c.key,
          goldEntityId: c.goldEntityId,
          silverEntityIds: [...new Set(c.facts.map((f) => f.silverEntityId))].sort(),
          factIds,
          rule: v.rule,
          reason: v.reason,
          runId,
        });
        decisions.push({
          ...base,
          rule: v.rule,
          outcome: 'queue',
          winnerIds: [],
          loserIds: [],
          supersededFrom: null,
          scores: v.scores,
          reason: v.reason,
          reviewItemId: itemId,
          decidedBy: hooks.createdBy ?? null,
        });
      }
      await this.sql.transaction(async (tx) => {
        await hooks.fence?.(tx);
        await this.repo.insertItems(tx, namespace, items);
        await this.repo.insertDecisions(tx, namespace, decisions);
      });
    }
    return { found: conflicts.length, decided, queued };
  }
}
