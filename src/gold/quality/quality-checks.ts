import type { GraphDefects } from '../../graph/cypher/quality-reads';
import type { GraphConsistency } from '../../graph/graph-rebuild.service';
import type { ConsistencyAnswer } from './graph-consistency-answers';
import type {
  CompletenessMeasure,
  ConfidenceByType,
  Defects,
  DuplicatePair,
  EndpointMeasure,
  LagMeasure,
  LowConfidenceEntities,
  OutboxMeasure,
  OverlayMeasure,
  ProvenanceMeasure,
  TemporalMeasure,
} from './quality.repository';
import { QualityCheckName, QualityCheckResult, QualityThresholds } from './quality.types';
import type { ChainVerification } from '../portability/chain-verify.repository';

/**
 * One small pure function per check (docs/quality.md): what was measured in, a report line out.
 * The measuring (SQL in quality.repository.ts, Cypher in graph/cypher/quality-reads.ts) is the
 * service's; these only judge, so each rule is tested without a database (quality-checks.spec.ts).
 */

const result = (name: QualityCheckName, value: number, threshold: number, detail: string): QualityCheckResult => ({
  name,
  value,
  threshold,
  ok: value <= threshold,
  detail,
});

const round = (x: number, digits = 3): number => Math.round(x * 10 ** digits) / 10 ** digits;

/** `3 facts (a, b, …)`: a count and the first keys, or nothing when the count is 0. */
const part = (what: string, d: Defects | GraphDefects): string | null =>
  d.count === 0 ? null : `${d.count} ${what}${d.sample.length > 0 ? ` (${d.sample.join(', ')}${d.count > d.sample.length ? ', …' : ''})` : ''}`;

const describe = (parts: Array<string | null>, clean: string): string => {
  const found = parts.filter((p): p is string => p !== null);
  return found.length === 0 ? clean : found.join('; ');
};

export function completeness(m: CompletenessMeasure): QualityCheckResult {
  return result(
    'completeness',
    m.factsWithoutSource.count + m.entitiesWithoutSource.count,
    0,
    describe(
      [part('live facts without a source', m.factsWithoutSource), part('live entities without a mention, fact or relationship', m.entitiesWithoutSource)],
      'every live fact has a source and every live entity a mention, fact or relationship',
    ),
  );
}

export function provenance(m: ProvenanceMeasure): QualityCheckResult {
  return result(
    'provenance',
    m.silver.count + m.gold.count,
    0,
    describe(
      [part('Silver rows citing an event that is not in Bronze', m.silver), part('Gold rows without live Silver members', m.gold)],
      'every live Silver source is a Bronze event of the namespace and every Gold row has its Silver members',
    ),
  );
}

export function consistencyEndpoints(m: EndpointMeasure): QualityCheckResult {
  return result(
    'consistency_endpoints',
    m.silver.count + m.gold.count,
    0,
    describe(
      [
        part('live Silver relationships or facts pointing at a retired entity', m.silver),
        part('live Gold relationships pointing at a retired Gold entity', m.gold),
      ],
      'every live relationship and fact points at live entities',
    ),
  );
}

/** How fresh a `consistency_graph` answer is (graph-consistency-answers.ts). */
export type ConsistencyFreshness = Pick<ConsistencyAnswer, 'checkedAt' | 'ageSeconds' | 'computedNow' | 'changedSince' | 'maxAgeSeconds'>;

/** `as of <time> (…)`: when the compared state was read, and whether the graph changed since. */
export function freshnessNote(f: ConsistencyFreshness): string {
  const at = f.checkedAt.toISOString();
  if (f.computedNow) return `as of ${at} (compared for this report)`;
  const age = Math.max(0, Math.round(f.ageSeconds));
  return `as of ${at} (${age} s ago, stored answer; recomputed once older than ${f.maxAgeSeconds} s${
    f.changedSince ? '; the graph changed since, a worker rechecks it when the outbox is drained' : ''
  })`;
}

