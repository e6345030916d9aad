import { Driver } from 'neo4j-driver';
import neo4j from 'neo4j-driver';
import { DataSource } from 'typeorm';
import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { mergeEntityNodes } from './cypher/entity-nodes';
import { mergeEventNodes } from './cypher/event-nodes';
import { syncFactEdges } from './cypher/fact-edges';
import { mergeFactNodes } from './cypher/fact-nodes';
import { deleteProjectedNodes, GRAPH_KEY_CYPHER, PROJECTED_LABELS, readGraphKeys } from './cypher/graph-admin';
import { GraphKeyCypher, readKeyDigests, readKeysInBuckets } from './cypher/key-digest';
import { bucketOf, countOf, differingBuckets, digestKeys, KindDigests } from './key-buckets';
import { CypherRunner } from './cypher/cypher-runner';
import { mergeRelationshipEdges } from './cypher/relationship-edges';
import { GraphSourceRepository, PageCursor } from './graph-source.repository';
import { Sql } from '../platform/postgres/sql';
import { inDrainTurn, OUTBOX_DRAINS } from '../platform/outbox-drain';
import {
  GOLD_GRAPH_KEY_CYPHER,
  GoldEntityNodeRow,
  GoldRelationshipEdgeRow,
  mergeGoldEntityNodes,
  mergeGoldRelationshipEdges,
  readGoldGraphKeys,
} from './cypher/gold-nodes';
import { EventEmbeddingRepository } from '../silver/event-embedding.repository';
import { currentEventModel, embedMissing, EventEmbedding } from '../silver/event-embedding.service';
import { composeEntityRows, composeEventRows, composeFactRows, ProjectionOverlays } from './overlay-projection';

export type GraphRebuildPhase = 'delete' | 'events' | 'entities' | 'facts' | 'relationships' | 'gold';

export interface GraphRebuildProgress {
  phase: GraphRebuildPhase;
  /** Rows done in this phase so far (nodes deleted for `delete`). */
  done: number;
}

export interface GraphRebuildResult {
  deleted: number;
  events: number;
  entities: number;
  facts: number;
  relationships: number;
  /** Gold entities and relationships. */
  gold: number;
  ms: number;
}

/** Labels and relationship types the consistency check compares. */
export const GRAPH_KINDS = ['Event', 'Fact', 'Entity', 'DERIVED_FROM', 'ABOUT', 'SUPERSEDES', 'RELATED', 'GoldEntity', 'MERGED_FROM', 'GOLD_RELATED'] as const;
export type GraphKind = (typeof GRAPH_KINDS)[number];

/** How the graph spells every kind's key (Silver and Gold). */
const GRAPH_KEYS: Record<string, GraphKeyCypher> = { ...GRAPH_KEY_CYPHER, ...GOLD_GRAPH_KEY_CYPHER };

/** Neo4j refused the digest statement because APOC's md5 is not installed. */
function lacksApocMd5(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown };
  return typeof err.code === 'string' && err.code.startsWith('Neo.ClientError.') && typeof err.message === 'string' && err.message.includes('apoc.util.md5');
}

export interface GraphConsistency {
  ok: boolean;
  postgres: Record<GraphKind, number>;
  neo4j: Record<GraphKind, number>;
  /** `Kind:key` (node id, relationship id, or `from->to@detail` for edges), capped. */
  missingInNeo4j: string[];
  extraInNeo4j: string[];
}

/**
 * Gold's rows as the graph holds them (gold/promotion/gold-graph-source.ts implements it): pages
 * of node and edge rows in id order for a rebuild, and the keys a consistency check compares.
 */
export interface GoldGraphSource {
  entitiesPage(c: PageCursor): Promise<GoldEntityNodeRow[]>;
  relationshipsPage(c: PageCursor): Promise<GoldRelationshipEdgeRow[]>;
  /** `GoldEntity`, `MERGED_FROM` and `GOLD_RELATED` keys of a namespace, in the shape `readGoldGraphKeys` gives for Neo4j. */
  keys(namespace: string): Promise<Record<string, string[]>>;
}

/** What a rebuild is handed by the composition root (src/app/app.ts): Gold's rows and overlays, and Silver's event embeddings. */
export interface GraphRebuildPorts {
  gold: GoldGraphSource;
  /** Overlay spans, so the rebuilt graph holds what readers see (as the projector writes it). */
  overlays: ProjectionOverlays;
  /** Embeds events without a stored vector of the current model; unset: events go without vectors. */
  embedding?: EventEmbedding;
}

export interface GraphRebuildOptions {
  batchSize?: number;
  onProgress?: (p: GraphRebuildProgress) => void;
}

/**
 * Neo4j is a projection: `rebuildGraph` deletes a namespace's (or every namespace's) Event, Fact
 * and Entity nodes with their edges and re-projects them from Postgres with the projector's own
 * graph operations; `checkConsistency` compares node ids and edge keys per label/type.
 * A rebuild runs alongside the outbox projector safely: each page is read and written in the
 * projector's turn (`inDrainTurn`), so the two write in the order they read, and what changed
 * after a page was read has outbox rows the projector writes after it.
 */
