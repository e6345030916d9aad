import { randomUUID } from 'node:crypto';
import { Driver } from 'neo4j-driver';
import { mergeEntityNodes } from './cypher/entity-nodes';
import { EventNodeRow, mergeEventNodes } from './cypher/event-nodes';
import { syncFactEdges } from './cypher/fact-edges';
import { FactNodeRow, mergeFactNodes } from './cypher/fact-nodes';
import type { EventEmbedding } from '../silver/event-embedding.service';

/** Not a valid namespace (common/namespace.ts): the warm-up rows belong to no one, and no grant reaches them. */
export const WARM_UP_NAMESPACE = '#warm-up';
const WARM_UP_ROUNDS = 2;

/**
 * Runs the statements a first message meets once, with real rows, before the projector's first
 * batch and the API's first request. A fresh Neo4j plans each statement on first use, and its cold
 * JVM runs the first rows through index writers, Lucene readers and operators slowly: the first
 * event after a start took ~1.1 s to reach the graph and the first search 1.9-5 s, the next ones
 * ~0.1 s each (bench/results/start-stop-*.json). So: embed one passage, project a small
 * conversation (two turns, two people, a fact from each turn) into `WARM_UP_NAMESPACE` in one
 * committed transaction with the projector's own statements and search it (`search.warmUp`, when
 * this process serves the API), twice. Real batches and searches reuse the plans:
 * the local Neo4j caches one plan per statement text (LocalNeo4j.java). A Neo4j of your own
 * (NEO4J_URI) also keys them by a size bucket of each string and list parameter (1 row or 2-10,
 * a namespace of up to 10 characters or more), so there a first message of another size is
 * planned again.
 *
 * One copy of the rows stays until the next start. A cached plan remembers the label and index
 * counts it was planned on, and after `min_replan_interval` (LocalNeo4j.java: 2 minutes) Neo4j
 * plans it again when one of them moved by more than 75 % — and a count that goes to or from zero
 * moves by 100 %. When the warm-up deleted its rows, a new store's counts fell from 2 back to 0, so
 * a first message sent more than two minutes after the start met four search statements planned
 * again on a cold planner (4.2 s at load 4.5, bench/results/start-stop-replan2m-delay150s.json;
 * 978 ms on a quiet machine, 194 ms now: start-stop-base-delay150s / -keep-warmup-delay150s). So
 * each round writes new rows before it deletes the older ones (counts 4, then 2, never 0), and on
 * an empty store the plans of the first round (made on zero counts) are dropped after it
 * (`db.clearQueryCaches`), so the second round plans on rows. A first message then moves the counts
 * its plans remember from 4 or 2 to 3. The rows sit in a namespace no grant reaches, and every read
 * is scoped to a namespace. Best effort: a failure only means the first batch or search pays the
 * cost itself (and a failed round deletes every warm-up row).
 */
export async function warmUpGraph(driver: Driver, embedding: EventEmbedding | undefined, search: { warmUp(): Promise<void> } | undefined): Promise<void> {
  const emptyStore = await storeIsEmpty(driver);
  // Twice: on a cold JVM the first round took 8.6 s, the second still 0.6 s, a third 0.3 s.
  for (let round = 0; round < WARM_UP_ROUNDS; round++) {
    await warmUpRound(driver, embedding, search);
    if (round === 0 && emptyStore) await driver.executeQuery('CALL db.clearQueryCaches()').catch(() => undefined);
  }
}

/** No event, fact or entity at all (a new store): plans made now rest on zero counts. */
async function storeIsEmpty(driver: Driver): Promise<boolean> {
  const res = await driver.executeQuery(`RETURN COUNT { MATCH (e:Event) } + COUNT { MATCH (f:Fact) } + COUNT { MATCH (n:Entity) } AS n`);
  return Number(res.records[0]?.get('n') ?? 0) === 0;
}

async function warmUpRound(driver: Driver, embedding: EventEmbedding | undefined, search: { warmUp(): Promise<void> } | undefined): Promise<void> {
  let vector: number[] | null = null;
  let model: string | null = null;
  if (embedding) {
    try {
      const embedder = await embedding.embedder();
      vector = (await embedder.embed(['I switched my editor to helix last week.']))[0]?.map(Math.fround) ?? null;
      model = embedder.model;
    } catch {
      // The projector warns when it cannot embed; the statements still warm without a vector.
    }
  }
  const [first, second] = [warmUpEvent(vector, model), warmUpEvent(vector, model)] as const;
  const events: EventNodeRow[] = [
    { ...first, nextEventId: second.id },
    { ...second, previousEventId: first.id, sequenceNum: 2 },
  ];
  const [subject, object] = [randomUUID(), randomUUID()];
  const facts = [warmUpFact(first.id, subject, object, vector, model), warmUpFact(second.id, subject, object, vector, model)];
  const session = driver.session();
  let kept = false;
  try {
    // What a first message and its first facts go through; relationships, supersession and
    // erasure come later in a namespace's life and are left to plan on first use.
    await session.executeWrite(async (tx) => {
      await mergeEventNodes(tx, events);
      await mergeEntityNodes(
        tx,
        [subject, object].map((id, i) => ({ id, namespace: WARM_UP_NAMESPACE, type: 'person', name: i ? 'Helix' : 'Alex', aliases: [], retiredAt: null })),
      );
      await mergeFactNodes(tx, facts);
      await syncFactEdges(tx, facts);
    });
    await search?.warmUp();
    kept = true;
  } finally {
    await session.close();
    // The rows of earlier rounds and starts go once this round's are in; after a failure, all.
    await deleteWarmUpNodes(driver, kept ? [...events.map((e) => e.id), ...facts.map((f) => f.id), subject, object] : []);
  }
}

async function deleteWarmUpNodes(driver: Driver, keep: string[]): Promise<void> {
  for (const label of ['Fact', 'Event', 'Entity'])
    await driver.executeQuery(`MATCH (n:${label}) WHERE n.namespace = $ns AND NOT n.id IN $keep DETACH DELETE n`, { ns: WARM_UP_NAMESPACE, keep });
}

function warmUpEvent(embedding: number[] | null, embeddingModel: string | null): EventNodeRow {
  const at = new Date().toISOString();
  return {
    id: randomUUID(),
    namespace: WARM_UP_NAMESPACE,
    source: 'warm-up',
    kind: 'MESSAGE',
    conversationId: 'warm-up',
    sessionId: null,
    sequenceNum: 1,
    role: 'USER',
    actor: null,
    content: 'I switched my editor to helix last week.',
    occurredAt: at,
    ingestedAt: at,
    embedding,
    embeddingModel,
    previousEventId: null,
    nextEventId: null,
  };
}

function warmUpFact(eventId: string, subject: string, object: string, embedding: number[] | null, embeddingModel: string | null): FactNodeRow {
  const at = new Date().toISOString();
  return {
    id: randomUUID(),
    namespace: WARM_UP_NAMESPACE,
    statement: 'The user uses helix as their editor.',
    factType: 'preference',
    predicate: 'uses',
    object: 'helix',
    isNegation: false,
    confidence: 0.9,
    importance: 0.5,
    validFrom: at,
    validTo: null,
    recordedAt: at,
    retiredAt: null,
    extractionModel: 'warm-up',
    supersededBy: null,
    subjectEntityId: subject,
    objectEntityId: object,
    embedding,
    embeddingModel,
    sources: [{ eventId, spanStart: 0, spanEnd: 10, quote: 'I switched' }],
  };
}
