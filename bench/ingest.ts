import { Client } from 'pg';
import { AuthContext } from '../src/access/auth-context';
import { EventSubmission } from '../src/bronze/event.types';
import { validateSubmission } from '../src/bronze/event-validation';
import { nowMs, report, round, summarize, withBenchApp } from './harness';

const TOTAL = Number(process.env.BENCH_EVENTS ?? 20_000);
const BATCH = 500;
const DAY_MS = 86_400_000;
/** Events spread over the twelve months before the run (ingest refuses times more than a day ahead). */
const SPREAD_FROM = Date.UTC(new Date().getUTCFullYear() - 1, new Date().getUTCMonth(), 1);
const WORDS =
  'the agent user said prefers uses switched from to neovim vim postgres neo4j deploy friday meeting notes bug fix release customer email phone tokyo berlin project plan because'.split(
    ' ',
  );

/** Deterministic text of 200-2000 characters. */
function contentFor(i: number): string {
  let s = (i * 2654435761) % 2 ** 32;
  const target = 200 + (s % 1801);
  const out: string[] = [];
  let len = 0;
  while (len < target) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const w = WORDS[s % WORDS.length] as string;
    out.push(w);
    len += w.length + 1;
  }
  return out.join(' ').slice(0, target);
}

function batchOf(run: string, b: number): EventSubmission[] {
  return Array.from({ length: BATCH }, (_, j) => {
    const i = b * BATCH + j;
    return {
      namespace: 'bench-ingest',
      source: `bench-${run}`,
      sourceEventId: `e-${i}`,
      kind: 'MESSAGE',
      role: j % 2 ? 'ASSISTANT' : 'USER',
      conversationId: `c-${Math.floor(i / 50)}`,
      sequenceNum: i % 50,
      content: contentFor(i),
      occurredAt: new Date(SPREAD_FROM + ((i % 12) * 30 + (i % 28)) * DAY_MS).toISOString(),
    };
  });
}