export class GraphRebuildService {
  private readonly source: GraphSourceRepository;
  private readonly embeddings: EventEmbeddingRepository;
  private readonly gold: GoldGraphSource;
  private readonly overlays: ProjectionOverlays;
  private readonly embedding: EventEmbedding | undefined;
  private readonly sql: Sql;

  constructor(
    ds: DataSource,
    private readonly driver: Driver,
    ports: GraphRebuildPorts,
  ) {
    this.source = new GraphSourceRepository(ds);
    this.sql = Sql.of(ds);
    this.embeddings = new EventEmbeddingRepository(this.sql);
    this.gold = ports.gold;
    this.overlays = ports.overlays;
    this.embedding = ports.embedding;
  }

  async rebuildGraph(namespace: string | null, opts: GraphRebuildOptions = {}): Promise<GraphRebuildResult> {
    const t0 = Date.now();
    const batchSize = opts.batchSize ?? 1000;
    const progress = opts.onProgress ?? (() => undefined);

    let deleted = 0;
    const session = this.driver.session();
    try {
      for (const label of [...PROJECTED_LABELS, 'GoldEntity']) {
        deleted += await deleteProjectedNodes(session, label, namespace, batchSize);
        progress({ phase: 'delete', done: deleted });
      }
    } finally {
      await session.close();
    }

    // Stored event vectors are replayed; an event without one of the current model is embedded (and stored) on the way.
    const model = await currentEventModel(this.embedding);
    const eventsPage = async (c: PageCursor) => {
      const rows = await this.source.eventsPage(c, model);
      const embedded = this.embedding ? await embedMissing(this.embeddings, rows, this.embedding) : rows;
      return composeEventRows(embedded, this.overlays, this.embedding?.embedder, this.embedding?.warn ?? (() => undefined));
    };
    const events = await this.replay(namespace, batchSize, 'events', eventsPage, (tx, rows) => mergeEventNodes(tx, rows), progress);
    const entities = await this.replay(
      namespace,
      batchSize,
      'entities',
      async (c) => composeEntityRows(await this.source.entitiesPage(c), this.overlays, (ns, r) => this.source.hiddenNames(ns, r)),
      (tx, rows) => mergeEntityNodes(tx, rows),
      progress,
    );
    const facts = await this.replay(
      namespace,
      batchSize,
      'facts',
      async (c) => composeFactRows(await this.source.factsPage(c), this.overlays, this.embedding?.embedder, this.embedding?.warn ?? (() => undefined)),
      async (tx, rows) => {
        await mergeFactNodes(tx, rows);
        await syncFactEdges(tx, rows);
      },
      progress,
    );
    const relationships = await this.replay(
      namespace,
      batchSize,
      'relationships',
      (c) => this.source.relationshipsPage(c),
      (tx, rows) => mergeRelationshipEdges(tx, rows),
      progress,
    );
    const goldEntities = await this.replay(
      namespace,
      batchSize,
      'gold',
      (c) => this.gold.entitiesPage(c),
      (tx, rows) => mergeGoldEntityNodes(tx, rows),
      progress,
    );
    const goldRelationships = await this.replay(
      namespace,
      batchSize,
      'gold',
      (c) => this.gold.relationshipsPage(c),
      (tx, rows) => mergeGoldRelationshipEdges(tx, rows),
      progress,
    );
    return { deleted, events, entities, facts, relationships, gold: goldEntities + goldRelationships, ms: Date.now() - t0 };
  }

  /** `checkConsistency` on behalf of a caller, who needs "read" on the namespace. */
  async consistencyFor(auth: AuthContext, namespace: string): Promise<GraphConsistency> {
    auth.require(Capability.READ, namespace);
    return this.checkConsistency(namespace);
  }

