import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Driver, ManagedTransaction, Session } from 'neo4j-driver';
import { createLoaders } from '../src/scope/request-scope';
import { SearchService } from '../src/graph/search.service';
import { loadEmbedder } from '../src/app/models';
import { nowMs, percentile, report, round, withBenchApp } from './harness';
import { loadLocomo, locomoFile } from './locomo';
import { ingestTurns, poster, SEARCH, turnEvents, waitSettled } from './recall';

type Parts = Record<string, number[]>;

/**
 * A driver whose read transactions and statements are timed, each statement under its channel's
 * name (from its text), so a search's Neo4j time splits by channel. A statement's time runs from
 * sending it to its last record: statements pipelined in one transaction include their wait.
 */
function timedDriver(driver: Driver, parts: Parts, counts: { tx: number; statements: number }): Driver {
  return new Proxy(driver, {
    get(target, prop, receiver) {
      if (prop !== 'session') return Reflect.get(target, prop, receiver) as unknown;
      return (...args: Parameters<Driver['session']>): Session => {
        const session = target.session(...args);
        const executeRead = session.executeRead.bind(session);
        session.executeRead = (async <T>(work: (tx: ManagedTransaction) => Promise<T>) => {
          const t0 = nowMs();
          counts.tx += 1;
          try {
            return await executeRead((tx) =>
              work(
                new Proxy(tx, {
                  get(t, p, r) {
                    if (p !== 'run') return Reflect.get(t, p, r) as unknown;
                    return (query: string, params?: Record<string, unknown>) => {
                      const label = labelOf(query);
                      const started = nowMs();
                      counts.statements += 1;
                      const result = t.run(query, params);
                      result.then(
                        () => (parts[`neo4j statement: ${label}`] ??= []).push(nowMs() - started),
                        () => undefined,
                      );
                      return result;
                    };
                  },
                }),
              ),
            );
          } finally {
            (parts['neo4j read transaction'] ??= []).push(nowMs() - t0);
          }
        }) as Session['executeRead'];
        return session;
      };
    },
  });
}

