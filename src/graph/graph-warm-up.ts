import { randomUUID } from 'node:crypto';
import { Driver } from 'neo4j-driver';
import { mergeEntityNodes } from './cypher/entity-nodes';
import { EventNodeRow, mergeEventNodes } from './cypher/event-nodes';
import { syncFactEdges } from './cypher/fact-edges';
import { FactNodeRow, mergeFactNodes } from './cypher/fact-nodes';
import { mergeGoldEntityNodes } from './cypher/gold-nodes';
import type { EventEmbedding } from '../silver/event-embedding.service';

/** Not a valid namespace (common/namespace.ts): the warm-up rows belong to no one, and no grant reaches them. */
export const WARM_UP_NAMESPACE = '#warm-up';
const WARM_UP_ROUNDS = 2;
/**
 * Turns of the warm-up conversation, each with a fact: enough that every search statement runs its
 * per-row work (reading a vector, scoring a Lucene match, walking an entity's facts) dozens of times
 * per warm-up search, so the background warm-up (`SearchService.keepWarm`) gets Neo4j's JIT to
 * compile that work too, not only the per-statement part (two rows did not:
 * bench/results/recall-s19-*.json, docs/search.md).
 */
export const WARM_UP_TURNS = 48;
/**
 * The warm-up conversation's words are made up: Neo4j's fulltext indexes are shared by every
 * namespace, and a word's BM25 weight (its document frequency) counts every namespace's nodes, so
 * dozens of warm-up rows of English words would shift the keyword scores of real namespaces.
 */
const WARM_UP_TEXTS = [
  'Zorvex gaddrow plovash trundix vemmory yarvel.',
  'Pelquin plovash zorvex drosk vemmory.',
  'Trundix yarvel gaddrow pelquin zorvex.',
  'Vemmory drosk plovash yarvel trundix gaddrow.',
  'Zorvex pelquin drosk gaddrow yarvel.',
  'Plovash trundix vemmory pelquin drosk zorvex.',
];
/** The questions the warm-up searches ask (`SearchService.warmUp`, `keepWarm`): made-up words as above, a person's name among them. */
export const WARM_UP_QUESTIONS = [
  'which plovash does Zorvex gaddrow?',
  'what did Zorvex trundix?',
  'does Zorvex still vemmory pelquin?',
  'when did Zorvex drosk yarvel?',
] as const;
const WARM_UP_NAMES = ['Zorvex', 'Pelquin'] as const;
/** The name the warm-up's Gold entity goes by (the first person, promoted): what warm-up reads by name ask for. */
export const WARM_UP_NAME = WARM_UP_NAMES[0];

/** The rows one warm-up round projected, in `WARM_UP_NAMESPACE`: what a `WarmUpRead` reads. */
export interface WarmUpRows {
  readonly namespace: string;
  readonly factIds: readonly string[];
  readonly eventIds: readonly string[];
  readonly entityIds: readonly string[];
  readonly goldEntityIds: readonly string[];
}

/**
 * A read path's statements run once over the warm-up rows (best effort: it must not throw for
 * rows Postgres does not have). The API's process hands in search, provenance and about.
 */
export type WarmUpRead = (rows: WarmUpRows) => Promise<void>;

/**
 * Runs the statements a first message meets once, with real rows, before the projector's first
 * batch and the API's first request. A fresh Neo4j plans each statement on first use, and its cold
 * JVM runs the first rows through index writers, Lucene readers and operators slowly: the first
 * event after a start took ~1.1 s to reach the graph and the first search 1.9-5 s, the next ones
 * ~0.1 s each (bench/results/start-stop-*.json). So: embed one passage, project a small
 * conversation (`WARM_UP_TURNS` turns, two people, a fact from each turn) into
 * `WARM_UP_NAMESPACE` in one committed transaction with the projector's own statements, with a
 * Gold entity, and run the read paths handed in over it (`reads`: search, provenance and about,
 * where this process serves the API), twice. Real batches and searches reuse the plans:
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
 * each round writes new rows before it deletes the older ones (counts double, then halve, never
 * 0), and on an empty store the plans of the first round (made on zero counts) are dropped after it
 * (`db.clearQueryCaches`), so the second round plans on rows. A first message then moves the counts
 * its plans remember by one row. The rows sit in a namespace no grant reaches, and every read
 * is scoped to a namespace. Best effort: a failure only means the first batch or search pays the
 * cost itself (and a failed round deletes every warm-up row).
 */
export async function warmUpGraph(driver: Driver, embedding: EventEmbedding | undefined, reads: readonly WarmUpRead[] = []): Promise<void> {
  const emptyStore = await storeIsEmpty(driver);
  // Twice: on a cold JVM the first round took 8.6 s, the second still 0.6 s, a third 0.3 s.
  for (let round = 0; round < WARM_UP_ROUNDS; round++) {
    await warmUpRound(driver, embedding, reads);
    if (round === 0 && emptyStore) await driver.executeQuery('CALL db.clearQueryCaches()').catch(() => undefined);
  }
}

/** No event, fact or entity at all (a new store): plans made now rest on zero counts. */
async function storeIsEmpty(driver: Driver): Promise<boolean> {
  const res = await driver.executeQuery(`RETURN COUNT { MATCH (e:Event) } + COUNT { MATCH (f:Fact) } + COUNT { MATCH (n:Entity) } AS n`);
  return Number(res.records[0]?.get('n') ?? 0) === 0;
}

