import neo4j, { Driver, ManagedTransaction, Session } from 'neo4j-driver';
import { namespaceKey } from './namespace-key';
import { wordKeys } from '../../common/word-forms';

export interface Neo4jConnection {
  uri: string;
  user: string;
  password: string;
}

/**
 * A driver with short failure times: a dead Neo4j should be reported in seconds, not after the
 * driver's default 30 s of retries. Integers come back as JS numbers (`disableLosslessIntegers`).
 */
export function createNeo4jDriver(conn: Neo4jConnection, opts: { maxRetryMs?: number } = {}): Driver {
  return neo4j.driver(conn.uri, neo4j.auth.basic(conn.user, conn.password), {
    disableLosslessIntegers: true,
    maxTransactionRetryTime: opts.maxRetryMs ?? 3_000,
    connectionTimeout: 5_000,
    connectionAcquisitionTimeout: 10_000,
    maxConnectionPoolSize: 50,
    logging: { level: 'error', logger: () => undefined },
  });
}

/**
 * Versioned schema statements, each idempotent (`IF NOT EXISTS`), applied at every start.
 * Append new statements; never edit a shipped one, except that an index a later statement drops
 * is no longer created (the end state is the same for every store, and a start no longer builds
 * and drops it, which also raced when the API and the worker started together).
 */
export const NEO4J_SCHEMA: readonly string[] = [
  'CREATE CONSTRAINT event_id IF NOT EXISTS FOR (e:Event) REQUIRE e.id IS UNIQUE',
  'CREATE INDEX event_namespace IF NOT EXISTS FOR (e:Event) ON (e.namespace)',
  'CREATE CONSTRAINT fact_id IF NOT EXISTS FOR (f:Fact) REQUIRE f.id IS UNIQUE',
  'CREATE INDEX fact_namespace IF NOT EXISTS FOR (f:Fact) ON (f.namespace)',
  'CREATE CONSTRAINT entity_id IF NOT EXISTS FOR (n:Entity) REQUIRE n.id IS UNIQUE',
  'CREATE INDEX entity_namespace IF NOT EXISTS FOR (n:Entity) ON (n.namespace)',
  // Graph projection of Silver: RELATED edges are MERGEd and looked up by their Silver relationship id.
  'CREATE INDEX related_id IF NOT EXISTS FOR ()-[r:RELATED]-() ON (r.id)',
  // Memory search (docs/search.md). One vector index without a fixed dimension: the vector-2.0
  // provider indexes vectors of any length and a query only meets vectors of its own length, so
  // MiniLM/hashing (384) and OpenAI (1536, 3072, ...) embeddings share it; search also requires the same embeddingModel.
  "CREATE VECTOR INDEX fact_embedding IF NOT EXISTS FOR (f:Fact) ON (f.embedding) OPTIONS { indexConfig: { `vector.similarity_function`: 'cosine' } }",
  'CREATE INDEX fact_namespace_embedding_model IF NOT EXISTS FOR (f:Fact) ON (f.namespace, f.embeddingModel)',
  // Recall over raw events and namespace-scoped keyword channels (docs/search.md). Every fulltext
  // index holds the namespace as one term (`nsKey`, platform/neo4j/namespace-key.ts) and every query
  // requires it, so Lucene scopes the match itself. Statements and contents are indexed by their
  // word keys (below) with the english analyzer; names keep the default analyzer.
  'CREATE FULLTEXT INDEX entity_name_ns_fulltext IF NOT EXISTS FOR (n:Entity) ON EACH [n.name, n.aliases, n.nsKey]',
  "CREATE VECTOR INDEX event_embedding IF NOT EXISTS FOR (e:Event) ON (e.embedding) OPTIONS { indexConfig: { `vector.similarity_function`: 'cosine' } }",
  'CREATE INDEX event_namespace_embedding_model IF NOT EXISTS FOR (e:Event) ON (e.namespace, e.embeddingModel)',
  // Replaced by the namespace-scoped indexes above (unscoped statement and name indexes).
  'DROP INDEX fact_statement_fulltext IF EXISTS',
  'DROP INDEX entity_name_fulltext IF EXISTS',
  // Gold (docs/gold.md): resolved entities and their relationships, MERGEd by Postgres id.
  'CREATE CONSTRAINT gold_entity_id IF NOT EXISTS FOR (g:GoldEntity) REQUIRE g.id IS UNIQUE',
  'CREATE INDEX gold_entity_namespace IF NOT EXISTS FOR (g:GoldEntity) ON (g.namespace)',
  'CREATE INDEX gold_related_id IF NOT EXISTS FOR ()-[r:GOLD_RELATED]-() ON (r.id)',
  // The graph channel of memory search matches Gold names and aliases too (docs/search.md), scoped by nsKey like the Silver names.
  'CREATE FULLTEXT INDEX gold_entity_name_ns_fulltext IF NOT EXISTS FOR (g:GoldEntity) ON EACH [g.name, g.aliases, g.nsKey]',
  // The event keyword channel also matches the turn before each event (`context`, at a lower
  // weight; docs/search.md); `contextEventId` finds the turn whose context an erased event was.
  // What a turn says (`body`, its content without the speaker label) and who says it (`speaker`)
  // are separate fields, so a name in a question matches the speaker at its own weight, not as a
  // word of every turn that person wrote (speaker-label.ts).
  'CREATE INDEX event_context_event_id IF NOT EXISTS FOR (e:Event) ON (e.contextEventId)',
  // Replaced by event_body_fulltext, itself replaced by event_stems_fulltext below: the first index was on [content, nsKey], the second on [content, context, nsKey].
  'DROP INDEX event_content_fulltext IF EXISTS',
  'DROP INDEX event_text_fulltext IF EXISTS',
  // Word forms meet (issue 44, docs/search.md "Word forms"): statements and what turns say are
  // matched by their words' keys (`stems`, common/word-forms.ts: "allergic" and "allergies" share
  // one), which the projection computes; an analyzer of Neo4j's own cannot join such derivations.
  // The statement and body indexes they replace are dropped; `backfillWordKeys` gives the nodes
  // projected before their keys, and the new indexes are built over them before the API serves.
  "CREATE FULLTEXT INDEX fact_stems_ns_fulltext IF NOT EXISTS FOR (f:Fact) ON EACH [f.stems, f.nsKey] OPTIONS { indexConfig: { `fulltext.analyzer`: 'english' } }",
  "CREATE FULLTEXT INDEX event_stems_fulltext IF NOT EXISTS FOR (e:Event) ON EACH [e.stems, e.context, e.speaker, e.nsKey] OPTIONS { indexConfig: { `fulltext.analyzer`: 'english' } }",
  'DROP INDEX fact_statement_ns_fulltext IF EXISTS',
  'DROP INDEX event_body_fulltext IF EXISTS',
];

