import neo4j, { Driver } from 'neo4j-driver';
import { AuthContext } from '../../access/auth-context';
import { Capability } from '../../access/capability';
import { backwardGraphEdges, duplicateGraphEdges, GraphDefects, orphanGoldNodes } from '../../graph/cypher/quality-reads';
import { CypherRunner } from '../../graph/cypher/cypher-runner';
import * as checks from './quality-checks';
import { QualityRepository } from './quality.repository';
import { GoldException, GoldExceptionCode } from '../gold.exception';
import { QUALITY_CHECKS, QualityCheckName, QualityCheckResult, QualityReportResult, QualityThresholds } from './quality.types';
import { GraphConsistencyAnswers } from './graph-consistency-answers';
import { ChainVerificationRepository } from '../portability/chain-verify.repository';

/** One check: measure (SQL and/or Cypher), then judge with its function in quality-checks.ts. */
export type QualityCheckRunner = (namespace: string) => Promise<QualityCheckResult>;

/**
 * The quality report of a namespace (docs/quality.md): Silver's dimensions (completeness,
 * provenance, consistency, uniqueness, confidence, timeliness) and Gold's (orphan nodes,
 * duplicate edges, temporal consistency, overlays), each a small check with a threshold.
 */
export class QualityService {
  /** Every check by name, in report order; bench/quality.ts times them one by one. */
  readonly checks: Readonly<Record<QualityCheckName, QualityCheckRunner>>;

  constructor(
    repo: QualityRepository,
    private readonly driver: Driver,
    consistency: GraphConsistencyAnswers,
    thresholds: QualityThresholds,
    /** The scheduled verify's stored results (chain_intact). */
    verifications: Pick<ChainVerificationRepository, 'latest'>,
  ) {
    const t = thresholds;
    const n = t.maxListed;
    this.checks = {
      completeness: async (ns) => checks.completeness(await repo.completeness(ns, n)),
      provenance: async (ns) => checks.provenance(await repo.provenance(ns, n)),
      consistency_endpoints: async (ns) => checks.consistencyEndpoints(await repo.endpoints(ns, n)),
      consistency_graph: async (ns) => {
        const a = await consistency.forReport(ns);
        return checks.consistencyGraph(a.result, a);
      },
      uniqueness: async (ns) => checks.uniqueness(await repo.fuzzyDuplicates(ns, t.duplicateSimilarity, n), t),
      confidence_distribution: async (ns) => checks.confidenceDistribution(await repo.confidenceByType(ns, t.minConfidence), t),
      low_confidence_proliferation: async (ns) => checks.lowConfidenceProliferation(await repo.lowConfidenceEntities(ns, t.lowConfidenceFloor), t),
      timeliness_derivation: async (ns) => checks.timelinessDerivation(await repo.derivationLag(ns, t.lagWindowHours), t),
      timeliness_outbox: async (ns) => checks.timelinessOutbox(await repo.outboxLag(ns), t),
      dead_letters: async (ns) => checks.deadLetters(await repo.deadLetters(ns, n), t),
      orphan_gold_nodes: async (ns) => checks.orphanGoldNodes(await this.readGraph((tx) => orphanGoldNodes(tx, ns, n))),
      duplicate_edges: async (ns) =>
        checks.duplicateEdges(await repo.duplicateRelationships(ns, n), await this.readGraph((tx) => duplicateGraphEdges(tx, ns, n))),
      temporal_consistency: async (ns) => checks.temporalConsistency(await repo.temporal(ns, n), await this.readGraph((tx) => backwardGraphEdges(tx, ns, n))),
      orphaned_overlays: async (ns) => checks.orphanedOverlays(await repo.overlays(ns, n)),
      chain_intact: async (ns) => checks.chainIntact(await verifications.latest(ns)),
    };
  }

  /**
   * The report on behalf of a caller, who needs "admin" on the namespace (docs/quality.md, "Who
   * may read it"); `only`: these checks alone (unknown names are BAD_USER_INPUT), null: all.
   */
  async reportFor(auth: AuthContext, namespace: string, only: readonly string[] | null = null): Promise<QualityReportResult> {
    auth.require(Capability.ADMIN, namespace);
    const unknown = (only ?? []).filter((n) => !(QUALITY_CHECKS as readonly string[]).includes(n));
    if (unknown.length > 0)
      throw new GoldException(
        GoldExceptionCode.INVALID_ARGUMENT,
        `unknown quality check(s) ${unknown.map((n) => JSON.stringify(n)).join(', ')}: the checks are ${QUALITY_CHECKS.join(', ')}`,
      );
    return this.report(namespace, only === null ? QUALITY_CHECKS : QUALITY_CHECKS.filter((n) => only.includes(n)));
  }

  /** The checks (all by default), one after the other, in report order (each is one statement or one Cypher read: no burst on a shared pool). */
  async report(namespace: string, names: readonly QualityCheckName[] = QUALITY_CHECKS): Promise<QualityReportResult> {
    const generatedAt = new Date();
    const results: QualityCheckResult[] = [];
    for (const name of names) results.push(await this.checks[name](namespace));
    return { namespace, ok: results.every((c) => c.ok), generatedAt, checks: results };
  }

  private async readGraph(read: (tx: CypherRunner) => Promise<GraphDefects>): Promise<GraphDefects> {
    const session = this.driver.session({ defaultAccessMode: neo4j.session.READ });
    try {
      return await session.executeRead(read);
    } finally {
      await session.close();
    }
  }
}
