import { buildAppSchema } from '../src/api/schema';
import { fuzzCases, listMcpTools, runCase } from './fuzz-cases';
import { nowMs, report, round, withBenchApp } from './harness';

/**
 * `npm run bench -- fuzz`: the fuzz suite's generator at length (FUZZ_CASES, default 20,000;
 * FUZZ_SEED) over every GraphQL root field, every MCP tool and the GET routes. Reports the cases
 * per kind, INTERNAL answers, HTTP 5xx, other failures, the time per case and /health meanwhile.
 */
export async function fuzzBench(): Promise<void> {
  const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
  const count = Number(process.env.FUZZ_CASES ?? 20_000);
  const schema = await buildAppSchema();
  await withBenchApp(
    async ({ url, adminToken }) => {
      const cases = fuzzCases(schema, seed, count, await listMcpTools(url, adminToken));
      const failures: string[] = [];
      const healthMs: number[] = [];
      const t0 = nowMs();
      for (let i = 0; i < cases.length; i += 16) {
        const batch = cases.slice(i, i + 16);
        const h0 = nowMs();
        const [health, ...verdicts] = await Promise.all([
          fetch(`${url}/health`).then(() => nowMs() - h0),
          ...batch.map((c) => runCase(url, adminToken, c, 256 * 1024)),
        ]);
        healthMs.push(health as number);
        (verdicts as Array<{ ok: boolean; problem?: string }>).forEach((v, j) => {
          if (!v.ok) failures.push(`${batch[j]?.name}: ${v.problem}`);
        });
      }
      const elapsed = nowMs() - t0;
      for (const f of failures.slice(0, 50)) process.stdout.write(`FAIL ${f}\n`);
      const kinds = { graphql: 0, mcp: 0, get: 0 };
      for (const c of cases) kinds[c.kind ?? 'graphql'] += 1;
      report('fuzz', {
        seed,
        cases: count,
        kinds,
        internal: failures.filter((f) => /: INTERNAL/.test(f)).length,
        http5xx: failures.filter((f) => /: HTTP 5\d\d/.test(f)).length,
        failures: failures.length,
        msPerCase: round(elapsed / count),
        healthMaxMs: round(Math.max(...healthMs)),
        sample: failures.slice(0, 20),
      });
    },
    { worker: false },
  );
}