export function consistencyGraph(c: GraphConsistency, fresh?: ConsistencyFreshness): QualityCheckResult {
  const differing = (Object.keys(c.postgres) as Array<keyof typeof c.postgres>).filter((k) => c.postgres[k] !== c.neo4j[k]);
  const value = c.ok ? 0 : c.missingInNeo4j.length + c.extraInNeo4j.length;
  const counts = differing.map((k) => `${k} ${c.postgres[k]} in Postgres, ${c.neo4j[k]} in Neo4j`);
  const detail = c.ok
    ? 'Neo4j holds exactly the Postgres rows (graphConsistency)'
    : describe(
        [
          counts.length > 0 ? counts.join(', ') : null,
          c.missingInNeo4j.length > 0 ? `missing in Neo4j: ${c.missingInNeo4j.slice(0, 10).join(', ')}` : null,
          c.extraInNeo4j.length > 0 ? `extra in Neo4j: ${c.extraInNeo4j.slice(0, 10).join(', ')}` : null,
        ],
        '',
      );
  return result('consistency_graph', value, 0, fresh ? `${detail}; ${freshnessNote(fresh)}` : detail);
}

export function uniqueness(m: { count: number; pairs: DuplicatePair[] }, t: QualityThresholds): QualityCheckResult {
  const pairs = m.pairs.map((p) => `${p.type} "${p.nameA}" ~ "${p.nameB}" ${round(p.similarity, 2)} (${p.a}, ${p.b})`);
  return result(
    'uniqueness',
    m.count,
    0,
    m.count === 0
      ? `no two live entities of one type are more similar than ${t.duplicateSimilarity} unless Gold merged or a person separated them`
      : `${m.count} pairs above ${t.duplicateSimilarity}: ${pairs.join('; ')}${m.count > pairs.length ? '; …' : ''}`,
  );
}

/**
 * The worst share of low-confidence current facts among the fact types with at least
 * `confidenceMinSample` current facts; a smaller type is listed in the detail but not judged (one
 * weak fact in a namespace of a few messages is not a distribution).
 */
export function confidenceDistribution(rows: ConfidenceByType[], t: QualityThresholds): QualityCheckResult {
  const shares = rows.map((r) => ({ ...r, share: r.total === 0 ? 0 : r.low / r.total, judged: r.total >= t.confidenceMinSample }));
  const worst = shares.reduce((max, r) => (r.judged ? Math.max(max, r.share) : max), 0);
  const total = rows.reduce((n, r) => n + r.total, 0);
  const unjudged = shares.filter((r) => !r.judged).length;
  return result(
    'confidence_distribution',
    round(worst),
    t.maxLowConfidenceShare,
    total === 0
      ? 'no current facts'
      : `share below ${t.minConfidence} per fact type: ${shares
          .map((r) => `${r.type} ${round(r.share)} (${r.low}/${r.total}${r.judged ? '' : ', not judged'})`)
          .join(', ')}${unjudged > 0 ? `; types with fewer than ${t.confidenceMinSample} current facts are not judged` : ''}`,
  );
}

export function lowConfidenceProliferation(rows: LowConfidenceEntities[], t: QualityThresholds): QualityCheckResult {
  const worst = rows.reduce((max, r) => Math.max(max, r.count), 0);
  return result(
    'low_confidence_proliferation',
    worst,
    t.maxLowConfidenceEntities,
    rows.length === 0
      ? `no live entity whose best fact is below ${t.lowConfidenceFloor}`
      : `live entities whose best fact is below ${t.lowConfidenceFloor}, per type: ${rows.map((r) => `${r.type} ${r.count}`).join(', ')}`,
  );
}

