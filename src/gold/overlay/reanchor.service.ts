import { Sql } from '../../platform/postgres/sql';
import { FactRepository } from '../../silver/fact.repository';
import { LineageRepository } from '../../silver/lineage.repository';
import { OverlayRepository, reprojectTarget } from './overlay.repository';
import { OverlayRecord } from './overlay.types';
import { selectorAt, textHash } from './quote-selector';
import { reanchor, ReanchorThresholds, verdict } from './reanchor';

/** What re-anchoring did to a namespace's overlays after a rebuild. */
export interface ReanchorReport {
  reanchored: number;
  /** Of `reanchored`: between the review and accept thresholds. */
  forReview: number;
  orphaned: number;
  /** The confidence of every REANCHORED placement, ascending. */
  confidences: number[];
}

const REBUILD = 'rebuild';

/**
 * After a Silver rebuild: every live overlay on a fact the rebuild retired follows the fact's
 * lineage (silver.fact_lineage, through any number of rebuilds) to the facts it was re-derived
 * as, and is re-anchored on the best of their texts (reanchor.ts). Each move is a new version
 * (changed_by "rebuild"): REANCHORED with its confidence, flagged for review between the
 * thresholds, or ORPHANED (kept on its old fact, or the best successor, and listed for review).
 * Idempotent: an overlay already on a live fact is not touched again.
 */
export class ReanchorService {
  constructor(
    private readonly sql: Sql,
    private readonly overlays: OverlayRepository,
    private readonly facts: FactRepository,
    private readonly lineage: LineageRepository,
    private readonly thresholds: ReanchorThresholds,
  ) {}

  async reanchorNamespace(namespace: string, jobId: string | null): Promise<ReanchorReport> {
    const report: ReanchorReport = { reanchored: 0, forReview: 0, orphaned: 0, confidences: [] };
    const pending = await this.overlays.onRetiredFacts(namespace);
    for (const o of pending) {
      const successors = await this.lineage.latestOf(o.factId as string);
      const candidates = (await this.facts.factsByIds(successors)).filter((f) => f.retiredAt === null && f.namespace === namespace);
      let best: { factId: string; text: string; start: number; end: number; confidence: number } | null = null;
      for (const f of candidates) {
        const m = reanchor(o.selector, f.statement);
        if (m && (!best || m.confidence > best.confidence)) best = { factId: f.id, text: f.statement, start: m.start, end: m.end, confidence: m.confidence };
      }
      const v = verdict(best?.confidence ?? null, this.thresholds);
      await this.sql.transaction(async (tx) => {
        const moved = await this.overlays.append(
          tx,
          this.nextVersion(o, v.status === 'REANCHORED' ? best : null, candidates[0]?.id ?? null, v.needsReview, jobId),
        );
        await reprojectTarget(tx, moved);
        if (moved.factId !== o.factId) await reprojectTarget(tx, o);
      });
      if (v.status === 'REANCHORED' && best) {
        report.reanchored += 1;
        if (v.needsReview) report.forReview += 1;
        report.confidences.push(best.confidence);
      } else report.orphaned += 1;
    }
    report.confidences.sort((a, b) => a - b);
    return report;
  }

  private nextVersion(
    o: OverlayRecord,
    placed: { factId: string; text: string; start: number; end: number; confidence: number } | null,
    fallbackFactId: string | null,
    needsReview: boolean,
    jobId: string | null,
  ) {
    const base = { ...o, changedBy: REBUILD, needsReview, jobId };
    if (!placed) return { ...base, factId: fallbackFactId ?? o.factId, status: 'ORPHANED' as const, anchorConfidence: null };
    return {
      ...base,
      factId: placed.factId,
      selector: selectorAt(placed.text, placed.start, placed.end - placed.start),
      textHash: textHash(placed.text),
      status: 'REANCHORED' as const,
      anchorConfidence: placed.confidence,
    };
  }
}

/** "3 re-anchored (1 for review), 1 orphaned; confidence min 0.62, median 0.98, max 1" */
export function describeReport(r: ReanchorReport): string {
  const c = r.confidences;
  const stats = c.length ? `; confidence min ${c[0]}, median ${c[Math.floor(c.length / 2)]}, max ${c[c.length - 1]}` : '';
  return `overlays: ${r.reanchored} re-anchored (${r.forReview} for review), ${r.orphaned} orphaned${stats}`;
}
