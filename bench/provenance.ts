import { createLoaders } from '../src/scope/request-scope';
import { readProvenanceSteps, ProvenanceStepRow } from '../src/graph/cypher/provenance-steps';
import {
  countCypher,
  graphql,
  printTable,
  profiled,
  published,
  readTx,
  registerMemoryBench,
  round,
  runMemoryBench,
  ScaleContext,
  summarize,
  TARGET,
  timed,
} from './memory-fixture';

const WARMUP = 30;
const PROVENANCE = `query($id: ID!) {
  provenance(factId: $id) {
    fact { id statement }
    steps { via distance spanStart spanEnd quote fact { id statement validTo } event { id content occurredAt } }
  }
}`;

/** Every k-th id, so the sample spreads over the namespace's history. */
function spread(ids: readonly string[], n: number): string[] {
  if (ids.length <= n) return [...ids];
  const step = ids.length / n;
  return Array.from({ length: n }, (_, i) => ids[Math.floor(i * step)] as string);
}

/**
 * `provenance(factId)` over HTTP and through the service, next to the raw Cypher of
 * provenance-steps.ts on the same Neo4j and the Postgres reads around it. Half the facts sit in
 * supersession chains (steps through SUPERSEDES), half do not.
 */
async function measureProvenance(ctx: ScaleContext): Promise<Record<string, unknown>> {
  const { env, fixture } = ctx;
  const n = Number(process.env.BENCH_QUERIES ?? 200);
  const chained = spread(fixture.chainFacts, Math.floor(n / 2));
  const ids = [...chained, ...spread(fixture.plainFacts, n - chained.length + WARMUP)];
  const warm = ids.splice(ids.length - WARMUP, WARMUP);
  const cypher = countCypher(env.app.neo4j);
  const services = env.app.services;

  const rows: ProvenanceStepRow[][] = [];
  for (const id of ids) rows.push(await readTx(ctx.raw, (tx) => readProvenanceSteps(tx, TARGET, id)));
  for (const id of [...warm, ...ids]) await graphql(env, PROVENANCE, { id });

  const steps: number[] = [];
  env.app.queryCounter.reset();
  cypher.reset();
  const http = await timed(ids.length, async (i) => {
    const res = await graphql<{ provenance: { fact: unknown; steps: unknown[] } }>(env, PROVENANCE, { id: ids[i] });
    if (!res.provenance.fact) throw new Error(`provenance(${ids[i]}) found no fact`);
    steps.push(res.provenance.steps.length);
  });
  const httpTrips = { sql: round(env.app.queryCounter.count / ids.length), cypher: round(cypher.count / ids.length) };

  env.app.queryCounter.reset();
  cypher.reset();
  const service = await timed(ids.length, (i) => services.provenance.provenance(ctx.auth, createLoaders(services), ids[i] as string));
  const serviceTrips = { sql: round(env.app.queryCounter.count / ids.length), cypher: round(cypher.count / ids.length) };

  const raw = await timed(ids.length, (i) => readTx(ctx.raw, (tx) => readProvenanceSteps(tx, TARGET, ids[i] as string)));
  const startFact = await timed(ids.length, (i) => env.app.repositories.facts.factsByIds([ids[i] as string]));
  const hydrate = await timed(ids.length, (i) => {
    const r = rows[i] ?? [];
    return Promise.all([
      env.app.repositories.facts.factsByIds([...new Set(r.map((x) => x.factId))]),
      env.app.repositories.events.findByIds([...new Set(r.map((x) => x.eventId))]),
    ]);
  });
  const auth = await timed(ids.length, () => services.tokens.authenticate(`Bearer ${env.adminToken}`));
  const baseline = await timed(ids.length, () => graphql(env, '{ __typename }', {}));
  const modelled = raw.samples.map((c, i) => c + (startFact.samples[i] ?? 0) + (hydrate.samples[i] ?? 0));
  const chainIdx = (i: number) => i < chained.length;
  const longest = rows.reduce((best, r, i) => (r.length > (rows[best]?.length ?? 0) ? i : best), 0);
  const profiles = {
    longestChain: {
      factId: ids[longest],
      steps: rows[longest]?.length,
      ...(await profiled(ctx.raw, (tx) => readProvenanceSteps(tx, TARGET, ids[longest] as string))),
    },
    notInChain: { factId: ids[chained.length], ...(await profiled(ctx.raw, (tx) => readProvenanceSteps(tx, TARGET, ids[chained.length] as string))) },
  };
  const part = (t: { samples: number[] }, inChain: boolean) => summarize(t.samples.filter((_, i) => chainIdx(i) === inChain));
  const mean = (xs: number[]) => round(xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length), 2);

  printTable(`provenance, ${ctx.label} facts/namespace (${ids.length} facts: ${chained.length} in supersession chains)`, [
    ['provenance over HTTP', http.ms],
    ['  facts in chains', part(http, true)],
    ['  facts not in chains', part(http, false)],
    ['ProvenanceService', service.ms],
    ['raw: provenance Cypher', raw.ms],
    ['  facts in chains', part(raw, true)],
    ['pg: start fact', startFact.ms],
    ['pg: hydrate facts+events', hydrate.ms],
    ['pg: token lookup', auth.ms],
    ['HTTP { __typename }', baseline.ms],
    ['modelled service path', summarize(modelled)],
    ['ratio HTTP / raw Cypher', `${round(http.ms.p50 / raw.ms.p50, 1)} (p50)  ${round(http.ms.p95 / raw.ms.p95, 1)} (p95)`],
    ['steps per fact', `${mean(steps)} mean, ${mean(steps.filter((_, i) => chainIdx(i)))} in chains, ${mean(steps.filter((_, i) => !chainIdx(i)))} outside`],
  ]);

  return {
    facts: ids.length,
    factsInSupersessionChains: chained.length,
    stepsPerFact: {
      mean: mean(steps),
      inChains: mean(steps.filter((_, i) => chainIdx(i))),
      outsideChains: mean(steps.filter((_, i) => !chainIdx(i))),
      max: Math.max(...steps),
    },
    provenanceOverHttp: { ...published(http), inChains: part(http, true), outsideChains: part(http, false), roundTripsPerRequest: httpTrips },
    provenanceServiceDirect: { ...published(service), roundTripsPerRequest: serviceTrips },
    rawCypher: { provenanceSteps: { ...published(raw), inChains: part(raw, true), outsideChains: part(raw, false) } },
    postgres: { startFact: published(startFact), hydrateFactsAndEvents: published(hydrate), tokenLookup: published(auth) },
    graphqlBaselineTypenameOverHttp: published(baseline),
    modelledServicePathMs: summarize(modelled),
    profiles,
    ratios: {
      httpOverRawP50: round(http.ms.p50 / raw.ms.p50, 1),
      httpOverRawP95: round(http.ms.p95 / raw.ms.p95, 1),
      serviceOverRawP50: round(service.ms.p50 / raw.ms.p50, 1),
      serviceOverRawP95: round(service.ms.p95 / raw.ms.p95, 1),
      httpOverServiceP50: round(http.ms.p50 / service.ms.p50, 2),
    },
    target: { p95UnderMs: 20, met: http.ms.p95 < 20 },
  };
}

registerMemoryBench('provenance', measureProvenance);

/** `npm run bench -- provenance`: same data as `search` (loaded once when both run). */
export const provenanceBench = (): Promise<void> => runMemoryBench('provenance');