export function timelinessDerivation(m: LagMeasure, t: QualityThresholds): QualityCheckResult {
  return result(
    'timeliness_derivation',
    round(m.p95Seconds, 1),
    t.maxLagSeconds,
    m.events === 0
      ? `no event derived in the last ${t.lagWindowHours} h and none pending`
      : `ingest → derivation lag over ${m.events} events (derived in the last ${t.lagWindowHours} h, or pending): p50 ${round(m.p50Seconds, 1)} s, p95 ${round(m.p95Seconds, 1)} s`,
  );
}

export function timelinessOutbox(m: OutboxMeasure, t: QualityThresholds): QualityCheckResult {
  return result(
    'timeliness_outbox',
    round(m.oldestSeconds, 1),
    t.maxLagSeconds,
    m.pending === 0
      ? 'the outbox is drained: Neo4j is up to date'
      : `${m.pending} outbox rows not projected yet, the oldest ${round(m.oldestSeconds, 1)} s old`,
  );
}

export function deadLetters(d: Defects, t: QualityThresholds): QualityCheckResult {
  return result('dead_letters', d.count, t.maxDeadLetters, describe([part('open dead letters', d)], 'no open dead letter'));
}

export function orphanGoldNodes(d: GraphDefects): QualityCheckResult {
  return result('orphan_gold_nodes', d.count, 0, describe([part('GoldEntity nodes without any edge', d)], 'every GoldEntity node has an edge'));
}

export function duplicateEdges(silver: Defects, graph: GraphDefects): QualityCheckResult {
  return result(
    'duplicate_edges',
    silver.count + graph.count,
    0,
    describe(
      [
        part('extra live Silver relationships (same type, source and target)', silver),
        part('extra live edges in Neo4j (same kind and type between the same nodes)', graph),
      ],
      'no two live edges of one type join the same two entities',
    ),
  );
}

export function temporalConsistency(m: TemporalMeasure, graph: GraphDefects): QualityCheckResult {
  return result(
    'temporal_consistency',
    m.backwardRelationships.count + m.supersededStillValid.count + graph.count,
    0,
    describe(
      [
        part('live Silver relationships with valid_to before valid_from', m.backwardRelationships),
        part('superseded facts still valid (superseded_by set, valid_to unset)', m.supersededStillValid),
        part('graph edges with validTo before validFrom', graph),
      ],
      'valid_to ≥ valid_from everywhere, and every superseded fact has ended',
    ),
  );
}

export function orphanedOverlays(m: OverlayMeasure): QualityCheckResult {
  return result(
    'orphaned_overlays',
    m.orphaned.count + m.onRetiredFacts.count,
    0,
    describe(
      [part('overlays ORPHANED by a rebuild', m.orphaned), part('overlays in force on a retired fact (not re-anchored yet)', m.onRetiredFacts)],
      'every overlay in force sits on a live fact',
    ),
  );
}

/**
 * The hash chain as the latest scheduled verify found it (docs/operations.md "Scheduled verify"):
 * 1 when it found a broken link or could not verify, 0 when intact or not verified yet.
 */
export function chainIntact(v: ChainVerification | null): QualityCheckResult {
  if (!v)
    return result(
      'chain_intact',
      0,
      0,
      'not verified yet: the worker verifies each namespace every CHAIN_VERIFY_EVERY_SECONDS (medallion verify --namespace does it at once)',
    );
  const at = v.finishedAt.toISOString();
  switch (v.result) {
    case 'intact':
      return result(
        'chain_intact',
        0,
        0,
        `chain intact at ${at}: ${v.links} link(s)${v.retained > 0 ? `, ${v.retained} of them events dropped by Bronze retention (signed checkpoints)` : ''}${
          v.unsealed > 0 ? `; ${v.unsealed} record(s) were not sealed yet` : ''
        }`,
      );
    case 'broken': {
      const b = v.broken;
      return result('chain_intact', 1, 0, `chain BROKEN (verified at ${at}) at position ${b?.position}: ${b?.kind} ${b?.id}: ${b?.reason}`);
    }
    case 'error':
      return result('chain_intact', 1, 0, `the scheduled verify could not run at ${at}: ${v.error}`);
  }
}
