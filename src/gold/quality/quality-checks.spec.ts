import { loadConfig } from '../../common/config';
import * as checks from './quality-checks';
import { formatQualityTable } from './quality.command';
import { DEFAULT_QUALITY_THRESHOLDS as T } from './quality.types';

const none = { count: 0, sample: [] };

describe('quality checks: each judges its measure against its threshold', () => {
  it('the defaults of the QUALITY_* settings are DEFAULT_QUALITY_THRESHOLDS, and each variable is read', () => {
    expect(loadConfig({ DATA_DIR: '/tmp/medallion-quality-spec' }).quality).toEqual(T);
    expect(loadConfig({ DATA_DIR: '/tmp/medallion-quality-spec', QUALITY_DUPLICATE_SIMILARITY: '0.9', QUALITY_MAX_LAG_SECONDS: '60' }).quality).toMatchObject({
      duplicateSimilarity: 0.9,
      maxLagSeconds: 60,
    });
    expect(loadConfig({ DATA_DIR: '/tmp/medallion-quality-spec', QUALITY_CONFIDENCE_MIN_SAMPLE: '5' }).quality.confidenceMinSample).toBe(5);
    expect(() => loadConfig({ DATA_DIR: '/tmp/medallion-quality-spec', QUALITY_CONFIDENCE_MIN_SAMPLE: '0' })).toThrow(/QUALITY_CONFIDENCE_MIN_SAMPLE/);
    expect(() => loadConfig({ DATA_DIR: '/tmp/medallion-quality-spec', QUALITY_MIN_CONFIDENCE: '2' })).toThrow(/QUALITY_MIN_CONFIDENCE/);
  });

  it('counts pass at 0 and fail above, naming the first offenders and marking more with …', () => {
    expect(checks.completeness({ factsWithoutSource: none, entitiesWithoutSource: none })).toMatchObject({ ok: true, value: 0, threshold: 0 });
    const bad = checks.completeness({ factsWithoutSource: { count: 3, sample: ['f1', 'f2'] }, entitiesWithoutSource: { count: 1, sample: ['e1'] } });
    expect(bad).toMatchObject({ ok: false, value: 4 });
    expect(bad.detail).toBe('3 live facts without a source (f1, f2, …); 1 live entities without a mention, fact or relationship (e1)');
  });

  it('confidence_distribution takes the worst fact type, rounded, against the largest share allowed', () => {
    const rows = [
      { type: 'attribute', total: 40, low: 8 },
      { type: 'event', total: 30, low: 20 },
    ];
    const c = checks.confidenceDistribution(rows, T);
    expect(c).toMatchObject({ ok: false, value: 0.667, threshold: 0.5 });
    expect(c.detail).toBe('share below 0.7 per fact type: attribute 0.2 (8/40), event 0.667 (20/30)');
    expect(checks.confidenceDistribution([{ type: 'event', total: 20, low: 10 }], T).ok).toBe(true);
    expect(checks.confidenceDistribution([{ type: 'event', total: 20, low: 11 }], T)).toMatchObject({ ok: false, value: 0.55 });
    expect(checks.confidenceDistribution([], T)).toMatchObject({ ok: true, value: 0, detail: 'no current facts' });
  });

  it('confidence_distribution lists a fact type below the minimum sample but does not judge it', () => {
    // One weak fact of a type in a tiny namespace is a share of 1: reported, not failed.
    const rows = [
      { type: 'attribute', total: 25, low: 5 },
      { type: 'other', total: 1, low: 1 },
    ];
    const c = checks.confidenceDistribution(rows, T);
    expect(c).toMatchObject({ ok: true, value: 0.2, threshold: 0.5 });
    expect(c.detail).toBe(
      'share below 0.7 per fact type: attribute 0.2 (5/25), other 1 (1/1, not judged); types with fewer than 20 current facts are not judged',
    );
    // The same type at the minimum sample is judged, and with a minimum of 1 every type is.
    expect(checks.confidenceDistribution([{ type: 'other', total: 20, low: 20 }], T)).toMatchObject({ ok: false, value: 1 });
    expect(checks.confidenceDistribution(rows, { ...T, confidenceMinSample: 1 })).toMatchObject({ ok: false, value: 1 });
    expect(checks.confidenceDistribution([{ type: 'other', total: 3, low: 3 }], T)).toMatchObject({ ok: true, value: 0 });
  });

  it('low_confidence_proliferation fails only above the count per type', () => {
    expect(checks.lowConfidenceProliferation([{ type: 'concept', count: 100 }], T).ok).toBe(true);
    expect(
      checks.lowConfidenceProliferation(
        [
          { type: 'concept', count: 101 },
          { type: 'person', count: 3 },
        ],
        T,
      ),
    ).toMatchObject({ ok: false, value: 101 });
  });

  it('timeliness judges p95 against QUALITY_MAX_LAG_SECONDS and the outbox by its oldest row', () => {
    expect(checks.timelinessDerivation({ events: 20, p50Seconds: 1, p95Seconds: 300 }, T).ok).toBe(true);
    expect(checks.timelinessDerivation({ events: 20, p50Seconds: 1, p95Seconds: 300.04 }, T)).toMatchObject({ ok: true, value: 300 });
    expect(checks.timelinessDerivation({ events: 20, p50Seconds: 1, p95Seconds: 301 }, T).ok).toBe(false);
    expect(checks.timelinessOutbox({ pending: 4, oldestSeconds: 900 }, T)).toMatchObject({ ok: false, value: 900 });
    expect(checks.timelinessOutbox({ pending: 0, oldestSeconds: 0 }, T).detail).toMatch(/drained/);
  });

  it('dead_letters passes up to QUALITY_MAX_DEAD_LETTERS', () => {
    expect(checks.deadLetters({ count: 2, sample: ['a (X)', 'b (X)'] }, { ...T, maxDeadLetters: 2 }).ok).toBe(true);
    expect(checks.deadLetters({ count: 3, sample: [] }, { ...T, maxDeadLetters: 2 }).ok).toBe(false);
  });

  it('uniqueness lists its pairs with their similarity', () => {
    const c = checks.uniqueness(
      { count: 2, pairs: [{ a: 'id1', b: 'id2', nameA: 'Alice Martin', nameB: 'Alice Martins', type: 'person', similarity: 0.8666 }] },
      T,
    );
    expect(c).toMatchObject({ ok: false, value: 2, threshold: 0 });
    expect(c.detail).toBe('2 pairs above 0.85: person "Alice Martin" ~ "Alice Martins" 0.87 (id1, id2); …');
  });

  it('consistency_graph reads the graphConsistency report', () => {
    const zero = { Event: 0, Fact: 0, Entity: 0, DERIVED_FROM: 0, ABOUT: 0, SUPERSEDES: 0, RELATED: 0, GoldEntity: 0, MERGED_FROM: 0, GOLD_RELATED: 0 };
    expect(checks.consistencyGraph({ ok: true, postgres: zero, neo4j: zero, missingInNeo4j: [], extraInNeo4j: [] }).ok).toBe(true);
    const c = checks.consistencyGraph({
      ok: false,
      postgres: { ...zero, Fact: 2 },
      neo4j: { ...zero, Fact: 1 },
      missingInNeo4j: ['Fact:f1'],
      extraInNeo4j: [],
    });
    expect(c).toMatchObject({ ok: false, value: 1 });
    expect(c.detail).toBe('Fact 2 in Postgres, 1 in Neo4j; missing in Neo4j: Fact:f1');
  });

  it('consistency_graph says how fresh its answer is: compared now, or stored with its age and whether the graph changed since', () => {
    const zero = { Event: 0, Fact: 0, Entity: 0, DERIVED_FROM: 0, ABOUT: 0, SUPERSEDES: 0, RELATED: 0, GoldEntity: 0, MERGED_FROM: 0, GOLD_RELATED: 0 };
    const clean = { ok: true, postgres: zero, neo4j: zero, missingInNeo4j: [], extraInNeo4j: [] };
    const checkedAt = new Date('2026-12-05T01:00:00.000Z');
    const base = { checkedAt, ageSeconds: 42.4, computedNow: false, changedSince: false, maxAgeSeconds: 600 };
    expect(checks.consistencyGraph(clean, { ...base, computedNow: true }).detail).toBe(
      'Neo4j holds exactly the Postgres rows (graphConsistency); as of 2026-12-05T01:00:00.000Z (compared for this report)',
    );
    expect(checks.consistencyGraph(clean, base).detail).toBe(
      'Neo4j holds exactly the Postgres rows (graphConsistency); as of 2026-12-05T01:00:00.000Z (42 s ago, stored answer; recomputed once older than 600 s)',
    );
    expect(checks.consistencyGraph(clean, { ...base, changedSince: true }).detail).toContain('the graph changed since, a worker rechecks it');
  });

  it('the CLI table has one line per check and says how many failed', () => {
    const report = {
      namespace: 'ns',
      ok: false,
      generatedAt: '2026-12-04T00:00:00.000Z',
      checks: [
        { name: 'completeness', value: 0, threshold: 0, ok: true, detail: 'fine' },
        { name: 'timeliness_outbox', value: 900.5, threshold: 300, ok: false, detail: 'late' },
      ],
    };
    expect(formatQualityTable(report).split('\n')).toEqual([
      'quality of ns at 2026-12-04T00:00:00.000Z',
      'check              ok    value  threshold  detail',
      '-----------------  ----  -----  ---------  ------',
      'completeness       ok    0      0          fine',
      'timeliness_outbox  FAIL  900.5  300        late',
      '1 of 2 checks failed (docs/quality.md says what to do)',
    ]);
  });
});
