import { attacksBench } from './attacks';
import { chaosBench, chaosSelfTestBench } from './chaos';
import { cliBench } from './cli';
import { embeddersBench } from './embedders';
import { entityResolutionBench } from './entity-resolution';
import { extractCoverage } from './extract-coverage';
import { extractQuality } from './extract-quality';
import { deriveThroughput } from './derive';
import { fuzzBench } from './fuzz';
import { lifecycleBench } from './lifecycle';
import { deriveLocomo } from './derive-locomo';
import { ingestThroughput } from './ingest';
import { exportImport } from './export-import';
import { ingestLatency } from './ingest-latency';
import { promoteBench } from './promote';
import { promotePairsBench } from './promote-pairs';
import { provenanceBench } from './provenance';
import { qualityBench } from './quality';
import { qualityLocomo } from './quality-locomo';
import { recallBench } from './recall';
import { sealerBench } from './sealer';
import { searchBench } from './search';
import { searchPasses, searchProfile, searchTail } from './search-profile';
import { searchUnderLoad } from './search-under-load';
import { scenariosBench } from './scenarios';
import { silverReferenceBench } from './silver-reference';
import { startStopBench } from './start-stop';
import { tracingOverhead } from './tracing-overhead';
import { dashboardBench } from './dashboard';
import { updatesBench } from './updates';

/** `npm run bench -- [name ...]`: runs the named benchmarks (default: all) and writes bench/results/. */
const BENCHMARKS: Record<string, () => Promise<void>> = {
  'ingest-latency': ingestLatency,
  cli: cliBench,
  ingest: ingestThroughput,
  'export-import': exportImport,
  derive: deriveThroughput,
  'derive-locomo': deriveLocomo,
  'extract-quality': extractQuality,
  'extract-coverage': extractCoverage,
  'silver-reference': silverReferenceBench,
  search: searchBench,
  'search-profile': searchProfile,
  'search-under-load': searchUnderLoad,
  'search-tail': searchTail,
  'search-passes': searchPasses,
  provenance: provenanceBench,
  quality: qualityBench,
  'quality-locomo': qualityLocomo,
  recall: recallBench,
  scenarios: scenariosBench,
  embedders: embeddersBench,
  fuzz: fuzzBench,
  attacks: attacksBench,
  chaos: chaosBench,
  'chaos-self-test': chaosSelfTestBench,
  'entity-resolution': entityResolutionBench,
  promote: promoteBench,
  'promote-pairs': promotePairsBench,
  'start-stop': startStopBench,
  updates: updatesBench,
  'tracing-overhead': tracingOverhead,
  dashboard: dashboardBench,
  lifecycle: lifecycleBench,
  sealer: sealerBench,
};

async function main(): Promise<void> {
  const names = process.argv.slice(2);
  const unknown = names.filter((n) => !BENCHMARKS[n]);
  if (unknown.length > 0) {
    process.stderr.write(`unknown benchmark(s): ${unknown.join(', ')}; available: ${Object.keys(BENCHMARKS).join(', ')}\n`);
    process.exit(2);
  }
  for (const name of names.length > 0 ? names : Object.keys(BENCHMARKS)) {
    process.stdout.write(`running ${name}…\n`);
    await (BENCHMARKS[name] as () => Promise<void>)();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