/** Runs `batches` batches over `concurrency` parallel clients; events/s over the whole run. */
async function timed(
  batches: number,
  fn: (b: number) => Promise<void>,
  concurrency = 1,
): Promise<{ concurrency: number; eventsPerSec: number; batchMs: ReturnType<typeof summarize> }> {
  const ms: number[] = [];
  let next = 0;
  const t0 = nowMs();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let b = next++; b < batches; b = next++) {
        const s = nowMs();
        await fn(b);
        ms.push(nowMs() - s);
      }
    }),
  );
  return { concurrency, eventsPerSec: round((batches * BATCH) / ((nowMs() - t0) / 1000), 0), batchMs: summarize(ms) };
}

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`;

/**
 * Sustained batch ingest (500 events of 200-2000 characters per batch), measured at four depths in
 * one run: raw pg multi-row INSERT into a plain table (baseline), our single ingest statement
 * (repository), the ingest service (validation + checksums), and `ingestEvents` over HTTP.
 */
export async function ingestThroughput(): Promise<void> {
  const worker = process.env.BENCH_WORKER !== '0';
  await withBenchApp(
    async ({ app, url, adminToken, postgresUrl }) => {
      const batches = Math.ceil(TOTAL / BATCH);
      const pg = new Client({ connectionString: postgresUrl });
      await pg.connect();
      await pg.query(
        `CREATE TABLE public.bench_plain (id uuid DEFAULT gen_random_uuid(), namespace text, source text, source_event_id text, kind text, role text, conversation_id text, sequence_num int, content text, occurred_at timestamptz)`,
      );
      const raw = await timed(batches, async (b) => {
        const rows = batchOf('raw', b);
        await pg.query(
          `INSERT INTO public.bench_plain (namespace, source, source_event_id, kind, role, conversation_id, sequence_num, content, occurred_at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::timestamptz[])`,
          [
            rows.map((r) => r.namespace),
            rows.map((r) => r.source),
            rows.map((r) => r.sourceEventId),
            rows.map((r) => r.kind),
            rows.map((r) => r.role),
            rows.map((r) => r.conversationId),
            rows.map((r) => r.sequenceNum),
            rows.map((r) => r.content),
            rows.map((r) => r.occurredAt),
          ],
        );
      });
      await pg.query('DROP TABLE public.bench_plain');
      await pg.end();

      // The hash-chain sealer's work while each phase ran (links of the bench namespace written
      // during it), and after the last phase how many events wait to be sealed and how long the
      // sealer takes to seal them: the pacing (gold/portability/chain-sealer.ts) moves sealing
      // out of busy ingest into the time after it, whatever the machine's load.
      const chain = new Client({ connectionString: postgresUrl });
      await chain.connect();
      const links = async (): Promise<number> =>
        Number((await chain.query(`SELECT count(*)::bigint AS n FROM ops.hash_chain WHERE namespace = 'bench-ingest'`)).rows[0].n);
      const unsealedEvents = async (): Promise<number> =>
        Number(
          (
            await chain.query(
              `SELECT (SELECT count(*) FROM bronze.events WHERE namespace = 'bench-ingest') - (SELECT count(*) FROM ops.hash_chain WHERE namespace = 'bench-ingest' AND kind = 'event') AS n`,
            )
          ).rows[0].n,
        );
      const sealedDuring: Record<string, number> = {};
      const during = async <T>(phase: string, run: () => Promise<T>): Promise<T> => {
        const before = await links();
        const out = await run();
        sealedDuring[phase] = (await links()) - before;
        return out;
      };

      const limits = app.config.limits;
      const repo = await during('ingestStatement', () =>
        timed(batches, async (b) => {
          const normalized = batchOf('repo', b).map((e) => {
            const v = validateSubmission(e, limits, new Date());
            if (!v.ok) throw new Error(v.reason);
            return v.event;
          });
          await app.repositories.events.insertNew(normalized);
        }),
      );

      const admin = await app.services.tokens.authenticate(`Bearer ${adminToken}`);
      const service = await during('ingestService', () =>
        timed(batches, async (b) => {
          await app.services.ingest.ingestBatch(admin as AuthContext, batchOf('service', b));
        }),
      );

      const overHttp = (run: string) => async (b: number) => {
        const res = await fetch(`${url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
          body: JSON.stringify({ query: INGEST, variables: { input: batchOf(run, b) } }),
        });
        const body = (await res.json()) as { data?: { ingestEvents: Array<{ status: string }> } };
        if (body.data?.ingestEvents.filter((r) => r.status === 'CREATED').length !== BATCH)
          throw new Error(`batch ${b} not fully created: ${JSON.stringify(body).slice(0, 300)}`);
      };
      app.queryCounter.reset();
      const http = await during('ingestEventsOverHttp', () => timed(batches, overHttp('http')));
      const roundTripCount = app.queryCounter.count;
      const http4 = await during('ingestEventsOverHttp4Clients', () => timed(batches, overHttp('http4'), 4));
      const unsealedAtEnd = await unsealedEvents();
      const t0 = nowMs();
      let left = unsealedAtEnd;
      while (worker && left > 0 && nowMs() - t0 < 300_000) {
        await new Promise((r) => setTimeout(r, 250));
        left = await unsealedEvents();
      }
      const sealedAllAfterMs = left === 0 ? round(nowMs() - t0, 0) : null;
      await chain.end();
      const roundTrips = roundTripCount / batches;

      report(worker ? 'ingest' : 'ingest-no-workers', {
        events: batches * BATCH,
        batchSize: BATCH,
        contentChars: '200-2000',
        rawPgMultiRowInsert: raw,
        ingestStatement: repo,
        ingestService: service,
        ingestEventsOverHttp: http,
        ingestEventsOverHttp4Clients: http4,
        ratioRawToHttp: round(raw.eventsPerSec / http.eventsPerSec, 2),
        ratioRawToHttp4Clients: round(raw.eventsPerSec / http4.eventsPerSec, 2),
        sqlRoundTripsPerBatchOverHttp: round(roundTrips, 2),
        backgroundWorkers: worker,
        sealer: { linksSealedDuring: sealedDuring, unsealedEventsAtEnd: unsealedAtEnd, sealedAllAfterMs },
      });
    },
    { worker },
  );
}
