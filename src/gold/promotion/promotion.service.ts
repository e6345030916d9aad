import { randomUUID } from 'node:crypto';
import { Sql } from '../../platform/postgres/sql';
import { Embedder } from '../../silver/model-ports';
import { resolveEntities, ResolverSettings } from './entity-resolver';
import { Assignment, EntityJudge, SilverCandidate } from './promotion.types';
import {
  GoldEntityRow,
  GoldEntityWrite,
  GoldRelationshipRow,
  GoldRelationshipWrite,
  PromotionLogEntry,
  PromotionRepository,
  SilverRelationshipRow,
} from './promotion.repository';
import { GoldContent, goldContent } from './resolution-rules';
import { ConflictService } from '../review/conflict.service';

export interface PromotionSettings extends ResolverSettings {
  /** A new Gold entity or relationship needs at least this confidence (0.7)… */
  minConfidence: number;
  /** …and this many distinct source events (2). */
  minSources: number;
  /** Gold entities (or relationships) per write transaction, Neo4j write and progress step. */
  batchSize: number;
  /** The most similar names the trigram step keeps per unassigned entity (25); null: every one above `candidateTrigram`. */
  candidatesPerEntity: number | null;
  /** Candidate-pair queries at once, each on its own connection (2). */
  pairConcurrency: number;
}

export interface PromotionHooks {
  /** Called first in every write transaction (the job's fence: a worker that lost its lease writes nothing). */
  fence?: (tx: Sql) => Promise<void>;
  progress?: (p: { done: number; total: number; message: string }, tx?: Sql) => Promise<void>;
  runId?: string;
  createdBy?: string | null;
}

export interface PromotionResult {
  runId: string;
  candidates: number;
  created: number;
  updated: number;
  retired: number;
  relationshipsCreated: number;
  relationshipsUpdated: number;
  batches: number;
  /** New clusters below the confidence or corroboration threshold (reconsidered next run). */
  deferred: number;
  /** Conflicts among Gold entities' facts decided by a rule in this run (docs/gold-review.md). */
  conflictsDecided: number;
  /** Conflicts sent to the review queue in this run. */
  reviewQueued: number;
  /** Candidate pairs the resolver was given. */
  candidatePairs: number;
  /** Where the run's time went (ms): reading the candidates, the pairs queries, resolving, writing the batches, the conflict pass. */
  timings: { candidatesMs: number; pairsMs: number; resolveMs: number; writeMs: number; conflictsMs: number };
}

interface EntityPlan {
  write: GoldEntityWrite;
  isNew: boolean;
  newMembers: Array<{ silverId: string; step: string }>;
  log: PromotionLogEntry[];
}

const sameNumber = (a: number, b: number) => Math.fround(a) === Math.fround(b);
const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Promotes a namespace's Silver entities and relationships to Gold (docs/gold.md): resolve,
 * gate new clusters on confidence and corroboration, then write in batches, each one Postgres
 * transaction with its log rows and the outbox rows the Gold projector writes to Neo4j in one
 * transaction. Only what changed is written, so a second run writes nothing.
 */
export class PromotionService {
  constructor(
    private readonly sql: Sql,
    private readonly repo: PromotionRepository,
    private readonly settings: PromotionSettings,
    private readonly judge: EntityJudge,
    private readonly embedder: () => Promise<Embedder | null>,
    /** The conflict pass after the entities are written (docs/gold-review.md); none: no conflict rules. */
    private readonly conflicts: ConflictService | null = null,
  ) {}

