import { Client } from 'pg';
import { nowMs, report, round, summarize, withBenchApp } from './harness';

const N = Number(process.env.BENCH_N ?? 500);
const WARMUP = 50;

const INGEST = `mutation($input: EventInput!) { ingestEvent(input: $input) { status } }`;

/**
 * Single-event ingest over HTTP (`ingestEvent`), sequential: p50/p95 latency and SQL round trips
 * per ingest, next to a raw `pg` single-row INSERT of the same row into a plain table.
 */
export async function ingestLatency(): Promise<void> {
  const worker = process.env.BENCH_WORKER !== '0';
  await withBenchApp(
    async ({ app, url, adminToken, postgresUrl }) => {
      const ns = 'bench-latency';
      const content = 'I switched from vim to neovim last week because the LSP support is better. '.repeat(4);
      const post = async (key: string, i: number) => {
        const res = await fetch(`${url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
          body: JSON.stringify({
            query: INGEST,
            variables: {
              input: { namespace: ns, source: 'bench', sourceEventId: key, kind: 'MESSAGE', role: 'USER', content, conversationId: 'c-1', sequenceNum: i },
            },
          }),
        });
        const body = (await res.json()) as { data?: { ingestEvent: { status: string } } };
        if (body.data?.ingestEvent.status !== 'CREATED') throw new Error(`unexpected response ${JSON.stringify(body)}`);
      };
      for (let i = 0; i < WARMUP; i++) await post(`warmup-${i}`, i);
      const api: number[] = [];
      app.queryCounter.reset();
      for (let i = 0; i < N; i++) {
        const t0 = nowMs();
        await post(`e-${i}`, i);
        api.push(nowMs() - t0);
      }
      const roundTrips = app.queryCounter.count / N;

      const pg = new Client({ connectionString: postgresUrl });
      await pg.connect();
      await pg.query(
        `CREATE TABLE IF NOT EXISTS public.bench_plain_events (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), namespace text, source text, source_event_id text, kind text, role text, content text, conversation_id text, sequence_num int, occurred_at timestamptz DEFAULT now())`,
      );
      const raw: number[] = [];
      for (let i = 0; i < N + WARMUP; i++) {
        const t0 = nowMs();
        await pg.query(
          `INSERT INTO public.bench_plain_events (namespace, source, source_event_id, kind, role, content, conversation_id, sequence_num) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`,
          [ns, 'bench', `e-${i}`, 'message', 'user', content, 'c-1', i],
        );
        if (i >= WARMUP) raw.push(nowMs() - t0);
      }
      await pg.query(`DROP TABLE public.bench_plain_events`);
      await pg.end();

      const apiS = summarize(api);
      const rawS = summarize(raw);
      report(worker ? 'ingest-latency' : 'ingest-latency-no-workers', {
        backgroundWorkers: worker,
        events: N,
        contentChars: content.length,
        ingestEventOverHttpMs: apiS,
        rawPgInsertMs: rawS,
        ratioP50: round(apiS.p50 / rawS.p50, 1),
        ratioP95: round(apiS.p95 / rawS.p95, 1),
        sqlRoundTripsPerIngest: round(roundTrips, 2),
        note: 'round trips counted by the DataSource logger: token lookup + one single-statement insert (keys, event, queue, outbox, watermark, notify)',
      });
    },
    { worker },
  );
}