async function warmUpRound(driver: Driver, embedding: EventEmbedding | undefined, reads: readonly WarmUpRead[]): Promise<void> {
  let vector: number[] | null = null;
  let model: string | null = null;
  if (embedding) {
    try {
      const embedder = await embedding.embedder();
      vector = (await embedder.embed([WARM_UP_TEXTS[0] as string]))[0] ?? null;
      model = embedder.model;
    } catch {
      // The projector warns when it cannot embed; the statements still warm without a vector.
    }
  }
  // One conversation of WARM_UP_TURNS turns, each turn linked to the next, each with a fact about
  // the same two entities; the vectors are the one embedding, each turned a little (warmUpVector),
  // so the cosine scans sort distinct scores without embedding every turn.
  const ids = Array.from({ length: WARM_UP_TURNS }, () => randomUUID());
  const events: EventNodeRow[] = ids.map((id, i) => ({
    ...warmUpEvent(id, i, warmUpVector(vector, 2 * i), model),
    previousEventId: ids[i - 1] ?? null,
    nextEventId: ids[i + 1] ?? null,
  }));
  const [subject, object, gold] = [randomUUID(), randomUUID(), randomUUID()];
  const facts = ids.map((id, i) => warmUpFact(id, i, subject, object, warmUpVector(vector, 2 * i + 1), model));
  const rows: WarmUpRows = {
    namespace: WARM_UP_NAMESPACE,
    factIds: facts.map((f) => f.id),
    eventIds: ids,
    entityIds: [subject, object],
    goldEntityIds: [gold],
  };
  const session = driver.session();
  let kept = false;
  try {
    // What a first message and its first facts go through; relationships, supersession and
    // erasure come later in a namespace's life and are left to plan on first use.
    await session.executeWrite(async (tx) => {
      await mergeEventNodes(tx, events);
      await mergeEntityNodes(
        tx,
        [subject, object].map((id, i) => ({
          id,
          namespace: WARM_UP_NAMESPACE,
          type: 'person',
          name: WARM_UP_NAMES[i] as string,
          aliases: [],
          retiredAt: null,
        })),
      );
      await mergeFactNodes(tx, facts);
      await syncFactEdges(tx, facts);
      // The first person promoted: Gold reads (about, the graph channel over Gold) meet a Gold entity.
      const at = new Date().toISOString();
      await mergeGoldEntityNodes(tx, [
        {
          id: gold,
          namespace: WARM_UP_NAMESPACE,
          type: 'person',
          label: 'Person',
          name: WARM_UP_NAME,
          aliases: [],
          confidence: 0.9,
          version: 1,
          promotedAt: at,
          retiredAt: null,
          memberIds: [subject],
        },
      ]);
    });
    for (const read of reads) await read(rows);
    kept = true;
  } finally {
    await session.close();
    // The rows of earlier rounds and starts go once this round's are in; after a failure, all.
    await deleteWarmUpNodes(driver, kept ? [...events.map((e) => e.id), ...facts.map((f) => f.id), subject, object, gold] : []);
  }
}

async function deleteWarmUpNodes(driver: Driver, keep: string[]): Promise<void> {
  for (const label of ['Fact', 'Event', 'Entity', 'GoldEntity'])
    await driver.executeQuery(`MATCH (n:${label}) WHERE n.namespace = $ns AND NOT n.id IN $keep DETACH DELETE n`, { ns: WARM_UP_NAMESPACE, keep });
}

/**
 * The embedding turned by a small deterministic offset of its own for row `i` (then of unit length
 * and 32-bit, as the projector stores vectors): distinct rows, distinct scores.
 */
function warmUpVector(vector: number[] | null, i: number): number[] | null {
  if (!vector) return null;
  const turned = vector.map((x, j) => x + 0.05 * Math.sin((i + 1) * (j + 1) * 0.618));
  const norm = Math.hypot(...turned) || 1;
  return turned.map((x) => Math.fround(x / norm));
}

function warmUpEvent(id: string, i: number, embedding: number[] | null, embeddingModel: string | null): EventNodeRow {
  const at = new Date().toISOString();
  return {
    id,
    namespace: WARM_UP_NAMESPACE,
    source: 'warm-up',
    kind: 'MESSAGE',
    conversationId: 'warm-up',
    sessionId: null,
    sequenceNum: i + 1,
    role: 'USER',
    actor: null,
    content: WARM_UP_TEXTS[i % WARM_UP_TEXTS.length] as string,
    occurredAt: at,
    ingestedAt: at,
    embedding,
    embeddingModel,
    previousEventId: null,
    nextEventId: null,
  };
}

function warmUpFact(eventId: string, i: number, subject: string, object: string, embedding: number[] | null, embeddingModel: string | null): FactNodeRow {
  const at = new Date().toISOString();
  return {
    id: randomUUID(),
    namespace: WARM_UP_NAMESPACE,
    statement: `Zorvex ${(WARM_UP_TEXTS[(i + 3) % WARM_UP_TEXTS.length] as string).toLowerCase()}`,
    factType: 'preference',
    predicate: 'uses',
    object: 'pelquin',
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