  async promote(namespace: string, hooks: PromotionHooks = {}): Promise<PromotionResult> {
    const runId = hooks.runId ?? randomUUID();
    let t = performance.now();
    const lap = (): number => {
      const now = performance.now();
      const ms = Math.round(now - t);
      t = now;
      return ms;
    };
    const entities = await this.repo.candidates(namespace);
    const candidatesMs = lap();
    const pairs = await this.repo.pairs(namespace, {
      threshold: this.settings.candidateTrigram,
      perEntity: this.settings.candidatesPerEntity,
      concurrency: this.settings.pairConcurrency,
      personType: this.settings.personType,
      onChunk: async (done, total) => hooks.progress?.({ done, total, message: `comparing names: ${done} of ${total} unassigned entities` }),
    });
    const pairsMs = lap();
    const separations = await this.repo.separations(namespace);
    const existing = new Map((await this.repo.goldEntities(namespace)).map((g) => [g.id, g]));
    const resolution = await resolveEntities({ entities, pairs, separations }, this.settings, this.judge, await this.embedder());
    const resolveMs = lap();
    const byId = new Map(entities.map((e) => [e.id, e]));
    const assignedIn = new Map<string, Assignment[]>();
    for (const a of resolution.assignments) assignedIn.set(a.cluster, [...(assignedIn.get(a.cluster) ?? []), a]);

    const plans: EntityPlan[] = [];
    let deferred = 0;
    const goldOfSilver = new Map<string, string>();
    // Existing Gold entities first (stable order), then new clusters in the order they formed.
    const order = [...[...existing.keys()].sort(), ...[...resolution.clusters.keys()].filter((k) => k.startsWith('new:'))];
    for (const cluster of order) {
      const members = (resolution.clusters.get(cluster) ?? []).map((id) => byId.get(id)).filter((e): e is SilverCandidate => !!e);
      const live = members.filter((m) => !m.retired);
      const fresh = assignedIn.get(cluster) ?? [];
      const old = existing.get(cluster);
      const judged = resolution.judgedTypes.get(cluster) ?? null;
      if (!old) {
        const content = goldContent(live, this.settings.fallbackType, judged);
        if (content.confidence < this.settings.minConfidence || content.sourceCount < this.settings.minSources) {
          deferred += 1;
          continue;
        }
        const id = randomUUID();
        for (const m of live) goldOfSilver.set(m.id, id);
        plans.push({
          write: { id, ...content, retired: false, retiredReason: null },
          isNew: true,
          newMembers: fresh.map((a) => ({ silverId: a.silverId, step: a.step })),
          log: fresh.flatMap((a) => logOf(a, id, content)),
        });
        continue;
      }
      for (const m of live) goldOfSilver.set(m.id, old.id);
      const plan = this.refresh(old, live, fresh, judged);
      if (plan) plans.push(plan);
    }

    const relPlans = this.planRelationships(
      await this.repo.silverRelationships(namespace),
      goldOfSilver,
      await this.repo.goldRelationships(namespace),
      existing,
      plans,
    );
    const total = plans.length + relPlans.length;
    let done = 0;
    let batches = 0;
    const size = Math.max(1, this.settings.batchSize);
    for (let i = 0; i < plans.length; i += size) {
      const batch = plans.slice(i, i + size);
      await this.writeBatch(namespace, runId, hooks, batch, []);
      done += batch.length;
      batches += 1;
      await hooks.progress?.({ done, total, message: `entities: ${done} of ${plans.length}` });
    }
    for (let i = 0; i < relPlans.length; i += size) {
      const batch = relPlans.slice(i, i + size);
      await this.writeBatch(namespace, runId, hooks, [], batch);
      done += batch.length;
      batches += 1;
      await hooks.progress?.({ done, total, message: `relationships: ${done - plans.length} of ${relPlans.length}` });
    }
    const writeMs = lap();
    const claims = (await this.conflicts?.run(namespace, runId, { fence: hooks.fence, createdBy: hooks.createdBy ?? null })) ?? { decided: 0, queued: 0 };
    if (claims.decided + claims.queued > 0)
      await hooks.progress?.({ done, total, message: `conflicts: ${claims.decided} decided, ${claims.queued} queued for review` });
    const conflictsMs = lap();
    return {
      runId,
      candidates: resolution.assignments.length,
      created: plans.filter((p) => p.isNew).length,
      updated: plans.filter((p) => !p.isNew && !p.write.retired).length,
      retired: plans.filter((p) => p.write.retired).length,
      relationshipsCreated: relPlans.filter((p) => p.isNew).length,
      relationshipsUpdated: relPlans.filter((p) => !p.isNew).length,
      batches,
      deferred,
      conflictsDecided: claims.decided,
      reviewQueued: claims.queued,
      candidatePairs: pairs.length,
      timings: { candidatesMs, pairsMs, resolveMs, writeMs, conflictsMs },
    };
  }