/** Another process created or dropped the same schema rule between our check and our change. */
function lostSchemaRace(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    typeof code === 'string' &&
    ['EquivalentSchemaRuleAlreadyExists', 'IndexAlreadyExists', 'ConstraintAlreadyExists', 'IndexNotFound', 'ConstraintNotFound', 'IndexDropFailed'].some(
      (c) => code === `Neo.ClientError.Schema.${c}` || code === `Neo.DatabaseError.Schema.${c}`,
    )
  );
}

/** Runs an idempotent statement again when a concurrent start deadlocked it (Neo.TransientError.*). */
async function retryTransient(run: () => Promise<unknown>, attempts = 5): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await run();
      return;
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      if (attempt >= attempts || typeof code !== 'string' || !code.startsWith('Neo.TransientError.')) throw err;
      await new Promise((r) => setTimeout(r, 100 * attempt));
    }
  }
}

/**
 * Applies `NEO4J_SCHEMA` and the backfills. Every process (API, worker) runs it at start, often
 * at the same moment: a schema rule another process created or dropped meanwhile counts as
 * applied, and a backfill deadlocked by the other's is run again (both are idempotent).
 */
export async function applyNeo4jSchema(driver: Driver): Promise<void> {
  const session = driver.session();
  try {
    for (const statement of NEO4J_SCHEMA) {
      try {
        await session.run(statement);
      } catch (err) {
        if (!lostSchemaRace(err)) throw err;
      }
    }
    await retryTransient(() => backfillNamespaceKeys(session));
    await retryTransient(() => backfillVectorStorage(session));
    await retryTransient(() => backfillWordKeys(session));
    // A new index over existing nodes (event_stems_fulltext after an upgrade) is built in the
    // background and refuses queries until it is online: wait for it, up to 10 minutes.
    await session.run('CALL db.awaitIndexes(600)');
  } finally {
    await session.close();
  }
}

