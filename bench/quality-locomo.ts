import fs from 'node:fs';
import { formatQualityTable } from '../src/gold/quality/quality.command';
import { LOCOMO, locomoEvents, Sample } from './derive-locomo';
import { nowMs, report, round, withBenchStores } from './harness';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`;
const STATUS = `query($ns: String!) { pipelineStatus(namespace: $ns) { pending deadLetters outboxLag } }`;
const PROMOTE = `mutation($ns: String!) { promote(namespace: $ns) { id } }`;
const JOB = `query($id: ID!) { job(id: $id) { status message } }`;
const REPORT = `query($ns: String!) { qualityReport(namespace: $ns) { namespace ok generatedAt checks { name value threshold ok detail } } }`;

async function until(what: string, timeoutMs: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = nowMs() + timeoutMs;
  while (!(await probe())) {
    if (nowMs() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * `npm run bench -- quality-locomo`: the quality report of LoCoMo development conversations
 * (BENCH_LOCOMO_CONVERSATIONS, default 1) after derivation and promotion, with the service's
 * default settings (offline models): ingest over GraphQL, wait until derivation settles, promote,
 * wait until the outbox drains, then `qualityReport`. Writes bench/results/quality-locomo.json.
 */
export async function qualityLocomo(): Promise<void> {
  if (!fs.existsSync(LOCOMO)) {
    process.stdout.write(`quality-locomo: ${LOCOMO} is absent; skipped\n`);
    return;
  }
  const samples = JSON.parse(fs.readFileSync(LOCOMO, 'utf8')) as Sample[];
  const byNs = locomoEvents(samples.slice(0, Number(process.env.BENCH_LOCOMO_CONVERSATIONS ?? 1)), 'bench-quality');
  await withBenchStores(async (b) => {
    const env = await b.startApp({}, { api: true, worker: true });
    const call = async <T>(query: string, variables: Record<string, unknown>): Promise<T> => {
      const res = await fetch(`${env.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${b.adminToken}` },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await res.json()) as { data?: T; errors?: unknown[] };
      if (body.errors) throw new Error(JSON.stringify(body.errors));
      return body.data as T;
    };
    try {
      const results: Record<string, unknown> = {};
      for (const [ns, events] of byNs) {
        const t0 = nowMs();
        for (let i = 0; i < events.length; i += 500) await call(INGEST, { input: events.slice(i, i + 500) });
        await until(
          `the derivation of ${ns}`,
          1_800_000,
          async () => (await call<{ pipelineStatus: { pending: number } }>(STATUS, { ns })).pipelineStatus.pending === 0,
        );
        const derivedSeconds = round((nowMs() - t0) / 1000);
        const { promote } = await call<{ promote: { id: string } }>(PROMOTE, { ns });
        let job = { status: 'queued', message: null as string | null };
        await until(`the promotion of ${ns}`, 1_800_000, async () => {
          job = (await call<{ job: typeof job }>(JOB, { id: promote.id })).job;
          return job.status === 'succeeded' || job.status === 'failed';
        });
        await until(
          `the outbox of ${ns}`,
          600_000,
          async () => (await call<{ pipelineStatus: { outboxLag: number } }>(STATUS, { ns })).pipelineStatus.outboxLag === 0,
        );
        const counts = (
          await env.app.ds.query(
            `SELECT (SELECT count(*) FROM silver.facts WHERE namespace = $1 AND retired_at IS NULL)::int AS facts,
                    (SELECT count(*) FROM silver.entities WHERE namespace = $1 AND retired_at IS NULL)::int AS entities,
                    (SELECT count(*) FROM gold.entities WHERE namespace = $1 AND retired_at IS NULL)::int AS gold_entities,
                    (SELECT count(*) FROM gold.relationships WHERE namespace = $1 AND retired_at IS NULL)::int AS gold_relationships`,
            [ns],
          )
        )[0] as Record<string, number>;
        const r0 = nowMs();
        const { qualityReport } = await call<{ qualityReport: Parameters<typeof formatQualityTable>[0] }>(REPORT, { ns });
        const reportMs = round(nowMs() - r0);
        process.stdout.write(`\n${formatQualityTable(qualityReport)}\n(${events.length} turns, ${JSON.stringify(counts)}, report ${reportMs} ms)\n`);
        results[ns] = { turns: events.length, derivedSeconds, promotion: job, counts, reportMs, report: qualityReport };
      }
      report('quality-locomo', {
        input: `${LOCOMO} (${byNs.size} conversation(s), one event per turn)`,
        settings: 'defaults (offline rules extractor and judge, OFFLINE_EMBEDDER e5-small, QUALITY_* defaults)',
        namespaces: results,
      });
    } finally {
      await env.app.stop();
    }
  });
}