function labelOf(query: string): string {
  const q = query.replace(/\s+/g, ' ');
  if (/queryNodes\('fact_statement/.test(q)) return 'fact keyword';
  if (/queryNodes\('entity_name/.test(q)) return 'entity names';
  if (/queryNodes\('event_text/.test(q)) return 'event keyword';
  if (/queryNodes\('fact_embedding/.test(q)) return 'fact vector index';
  if (/queryNodes\('event_embedding/.test(q)) return 'event vector index';
  if (/UNWIND \$seedIds/.test(q)) return 'graph expansion';
  if (/^ ?MATCH \(n:Fact\)/.test(q)) return 'fact count + exact cosine';
  if (/^ ?MATCH \(n:Event\)/.test(q)) return 'event count + exact cosine';
  if (/count\((f|e)\)/.test(q)) return /\(f:Fact\)/.test(q) ? 'fact count' : 'event count';
  if (/^ ?MATCH \(f:Fact\).*similarity\.cosine/.test(q)) return 'fact exact cosine';
  if (/^ ?MATCH \(e:Event\).*similarity\.cosine/.test(q)) return 'event exact cosine';
  return q.slice(0, 40);
}

const summary = (xs: number[]) => ({
  n: xs.length,
  p50: round(percentile(xs, 50)),
  p95: round(percentile(xs, 95)),
  mean: round(xs.reduce((a, b) => a + b, 0) / xs.length),
});

/**
 * `npm run bench -- search-profile`: where a searchMemory call's time goes on a LoCoMo namespace
 * (the first development conversation, derived by the offline models): the query embedding, each
 * Neo4j read transaction (by channel), the Postgres hydration, the whole call in process and over
 * HTTP. Every question is asked once; the embedding is timed on its own before the call, on a
 * separate embedder whose cache does not serve the call.
 */
export async function searchProfile(): Promise<void> {
  const convs = loadLocomo();
  if (!convs) {
    process.stdout.write(`search-profile: skipped, no LoCoMo development split at ${locomoFile()}\n`);
    return;
  }
  const conv = convs[0] as (typeof convs)[number];
  await withBenchApp(async ({ app, url, adminToken }) => {
    const post = poster(url, adminToken);
    const ns = `profile-${conv.sampleId}-${randomBytes(3).toString('hex')}`;
    await ingestTurns(post, turnEvents(ns, conv));
    await waitSettled(post, [ns], 1_800_000);
    const embedder = await loadEmbedder(app.config, () => undefined);
    const parts: Parts = {};
    const counts = { tx: 0, statements: 0 };
    const search = new SearchService(timedDriver(app.neo4j, parts, counts), async () => embedder);
    const auth = await app.services.tokens.authenticate(`Bearer ${app.config.adminToken}`);
    const questions = conv.questions.slice(0, Number(process.env.BENCH_PROFILE_QUESTIONS ?? 150));
    for (const q of questions.slice(0, 5)) await post(SEARCH, { ns, q: `${q.question} warm`, limit: 10 });
    const loadAtStart = os.loadavg()[0] as number;
    const http: number[] = [];
    const inProcess: number[] = [];
    const embed: number[] = [];
    const hydrate: number[] = [];
    const neo4jTx: number[] = [];
    const neo4jStatements: number[] = [];
    for (const q of questions) {
      // The query's embedding on its own (a fresh text for this embedder: nothing cached).
      let t0 = nowMs();
      await embedder.embedQuery([`${q.question} `]);
      embed.push(nowMs() - t0);
      // The whole call in process, its hydration timed through the loaders.
      const loaders = createLoaders(app.services);
      const timed =
        <A, R>(f: (a: A) => Promise<R>) =>
        async (a: A) => {
          const s = nowMs();
          try {
            return await f(a);
          } finally {
            hydrate.push(nowMs() - s);
          }
        };
      const before = { ...counts };
      t0 = nowMs();
      await search.search(
        auth,
        { namespace: ns, query: q.question, limit: 10 },
        { facts: timed((ids: string[]) => loaders.factById.loadMany(ids)), events: timed((ids: string[]) => loaders.eventById.loadMany(ids)) },
      );
      inProcess.push(nowMs() - t0);
      neo4jTx.push(counts.tx - before.tx);
      neo4jStatements.push(counts.statements - before.statements);
      // Over HTTP through the service's own SearchService (its embedder has not seen this text either).
      t0 = nowMs();
      await post(SEARCH, { ns, q: q.question, limit: 10 });
      http.push(nowMs() - t0);
    }
    const [facts, events] = await Promise.all([
      app.neo4j.executeQuery('MATCH (f:Fact {namespace: $ns}) RETURN count(f) AS n', { ns }),
      app.neo4j.executeQuery('MATCH (e:Event {namespace: $ns}) RETURN count(e) AS n', { ns }),
    ]);
    report(`search-profile${process.env.BENCH_RESULT_SUFFIX ?? ''}`, {
      namespace: { conversation: conv.sampleId, events: Number(events.records[0]?.get('n')), facts: Number(facts.records[0]?.get('n')) },
      questions: questions.length,
      ms: {
        httpSearchMemory: summary(http),
        inProcessSearch: summary(inProcess),
        queryEmbedding: summary(embed),
        hydrationPerLoaderCall: summary(hydrate),
        ...Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, summary(v)])),
      },
      neo4jPerSearch: { transactions: summary(neo4jTx).p50, statements: summary(neo4jStatements).p50 },
      loadAverage1m: { atStart: round(loadAtStart), atEnd: round(os.loadavg()[0] as number) },
      note: "in-process search = SearchService.search with a timed driver (every read transaction timed by channel) and the request loaders; HTTP = the service's own searchMemory with { kind channels evidence }; the embedding timed alone before each call; neo4j parts overlap (channels run concurrently), so they do not add up to the whole",
    });
    if ('close' in embedder && typeof embedder.close === 'function') await (embedder.close as () => Promise<void>)();
  });
}