/**
 * Nodes projected before `nsKey` existed get it, namespace by namespace, so the scoped fulltext
 * indexes see them without a rebuild. A no-op (one index lookup per label) once done.
 */
async function backfillNamespaceKeys(session: Session): Promise<void> {
  for (const label of ['Event', 'Fact', 'Entity']) {
    const res = await session.run(`MATCH (n:${label}) WHERE n.nsKey IS NULL AND n.namespace IS NOT NULL RETURN DISTINCT n.namespace AS ns`);
    for (const ns of res.records.map((r) => String(r.get('ns')))) {
      await session.run(`MATCH (n:${label}) WHERE n.namespace = $ns AND n.nsKey IS NULL CALL (n) { SET n.nsKey = $key } IN TRANSACTIONS OF 10000 ROWS`, {
        ns,
        key: namespaceKey(ns),
      });
    }
  }
}

/**
 * Embeddings are stored as 32-bit floats (`db.create.setNodeVectorProperty`) with their length in
 * `embeddingDims`, which the exact vector channel filters on instead of reading every vector twice
 * (half its cost on a LoCoMo namespace, bench/results/search-profile-*.json). Nodes projected
 * before that (a list of 64-bit floats, no `embeddingDims`) are rewritten in place, so the channel
 * sees them without a rebuild. A no-op (one label scan) once done.
 */
async function backfillVectorStorage(session: Session): Promise<void> {
  for (const label of ['Event', 'Fact'])
    await session.run(
      `MATCH (n:${label}) WHERE n.embeddingDims IS NULL AND n.embedding IS NOT NULL
       CALL (n) {
         CALL db.create.setNodeVectorProperty(n, 'embedding', n.embedding)
         SET n.embeddingDims = size(n.embedding)
       } IN TRANSACTIONS OF 5000 ROWS`,
    );
}

/**
 * Nodes projected before word keys existed get them (`stems`: the keys of a fact's statement, of
 * what an event says), in batches, so the keyword channels match them without a re-projection.
 * The keys are computed here as the projection computes them (common/word-forms.ts), from the
 * text the node holds (overlays applied). A no-op (one lookup per label) once done.
 */
async function backfillWordKeys(session: Session, batch = 2_000): Promise<void> {
  for (const [label, text] of [
    ['Fact', 'n.statement'],
    ['Event', 'coalesce(n.body, n.content)'],
  ] as const)
    for (;;) {
      const res = await session.run(`MATCH (n:${label}) WHERE n.stems IS NULL AND ${text} IS NOT NULL RETURN n.id AS id, ${text} AS text LIMIT $batch`, {
        batch: neo4j.int(batch),
      });
      if (res.records.length === 0) break;
      const rows = res.records.map((r) => ({ id: String(r.get('id')), stems: wordKeys(String(r.get('text'))).join(' ') }));
      await session.run(`UNWIND $rows AS r MATCH (n:${label} {id: r.id}) SET n.stems = r.stems`, { rows });
      if (res.records.length < batch) break;
    }
}

/** Checks that Neo4j answers within `timeoutMs`. */
export async function pingNeo4j(driver: Driver, timeoutMs = 2_000): Promise<void> {
  const session = driver.session({ defaultAccessMode: neo4j.session.READ });
  try {
    await session.run('RETURN 1', {}, { timeout: timeoutMs });
  } finally {
    await session.close();
  }
}

/** Runs `work` in one managed read transaction (retried by the driver on transient errors) of a fresh session. */
export async function readTransaction<T>(driver: Driver, work: (tx: ManagedTransaction) => Promise<T>): Promise<T> {
  const session = driver.session({ defaultAccessMode: neo4j.session.READ });
  try {
    return await session.executeRead(work);
  } finally {
    await session.close();
  }
}