  /** The update of an existing Gold entity, or null when nothing about it changed. */
  private refresh(old: GoldEntityRow, live: SilverCandidate[], fresh: Assignment[], judged: string | null): EntityPlan | null {
    const newMembers = fresh.map((a) => ({ silverId: a.silverId, step: a.step }));
    if (live.length === 0) {
      if (old.retiredAt) return null;
      const write = { ...pick(old), retired: true, retiredReason: 'every Silver entity it was merged from is retired' };
      return { write, isNew: false, newMembers, log: [{ ...baseLog(old.id), action: 'retire', step: 'refresh', reason: write.retiredReason }] };
    }
    // Pruned by the lifecycle (docs/lifecycle.md): stays retired until restorePruned, a restored fact, or a new member.
    if (old.retiredReason === 'pruned' && newMembers.length === 0) return null;
    // The type stays unless a judge changed it or no live member carries it any more.
    const keepType = live.some((m) => m.type === old.type) ? old.type : null;
    const content = goldContent(live, this.settings.fallbackType, judged ?? keepType);
    const changed =
      old.retiredAt !== null ||
      newMembers.length > 0 ||
      content.type !== old.type ||
      content.name !== old.name ||
      !sameList(content.aliases, old.aliases) ||
      !sameNumber(content.confidence, old.confidence) ||
      content.sourceCount !== old.sourceCount;
    if (!changed) return null;
    const log =
      fresh.length > 0
        ? fresh.flatMap((a) => logOf(a, old.id, content))
        : [{ ...baseLog(old.id), action: 'update', step: 'refresh', reason: 'its Silver members changed' }];
    return { write: { id: old.id, ...content, retired: false, retiredReason: null }, isNew: false, newMembers, log };
  }

