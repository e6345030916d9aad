import { nowMs, report, round, withBenchApp } from './harness';

/**
 * `npm run bench -- attacks`: the attacks of the hardening issue, each sent as the attacker sent
 * it, against a running service. For each: the HTTP status and error code it is refused with, the
 * time to refuse it, and the worst `/health` latency measured while it ran (polled every 20 ms).
 * Baseline: /health latency on the idle service in the same run.
 */
interface Attack {
  name: string;
  /** Who sends it: no token, or the admin token (the worst case: every capability). */
  auth: 'none' | 'admin';
  body: () => string;
}

const gqlBody = (query: string, variables?: Record<string, unknown>) => JSON.stringify({ query, variables });
const ingest = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`;
const repeat = (n: number, s: (i: number) => string) => Array.from({ length: n }, (_, i) => s(i)).join(' ');

const ATTACKS: Attack[] = [
  { name: '30,000 aliases of __typename', auth: 'admin', body: () => gqlBody(`{ ${repeat(30_000, (i) => `a${i}: __typename`)} }`) },
  {
    name: '10 × events(first:500) padded with 10,001 __typename',
    auth: 'admin',
    body: () =>
      gqlBody(`{ ${repeat(10, (i) => `e${i}: events(namespace: "n", first: 500) { edges { node { id } } }`)} ${repeat(10_001, () => '__typename')} }`),
  },
  {
    name: 'fragments expanding to 20,000 nodes',
    auth: 'admin',
    body: () =>
      gqlBody(
        `query { ...H } fragment F on Query { ${repeat(50, (i) => `t${i}: __typename`)} } fragment G on Query { ${repeat(40, () => '...F')} } fragment H on Query { ${repeat(10, () => '...G')} }`,
      ),
  },
  {
    name: 'nested lists without page size (events → facts → sources → event → facts)',
    auth: 'admin',
    body: () => gqlBody(`{ events(namespace: "n", first: 500) { edges { node { facts { sources { event { facts { sources { quote } } } } } } } } }`),
  },
  {
    name: '200 aliased searchMemory',
    auth: 'admin',
    body: () => gqlBody(`{ ${repeat(200, (i) => `s${i}: searchMemory(namespace: "n", query: "q", limit: 10) { score }`)} }`),
  },
  {
    name: '2,000-wide OR in a graph filter',
    auth: 'admin',
    body: () =>
      gqlBody(`query($w: GraphEventWhere) { graphEvents(where: $w) { id } }`, {
        w: { OR: Array.from({ length: 2_000 }, (_, i) => ({ id: { eq: `x${i}` } })) },
      }),
  },
  { name: '70,000 invalid batch items, unauthenticated', auth: 'none', body: () => gqlBody(ingest, { input: Array.from({ length: 70_000 }, () => ({})) }) },
  { name: '200,000 repeated selections, unauthenticated', auth: 'none', body: () => gqlBody(`{ ${repeat(200_000, () => '__typename')} }`) },
  {
    name: '200 aliased introspections, unauthenticated',
    auth: 'none',
    body: () => gqlBody(`{ ${repeat(200, (i) => `i${i}: __schema { types { name fields { name } } }`)} }`),
  },
  {
    name: '12,000 literal batch items, unauthenticated',
    auth: 'none',
    body: () => gqlBody(`mutation { ingestEvents(input: [${repeat(12_000, () => '{}')}]) { status } }`),
  },
  {
    // Under the input bound (10,000 objects and elements): each item is refused by coercion alone.
    name: '4,900 events each missing a required field, with a token',
    auth: 'admin',
    body: () =>
      gqlBody(ingest, { input: Array.from({ length: 4_900 }, (_, i) => ({ namespace: 'n', kind: 'MESSAGE', content: `turn ${i}`, sourceEventId: `e${i}` })) }),
  },
  { name: 'array of 130,000 elements as a variable', auth: 'admin', body: () => gqlBody(ingest, { input: Array.from({ length: 130_000 }, () => 1) }) },
  { name: 'a 70 MB body (MAX_REQUEST_BYTES is 64 MB)', auth: 'admin', body: () => gqlBody(`{ viewer { name } }`, { pad: 'x'.repeat(70_000_000) }) },
];

async function healthOnce(url: string): Promise<number> {
  const t0 = nowMs();
  await fetch(`${url}/health`);
  return nowMs() - t0;
}

/** Polls /health every 20 ms until `done` settles; the worst latency seen. */
async function healthWhile(url: string, done: Promise<unknown>): Promise<number> {
  let finished = false;
  void done.finally(() => (finished = true));
  let worst = 0;
  while (!finished) {
    worst = Math.max(worst, await healthOnce(url));
    await new Promise((r) => setTimeout(r, 20));
  }
  return worst;
}

export async function attacksBench(): Promise<void> {
  await withBenchApp(
    async ({ url, adminToken }) => {
      const idle: number[] = [];
      for (let i = 0; i < 20; i++) idle.push(await healthOnce(url));
      const results: Array<Record<string, unknown>> = [];
      for (const a of ATTACKS) {
        const body = a.body();
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (a.auth === 'admin') headers.authorization = `Bearer ${adminToken}`;
        const t0 = nowMs();
        const answer = fetch(`${url}/graphql`, { method: 'POST', headers, body }).then(async (res) => {
          const text = await res.text();
          return { ms: nowMs() - t0, status: res.status, text };
        });
        const [r, healthMax] = await Promise.all([answer, healthWhile(url, answer)]);
        let code: string | undefined;
        try {
          const parsed = JSON.parse(r.text) as { errors?: Array<{ extensions?: { code?: string; limit?: string } }> };
          const e = parsed.errors?.[0]?.extensions;
          code = e ? [e.code, e.limit].filter(Boolean).join('/') : 'executed';
        } catch {
          code = 'not JSON';
        }
        const row = { attack: a.name, requestBytes: body.length, status: r.status, code, refuseMs: round(r.ms), healthMaxMs: round(healthMax) };
        process.stdout.write(`${JSON.stringify(row)}\n`);
        results.push(row);
      }
      const idleMax = Math.max(...idle);
      report('attacks', {
        healthIdleMaxMs: round(idleMax),
        attacks: results,
        refusedAll: results.every((r) => r.status === 400 || r.status === 401 || r.status === 413),
        worstRefuseMs: round(Math.max(...results.map((r) => r.refuseMs as number))),
        worstHealthMs: round(Math.max(...results.map((r) => r.healthMaxMs as number))),
      });
    },
    { worker: false },
  );
}
