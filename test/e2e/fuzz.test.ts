import { GraphQLSchema } from 'graphql';
import { buildAppSchema } from '../../src/api/schema';
import { fuzzCases, listMcpTools, McpToolSpec, runCase } from '../../bench/fuzz-cases';
import { startTestApp, TestApp } from '../support/test-app';

/** FUZZ_SEED reproduces a run; the default seed keeps CI deterministic. */
const SEED = Number(process.env.FUZZ_SEED ?? 20251201);
const CASES = 2_000;
/** No answer to a malformed request may be larger than this. */
const MAX_ANSWER_BYTES = 256 * 1024;

describe(`fuzz: ${CASES} malformed requests (seed ${SEED}) across every root field, MCP tool and GET route`, () => {
  let t: TestApp;
  let schema: GraphQLSchema;
  let tools: McpToolSpec[];
  beforeAll(async () => {
    // No background workers: the fuzz judges the API's answers, not what a rebuild job does later.
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing' }, { api: true, worker: false });
    schema = await buildAppSchema();
    tools = await listMcpTools(t.url, t.adminToken);
  });
  afterAll(async () => t?.stop());

  it('answers each one as coded GraphQL JSON: no INTERNAL, no 5xx, no oversized answer', async () => {
    const cases = fuzzCases(schema, SEED, CASES, tools);
    const fields = new Set(cases.map((c) => /^#\d+ (?:query|mutation|subscription) (\w+)/.exec(c.name)?.[1]).filter(Boolean));
    const roots = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].flatMap((r) => Object.keys(r?.getFields() ?? {}));
    expect([...fields].sort()).toEqual([...roots].sort());
    const called = new Set(cases.map((c) => /^#\d+ mcp tools\/call (\S+)/.exec(c.name)?.[1]).filter(Boolean));
    expect([...called].sort()).toEqual(tools.map((x) => x.name).sort());
    expect(cases.filter((c) => c.kind === 'get').length).toBeGreaterThan(50);
    const failures: string[] = [];
    const slow: Array<[number, string]> = [];
    for (let i = 0; i < cases.length; i += 8) {
      const batch = cases.slice(i, i + 8);
      const verdicts = await Promise.all(
        batch.map(async (c) => {
          const t0 = Date.now();
          const v = await runCase(t.url, t.adminToken, c, MAX_ANSWER_BYTES);
          slow.push([Date.now() - t0, c.name]);
          return v;
        }),
      );
      verdicts.forEach((v, j) => {
        if (!v.ok) failures.push(`${batch[j]?.name}: ${v.problem} | body: ${batch[j]?.body.slice(0, 300)}`);
      });
    }
    slow.sort((a, b) => b[0] - a[0]);
    process.stderr.write(`fuzz seed ${SEED}: ${cases.length} cases, ${failures.length} failures; slowest: ${JSON.stringify(slow.slice(0, 8))}\n`);
    expect(failures).toEqual([]);
    const health = await fetch(`${t.url}/health`);
    expect(health.status).toBe(200);
  }, 900_000);
});