  /**
   * Compares the namespace's keys per kind in Postgres and Neo4j. Each store first returns, per
   * kind and MD5 bucket of the key, the count and a 40-bit digest sum (one SQL statement, one
   * Cypher statement, plus Gold's keys through its port, hashed here); only the buckets that
   * disagree are then read key by key, in both stores, and diffed. Soundness and the odds of a
   * hidden difference: graph/key-buckets.ts. A Neo4j without APOC's `apoc.util.md5` gets the full
   * read (`checkConsistencyByFullRead`), with the same result.
   */
  async checkConsistency(namespace: string, opts: { maxIds?: number } = {}): Promise<GraphConsistency> {
    const maxIds = opts.maxIds ?? 100;
    // The two stores work at once: the Neo4j digests, the Silver digests in Postgres and Gold's keys.
    const [graph, silver, goldKeys] = await Promise.all([
      this.read((tx) => readKeyDigests(tx, namespace, GRAPH_KEYS)).catch((e: unknown) => {
        if (lacksApocMd5(e)) return null;
        throw e;
      }),
      this.source.keyDigests(namespace),
      this.gold.keys(namespace),
    ]);
    if (graph === null) return this.checkConsistencyByFullRead(namespace, opts);
    const pg: KindDigests = { ...silver };
    for (const [kind, keys] of Object.entries(goldKeys)) pg[kind] = digestKeys(keys);

    const missing: string[] = [];
    const extra: string[] = [];
    const postgres = {} as Record<GraphKind, number>;
    const neo = {} as Record<GraphKind, number>;
    for (const kind of GRAPH_KINDS) {
      postgres[kind] = countOf(pg[kind]);
      neo[kind] = countOf(graph[kind]);
      const buckets = differingBuckets(pg[kind], graph[kind]);
      // Past both caps the lists are full: the counts above are all that is left to report.
      if (buckets.length === 0 || (missing.length >= maxIds && extra.length >= maxIds)) continue;
      const inBuckets = new Set(buckets);
      const a = kind in goldKeys ? (goldKeys[kind] ?? []).filter((k) => inBuckets.has(bucketOf(k))) : await this.source.keysInBuckets(namespace, kind, buckets);
      const b = await this.read((tx) => readKeysInBuckets(tx, namespace, GRAPH_KEYS[kind] as GraphKeyCypher, buckets));
      const inGraph = new Set(b);
      const inPg = new Set(a);
      for (const k of [...inPg].sort()) if (!inGraph.has(k)) missing.push(`${kind}:${k}`);
      for (const k of [...inGraph].sort()) if (!inPg.has(k)) extra.push(`${kind}:${k}`);
    }
    const ok = missing.length === 0 && extra.length === 0 && GRAPH_KINDS.every((k) => postgres[k] === neo[k]);
    return { ok, postgres, neo4j: neo, missingInNeo4j: missing.slice(0, maxIds), extraInNeo4j: extra.slice(0, maxIds) };
  }

  /** `checkConsistency` by reading every key of both stores (a Neo4j without APOC; tests compare the two). */
  async checkConsistencyByFullRead(namespace: string, opts: { maxIds?: number } = {}): Promise<GraphConsistency> {
    const maxIds = opts.maxIds ?? 100;
    const pg = {
      ...(await this.source.keys(namespace)).keys,
      ...(await this.gold.keys(namespace)),
    };
    const graph = await this.read(async (tx) => ({ ...(await readGraphKeys(tx, namespace)), ...(await readGoldGraphKeys(tx, namespace)) }));
    const missing: string[] = [];
    const extra: string[] = [];
    const postgres = {} as Record<GraphKind, number>;
    const neo = {} as Record<GraphKind, number>;
    for (const kind of GRAPH_KINDS) {
      const a = pg[kind] ?? [];
      const b = graph[kind] ?? [];
      postgres[kind] = a.length;
      neo[kind] = b.length;
      const inGraph = new Set(b);
      const inPg = new Set(a);
      for (const k of [...inPg].sort()) if (!inGraph.has(k)) missing.push(`${kind}:${k}`);
      for (const k of [...inGraph].sort()) if (!inPg.has(k)) extra.push(`${kind}:${k}`);
    }
    const ok = missing.length === 0 && extra.length === 0 && GRAPH_KINDS.every((k) => postgres[k] === neo[k]);
    return { ok, postgres, neo4j: neo, missingInNeo4j: missing.slice(0, maxIds), extraInNeo4j: extra.slice(0, maxIds) };
  }

  /** One managed read transaction in its own session. */
  private async read<T>(work: (tx: CypherRunner) => Promise<T>): Promise<T> {
    const session = this.driver.session({ defaultAccessMode: neo4j.session.READ });
    try {
      return await session.executeRead((tx) => work(tx));
    } finally {
      await session.close();
    }
  }

  private async replay<T extends { id: string }>(
    namespace: string | null,
    batchSize: number,
    phase: GraphRebuildPhase,
    page: (c: PageCursor) => Promise<T[]>,
    write: (tx: CypherRunner, rows: T[]) => Promise<void>,
    progress: (p: GraphRebuildProgress) => void,
  ): Promise<number> {
    let after: string | null = null;
    let done = 0;
    // Each page is read and written in the turn of the projector that writes the same nodes
    // (platform/outbox-drain.ts): a drain that read before the page cannot write after it.
    const drain = phase === 'gold' ? OUTBOX_DRAINS.goldProjector : OUTBOX_DRAINS.silverProjector;
    for (;;) {
      const rows = await inDrainTurn(this.sql, drain, async () => {
        const read = await page({ namespace, after, limit: batchSize });
        if (read.length === 0) return read;
        const session = this.driver.session();
        try {
          await session.executeWrite((tx) => write(tx, read));
        } finally {
          await session.close();
        }
        return read;
      });
      if (rows.length === 0) break;
      done += rows.length;
      after = (rows[rows.length - 1] as T).id;
      progress({ phase, done });
      if (rows.length < batchSize) break;
    }
    return done;
  }
}