  private planRelationships(
    silver: SilverRelationshipRow[],
    goldOfSilver: Map<string, string>,
    existing: GoldRelationshipRow[],
    goldEntities: Map<string, GoldEntityRow>,
    entityPlans: EntityPlan[],
  ): Array<{ write: GoldRelationshipWrite; isNew: boolean; log: PromotionLogEntry[] }> {
    const retiredGold = new Set([
      ...entityPlans.filter((p) => p.write.retired).map((p) => p.write.id),
      ...[...goldEntities.values()].filter((g) => g.retiredAt).map((g) => g.id),
    ]);
    for (const p of entityPlans) if (!p.write.retired) retiredGold.delete(p.write.id);
    const groups = new Map<string, SilverRelationshipRow[]>();
    for (const r of silver) {
      const s = goldOfSilver.get(r.sourceEntityId);
      const t = goldOfSilver.get(r.targetEntityId);
      if (!s || !t || s === t) continue;
      const key = `${r.type}|${s}|${t}`;
      groups.set(key, [...(groups.get(key) ?? []), r]);
    }
    const live = new Map(existing.filter((r) => r.retiredAt === null).map((r) => [`${r.type}|${r.sourceGoldId}|${r.targetGoldId}`, r]));
    const out: Array<{ write: GoldRelationshipWrite; isNew: boolean; log: PromotionLogEntry[] }> = [];
    for (const [key, rows] of [...groups.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
      const [type, s, t] = key.split('|') as [string, string, string];
      const events = new Set(rows.flatMap((r) => r.eventIds));
      const confidence = Math.max(...rows.map((r) => r.confidence));
      const validFrom = new Date(Math.min(...rows.map((r) => r.validFrom.getTime())));
      const validTo = rows.some((r) => r.validTo === null) ? null : new Date(Math.max(...rows.map((r) => (r.validTo as Date).getTime())));
      const silverIds = rows.map((r) => r.id).sort();
      const old = live.get(key);
      live.delete(key);
      const content = { type, sourceGoldId: s, targetGoldId: t, confidence, validFrom, validTo, sourceCount: events.size, silverIds, retired: false };
      if (!old) {
        if (confidence < this.settings.minConfidence || events.size < this.settings.minSources) continue;
        const id = randomUUID();
        out.push({
          write: { id, ...content },
          isNew: true,
          log: [
            {
              ...baseLog(null),
              goldRelationshipId: id,
              action: 'create',
              step: 'relationship',
              silverIds,
              scores: { confidence, sources: events.size },
              reason: `${rows.length} Silver relationships, ${events.size} source events`,
            },
          ],
        });
        continue;
      }
      const changed =
        !sameNumber(old.confidence, confidence) ||
        old.validFrom.getTime() !== validFrom.getTime() ||
        (old.validTo?.getTime() ?? null) !== (validTo?.getTime() ?? null) ||
        old.sourceCount !== events.size ||
        !sameList(old.silverIds, silverIds);
      if (changed)
        out.push({
          write: { id: old.id, ...content },
          isNew: false,
          log: [
            {
              ...baseLog(null),
              goldRelationshipId: old.id,
              action: 'update',
              step: 'relationship',
              silverIds,
              scores: { confidence, sources: events.size },
              reason: 'its Silver relationships changed',
            },
          ],
        });
    }
    // Live Gold relationships nothing backs any more (or between retired entities): retired.
    for (const old of live.values()) {
      out.push({
        write: {
          id: old.id,
          type: old.type,
          sourceGoldId: old.sourceGoldId,
          targetGoldId: old.targetGoldId,
          confidence: old.confidence,
          validFrom: old.validFrom,
          validTo: old.validTo,
          sourceCount: old.sourceCount,
          silverIds: old.silverIds,
          retired: true,
        },
        isNew: false,
        log: [
          {
            ...baseLog(null),
            goldRelationshipId: old.id,
            action: 'retire',
            step: 'relationship',
            silverIds: old.silverIds,
            reason: retiredGold.has(old.sourceGoldId) || retiredGold.has(old.targetGoldId) ? 'an end was retired' : 'no live Silver relationship backs it',
          },
        ],
      });
    }
    return out;
  }

  private async writeBatch(
    namespace: string,
    runId: string,
    hooks: PromotionHooks,
    entities: EntityPlan[],
    relationships: Array<{ write: GoldRelationshipWrite; isNew: boolean; log: PromotionLogEntry[] }>,
  ): Promise<void> {
    await this.sql.transaction(async (tx) => {
      await hooks.fence?.(tx);
      await this.repo.insertEntities(
        tx,
        namespace,
        entities.filter((p) => p.isNew).map((p) => p.write),
      );
      await this.repo.updateEntities(
        tx,
        entities.filter((p) => !p.isNew).map((p) => p.write),
      );
      await this.repo.addMembers(
        tx,
        namespace,
        entities.flatMap((p) => p.newMembers.map((m) => ({ goldId: p.write.id, ...m }))),
      );
      await this.repo.insertRelationships(
        tx,
        namespace,
        relationships.filter((p) => p.isNew).map((p) => p.write),
      );
      await this.repo.updateRelationships(
        tx,
        relationships.filter((p) => !p.isNew).map((p) => p.write),
      );
      await this.repo.log(tx, namespace, runId, [...entities.flatMap((p) => p.log), ...relationships.flatMap((p) => p.log)], hooks.createdBy ?? null);
      await this.repo.outbox(
        tx,
        namespace,
        randomUUID(),
        entities.map((p) => p.write.id),
        relationships.map((p) => p.write.id),
      );
    });
  }
}

function pick(g: GoldEntityRow): Omit<GoldEntityWrite, 'retired' | 'retiredReason'> {
  return { id: g.id, type: g.type, name: g.name, nameKey: g.nameKey, aliases: g.aliases, confidence: g.confidence, sourceCount: g.sourceCount };
}

const baseLog = (goldEntityId: string | null): PromotionLogEntry => ({
  action: '',
  step: '',
  goldEntityId,
  goldRelationshipId: null,
  silverIds: [],
  scores: {},
  reason: '',
  judgeModel: null,
  promptVersion: null,
});

/** The log rows of one placement: the merge or creation, and every pair the judge kept apart. */
function logOf(a: Assignment, goldId: string, content: GoldContent): PromotionLogEntry[] {
  const main: PromotionLogEntry = {
    ...baseLog(goldId),
    action: a.step === 'new' ? 'create' : 'merge',
    step: a.step,
    silverIds: a.partnerId ? [a.silverId, a.partnerId] : [a.silverId],
    scores: { ...a.scores, confidence: content.confidence, sources: content.sourceCount },
    reason: a.reason,
    judgeModel: a.judgeModel,
    promptVersion: a.promptVersion,
  };
  const apart = a.rejected.map((r) => ({
    ...baseLog(goldId),
    action: 'keep_apart',
    step: 'judge',
    silverIds: [a.silverId, r.partnerId],
    scores: { ...r.scores },
    reason: r.reason,
    judgeModel: a.judgeModel,
    promptVersion: a.promptVersion,
  }));
  return [main, ...apart];
}
