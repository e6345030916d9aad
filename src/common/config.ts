import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';

/** Where the service finds its stores and models. Built once from the environment by `loadConfig`. */
export interface AppConfig {
  readonly port: number;
  readonly host: string;
  /** Host names /mcp accepts besides loopback and HOST (MCP_ALLOWED_HOSTS, comma-separated). */
  readonly mcpAllowedHosts: readonly string[];
  readonly dataDir: string;
  readonly cacheDir: string;
  readonly databaseUrl: string | undefined;
  /** The role the service's runtime queries use (owns nothing in bronze); DATABASE_URL's role runs migrations. */
  readonly databaseRuntimeUrl: string | undefined;
  /** ALLOW_OWNER_RUNTIME: with DATABASE_URL and no DATABASE_RUNTIME_URL, run every query as the owner (insecure, opt-in). */
  readonly allowOwnerRuntime: boolean;
  readonly neo4j: { readonly uri: string; readonly user: string; readonly password: string } | undefined;
  /** Page cache of the local Neo4j started when NEO4J_URI is unset. */
  readonly neo4jPageCacheMb: number;
  /** The JDK that runs the local Neo4j (JAVA_HOME); unset: `java` on the PATH. */
  readonly javaHome: string | undefined;
  readonly adminToken: string | undefined;
  /** Subscriptions re-check their token at most this often: a revoked token stops receiving. */
  readonly authRecheckMs: number;
  /**
   * How long the HTTP server keeps an idle keep-alive connection open (ms). Longer than a client
   * pool's or a proxy's idle timeout, so a client never reuses a socket the server is closing.
   */
  readonly httpKeepAliveMs: number;
  readonly openai: {
    readonly apiKey: string | undefined;
    readonly baseUrl: string | undefined;
    readonly extractionModel: string | undefined;
    readonly embeddingModel: string | undefined;
  };
  /** The CLI's API token (MEDALLION_TOKEN): kept out of the command line, which npm echoes. */
  readonly cliToken: string | undefined;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Where a process that serves no API (`worker`) serves /metrics and /health (METRICS_PORT); unset: nowhere. */
  readonly metricsPort: number | undefined;
  /** METRICS_TOKEN: when set, /metrics answers 401 without `Authorization: Bearer <it>`; unset: /metrics is open. */
  readonly metricsToken: string | undefined;
  /** A background stage whose steps have all failed for this long turns /health 503 (HEALTH_STALL_SECONDS). */
  readonly healthStallSeconds: number;
  /**
   * OpenTelemetry traces (docs/operations.md "Tracing"): exported over OTLP/HTTP to `tracesUrl`
   * (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces); unset or
   * OTEL_SDK_DISABLED=true: tracing is off and costs nothing.
   */
  readonly tracing: { readonly tracesUrl: string | undefined; readonly serviceName: string };
  readonly limits: {
    readonly maxContentBytes: number;
    readonly maxPayloadBytes: number;
    /** Deepest nesting of objects and arrays in one event's rawPayload, checked per item. */
    readonly maxPayloadDepth: number;
    readonly maxBatchSize: number;
    readonly maxRequestBytes: number;
    readonly maxQueryDepth: number;
    readonly maxQueryComplexity: number;
    /** Deepest nesting of an argument value (objects and lists): bounds generated `where` filters. */
    readonly maxInputDepth: number;
    readonly maxPageSize: number;
    /** Most events one `conversation` query returns (its default and maximum `limit`). */
    readonly maxConversationEvents: number;
    /** Graph traversals: deepest neighbourhood and longest path (hops), largest neighbourhood, largest `changes` page. */
    readonly maxNeighbourhoodDepth: number;
    readonly maxPathDepth: number;
    readonly maxSubgraphNodes: number;
    readonly maxSubgraphEdges: number;
    readonly maxChangesPageSize: number;
    /** Neo4j transaction timeout for one generated graph-exploration query. */
    readonly exploreTimeoutMs: number;
    /** An event's occurredAt may lie at most this many days before now (each month is a permanent partition). */
    readonly occurredAtMaxPastDays: number;
    /** …and at most this many days after now (clock skew, time zones sent as UTC). */
    readonly occurredAtMaxFutureDays: number;
  };
  readonly projector: { readonly batchSize: number; readonly pollMs: number };
  /**
   * Memory search (docs/search.md). `graphOverGold`: the graph channel expands over Gold entities (SEARCH_GRAPH_GOLD).
   * `speakerBoost`: the weight of a turn's speaker in the event keyword channel (SEARCH_SPEAKER_BOOST; null: the default, `EVENT_SPEAKER_BOOST`).
   * `warmUpMs`: after a start, the API runs warm-up searches for up to this long until the first real search (SEARCH_WARM_UP_SECONDS; 0: none).
   * `replanEveryMs`: searches never wait for Neo4j to plan a statement again; the API checks this often whether the graph moved enough to plan them again in the background (SEARCH_REPLAN_SECONDS; 0: Neo4j replans inside a search).
   * `heldVectorsBytes`: small namespaces' vectors held in the API's process for the exact vector channels (SEARCH_HELD_VECTORS_MB; 0: Neo4j computes the cosine).
   */
  readonly search: {
    readonly graphOverGold: boolean;
    readonly speakerBoost: number | null;
    readonly warmUpMs: number;
    readonly replanEveryMs: number;
    readonly heldVectorsBytes: number;
  };
  /** How long an approval request stays valid, in seconds (APPROVAL_TTL): past it, it can be neither decided nor executed. */
  readonly approvalTtlSeconds: number;
  /** Re-anchoring overlays after a rebuild (docs/overlays.md): accept ≤ confidence: REANCHORED; review ≤ confidence < accept: REANCHORED for review; below: ORPHANED. */
  readonly overlays: { readonly reanchorAccept: number; readonly reanchorReview: number };
  readonly derive: {
    readonly workerId: string;
    readonly batchSize: number;
    readonly maxWaitMs: number;
    /** A namespace with nothing queued for this long is derived without waiting for N or T (DERIVE_QUIET_MS; 0: off). */
    readonly quietMs: number;
    readonly leaseSeconds: number;
    /** The lease of a running job (JOB_LEASE_SECONDS), heartbeated every third of it: a dead worker's job is taken over after at most this. */
    readonly jobLeaseSeconds: number;
    readonly concurrency: number;
    readonly maxAttempts: number;
    readonly retryBaseSeconds: number;
    readonly pollMs: number;
    readonly candidateLimit: number;
    readonly trigramThreshold: number;
  };
  /** Gold promotion (docs/gold.md). */
  readonly gold: {
    /** How often each namespace is promoted (seconds); 0: only on demand. */
    readonly promoteEverySeconds: number;
    /** Seconds after a namespace's derivation queue drains that its promotion runs (0: only on the schedule's interval). */
    readonly promoteSettleSeconds: number;
    /** An early (settle) run fires at least this long after the namespace's previous promotion fired. */
    readonly promoteMinGapSeconds: number;
    readonly minConfidence: number;
    readonly minSources: number;
    readonly candidateTrigram: number;
    readonly mergeTrigram: number;
    readonly mergeCosine: number;
    readonly batchSize: number;
    /** The most similar names the trigram step keeps per unassigned entity; null (0 in the environment): all of them. */
    readonly candidatesPerEntity: number | null;
    /** Candidate-pair queries of a promotion run at once. */
    readonly pairConcurrency: number;
    /** A conflict among a Gold entity's facts with any fact below this confidence goes to the review queue (docs/gold-review.md). */
    readonly reviewConfidence: number;
  };
  /** Thresholds of the quality report (docs/quality.md): each check passes when its value is at most its threshold. */
  readonly quality: {
    /** The promotion threshold: a fact below it counts as low confidence (QUALITY_MIN_CONFIDENCE, 0.7). */
    readonly minConfidence: number;
    /** The largest share of low-confidence facts a fact type may have (QUALITY_MAX_LOW_CONFIDENCE_SHARE, 0.5). */
    readonly maxLowConfidenceShare: number;
    /** A fact type with fewer current facts than this is listed but not judged by confidence_distribution (QUALITY_CONFIDENCE_MIN_SAMPLE, 20). */
    readonly confidenceMinSample: number;
    /** An entity whose best fact is below this is a low-confidence entity (QUALITY_LOW_CONFIDENCE_FLOOR, 0.5). */
    readonly lowConfidenceFloor: number;
    /** The most low-confidence entities one entity type may have (QUALITY_MAX_LOW_CONFIDENCE_ENTITIES, 100). */
    readonly maxLowConfidenceEntities: number;
    /** Two live entities of one type whose names are more similar than this are fuzzy duplicates (QUALITY_DUPLICATE_SIMILARITY, 0.85). */
    readonly duplicateSimilarity: number;
    /** The largest p95 ingest → derivation lag and the oldest unprojected outbox row, in seconds (QUALITY_MAX_LAG_SECONDS, 300). */
    readonly maxLagSeconds: number;
    /** Derivations done within this many hours (and every pending one) make the lag figures (QUALITY_LAG_WINDOW_HOURS, 24). */
    readonly lagWindowHours: number;
    /** Open dead letters allowed (QUALITY_MAX_DEAD_LETTERS, 0). */
    readonly maxDeadLetters: number;
    /** Offending rows named in a check's detail (QUALITY_MAX_LISTED, 10). */
    readonly maxListed: number;
    /** consistency_graph shows the stored graphConsistency answer while it is at most this old, else computes one (QUALITY_CONSISTENCY_MAX_AGE_SECONDS, 600; 0: always at report time). */
    readonly consistencyMaxAgeSeconds: number;
    /** A worker recomputes a read answer once it is this old and the namespace changed or failed, or nears the maximum age (QUALITY_CONSISTENCY_REFRESH_SECONDS, 60; 0: no background refresh). */
    readonly consistencyRefreshSeconds: number;
  };
  /** Decay, pruning and Bronze retention (docs/lifecycle.md). */
  readonly lifecycle: {
    /** Idle days (not seen in a new event, not used) before a fact's importance starts to decay (DECAY_AFTER_DAYS). */
    readonly decayAfterDays: number;
    /** Length of one decay cycle in days (DECAY_CYCLE_DAYS). */
    readonly decayCycleDays: number;
    /** Factor applied per full idle cycle past decayAfterDays (DECAY_FACTOR). */
    readonly decayFactor: number;
    /** Decay never takes importance below this (nor raises a lower base to it) (DECAY_FLOOR). */
    readonly decayFloor: number;
    /** How often each namespace's decay runs (seconds); 0: only on demand (DECAY_EVERY_SECONDS). */
    readonly decayEverySeconds: number;
    /** How often each namespace is pruned with the defaults below (seconds); 0: only on demand (PRUNE_EVERY_SECONDS). */
    readonly pruneEverySeconds: number;
    readonly pruneMaxImportance: number;
    readonly pruneUnusedForDays: number;
    /** How often recorded uses are written (one INSERT … ON CONFLICT per flush) (USAGE_FLUSH_MS). */
    readonly usageFlushMs: number;
    /** Bronze partitions may be dropped (with an approved RETAIN_BRONZE) once older than this many days; 0: never (BRONZE_RETENTION_DAYS). */
    readonly bronzeRetentionDays: number;
    /** How often each namespace's hash chain is verified by the worker (seconds); 0: only by hand (CHAIN_VERIFY_EVERY_SECONDS). */
    readonly chainVerifyEverySeconds: number;
  };
  readonly models: {
    readonly judgeModel: string | undefined;
    readonly embeddingDimensions: number | undefined;
    readonly timeoutMs: number;
    readonly maxRetries: number;
    readonly concurrency: number;
    /** The offline embedder when no EMBEDDING_MODEL is set (src/models/offline/offline-embedder.ts). */
    readonly offlineEmbedder: 'e5-small' | 'bge-small' | 'minilm' | 'hashing';
    /** onnxruntime intra-op threads of the offline embedder (0: onnxruntime's choice, all cores). */
    readonly offlineEmbedderThreads: number;
    /**
     * onnxruntime sessions of the offline embedder, each on its own thread, that share a call's
     * texts; undefined: 2 in a process that only runs the workers, 1 where the API runs too.
     */
    readonly offlineEmbedderSessions: number | undefined;
    /** JSON file with the bounded ontology; unset: the built-in one. */
    readonly ontologyFile: string | undefined;
  };
  /**
   * Niceness of the worker process `serve` starts (WORKER_PROCESS_NICE, 0-19, default 10): the
   * scheduler gives the API's process the CPU before derivation's (docs/operations.md "Processes").
   */
  readonly workerProcessNice: number;
  /**
   * Readers first (BACKGROUND_YIELD, 0-4, default 1; 0: off): while searches are served, a
   * background stage pauses after each step that did work for this share of the step's time, at
   * most 2 s (platform/foreground.ts, docs/operations.md "Searches while the memory works").
   */
  readonly backgroundYield: number;
  /** The variables this configuration was read from: the worker process `serve` starts reads the same. */
  readonly environment: Readonly<Record<string, string | undefined>>;
}

const intIn = (min: number, max: number) =>
  z.coerce
    .number({ error: `expected an integer between ${min} and ${max}` })
    .int(`expected an integer between ${min} and ${max}`)
    .min(min, `expected an integer >= ${min}`)
    .max(max, `expected an integer <= ${max}`);

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v));

const urlWithScheme = (schemes: string[]) =>
  optionalString.refine(
    (v) => v === undefined || schemes.some((s) => v.startsWith(`${s}://`)),
    `expected a URL starting with ${schemes.map((s) => `${s}://`).join(' or ')}`,
  );

const envSchema = z.object({
  PORT: intIn(0, 65535).default(4000),
  HOST: z.string().min(1).default('127.0.0.1'),
  MCP_ALLOWED_HOSTS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter((h) => h !== ''),
    )
    .refine(
      (hosts) => hosts.every((h) => /^(\[[0-9a-f:.]+\]|[0-9a-f:]*:[0-9a-f:.]*|[a-z0-9]([a-z0-9.-]*[a-z0-9])?)$/.test(h)),
      'expected host names separated by commas, without scheme, port or path (e.g. memory.example.com,10.0.0.5)',
    ),
  DATA_DIR: z.string().min(1).default('./.data'),
  CACHE_DIR: optionalString,
  DATABASE_URL: urlWithScheme(['postgres', 'postgresql']),
  DATABASE_RUNTIME_URL: urlWithScheme(['postgres', 'postgresql']),
  ALLOW_OWNER_RUNTIME: z.enum(['true', 'false'], { error: 'expected true or false' }).default('false'),
  NEO4J_URI: urlWithScheme(['bolt', 'bolt+s', 'bolt+ssc', 'neo4j', 'neo4j+s', 'neo4j+ssc']),
  NEO4J_USER: z.string().min(1).default('neo4j'),
  NEO4J_PASSWORD: optionalString,
  NEO4J_PAGECACHE_MB: intIn(16, 1_048_576).default(128),
  JAVA_HOME: optionalString,
  ADMIN_TOKEN: optionalString.refine((v) => v === undefined || v.length >= 24, 'expected at least 24 characters (a guessable admin token is a security hole)'),
  MEDALLION_TOKEN: optionalString,
  AUTH_RECHECK_MS: intIn(50, 600_000).default(5_000),
  HTTP_KEEP_ALIVE_SECONDS: intIn(1, 3600).default(65),
  OPENAI_API_KEY: optionalString,
  OPENAI_BASE_URL: urlWithScheme(['http', 'https']),
  EXTRACTION_MODEL: optionalString,
  EMBEDDING_MODEL: optionalString,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  METRICS_PORT: intIn(0, 65535).optional(),
  METRICS_TOKEN: optionalString.refine(
    (v) => v === undefined || /^[\x21-\x7e]{24,}$/.test(v),
    'expected at least 24 printable characters without spaces (a bearer token Prometheus sends)',
  ),
  HEALTH_STALL_SECONDS: intIn(1, 86_400).default(300),
  OTEL_EXPORTER_OTLP_ENDPOINT: urlWithScheme(['http', 'https']),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: urlWithScheme(['http', 'https']),
  OTEL_SERVICE_NAME: z.string().min(1).default('medallion-memory'),
  OTEL_SDK_DISABLED: z.enum(['true', 'false'], { error: 'expected true or false' }).default('false'),
  MAX_CONTENT_BYTES: intIn(1, 64 * 1024 * 1024).default(1024 * 1024),
  MAX_PAYLOAD_BYTES: intIn(1, 64 * 1024 * 1024).default(1024 * 1024),
  MAX_PAYLOAD_DEPTH: intIn(1, 1000).default(64),
  MAX_BATCH_SIZE: intIn(1, 100_000).default(1000),
  MAX_REQUEST_BYTES: intIn(1024, 1024 * 1024 * 1024).default(64 * 1024 * 1024),
  MAX_QUERY_DEPTH: intIn(2, 100).default(12),
  // Complexity is the most objects an operation can return (every list priced at its real cap, src/api/cost.ts).
  MAX_QUERY_COMPLEXITY: intIn(10, 1_000_000_000).default(200_000),
  MAX_INPUT_DEPTH: intIn(2, 100).default(8),
  MAX_PAGE_SIZE: intIn(1, 10_000).default(500),
  MAX_CONVERSATION_EVENTS: intIn(1, 1_000_000).default(10_000),
  MAX_NEIGHBOURHOOD_DEPTH: intIn(1, 10).default(3),
  MAX_PATH_DEPTH: intIn(1, 10).default(6),
  MAX_SUBGRAPH_NODES: intIn(1, 100_000).default(500),
  MAX_SUBGRAPH_EDGES: intIn(1, 1_000_000).default(2000),
  MAX_CHANGES_PAGE_SIZE: intIn(1, 10_000).default(500),
  EXPLORE_TIMEOUT_MS: intIn(100, 600_000).default(5_000),
  // 20 years back (7305 days) covers imported mail and chat archives; 1 day ahead covers clock skew
  // and local times sent as UTC. Every month in the window may become a permanent partition.
  OCCURRED_AT_MAX_PAST_DAYS: intIn(1, 73_050).default(7305),
  OCCURRED_AT_MAX_FUTURE_DAYS: intIn(0, 3653).default(1),
  // Seconds an approval request (and its approval) stays usable: one day by default, at most 90.
  APPROVAL_TTL: intIn(1, 90 * 86_400).default(86_400),
  PROJECTOR_BATCH_SIZE: intIn(1, 10_000).default(500),
  PROJECTOR_POLL_MS: intIn(10, 60_000).default(250),
  WORKER_ID: optionalString,
  WORKER_PROCESS_NICE: intIn(0, 19).default(10),
  BACKGROUND_YIELD: z.coerce.number().min(0).max(4).default(1),
  DERIVE_BATCH_SIZE: intIn(1, 1000).default(100),
  DERIVE_MAX_WAIT_MS: intIn(0, 3_600_000).default(30_000),
  DERIVE_QUIET_MS: intIn(0, 3_600_000).default(2_000),
  DERIVE_LEASE_SECONDS: intIn(1, 3600).default(120),
  JOB_LEASE_SECONDS: intIn(3, 3600).default(60),
  DERIVE_CONCURRENCY: intIn(1, 64).default(2),
  DERIVE_MAX_ATTEMPTS: intIn(1, 100).default(5),
  DERIVE_RETRY_BASE_SECONDS: intIn(0, 3600).default(10),
  DERIVE_POLL_MS: intIn(10, 60_000).default(500),
  CANDIDATE_LIMIT: intIn(1, 100).default(8),
  CANDIDATE_TRIGRAM_THRESHOLD: z.coerce.number().min(0).max(1).default(0.3),
  GOLD_PROMOTE_EVERY_SECONDS: intIn(0, 604_800).default(900),
  GOLD_PROMOTE_SETTLE_SECONDS: intIn(0, 86_400).default(5),
  GOLD_PROMOTE_MIN_GAP_SECONDS: intIn(0, 86_400).default(60),
  GOLD_MIN_CONFIDENCE: z.coerce.number().min(0).max(1).default(0.6),
  GOLD_MIN_SOURCES: intIn(1, 1000).default(2),
  GOLD_CANDIDATE_TRIGRAM: z.coerce.number().min(0).max(1).default(0.3),
  GOLD_MERGE_TRIGRAM: z.coerce.number().min(0).max(1).default(0.6),
  GOLD_MERGE_COSINE: z.coerce.number().min(0).max(1).default(0.85),
  GOLD_BATCH_SIZE: intIn(1, 10_000).default(500),
  GOLD_CANDIDATES_PER_ENTITY: intIn(0, 10_000).default(25),
  GOLD_PAIR_CONCURRENCY: intIn(1, 16).default(2),
  GOLD_REVIEW_CONFIDENCE: z.coerce.number().min(0).max(1).default(0.7),
  QUALITY_MIN_CONFIDENCE: z.coerce.number().min(0).max(1).default(0.7),
  QUALITY_MAX_LOW_CONFIDENCE_SHARE: z.coerce.number().min(0).max(1).default(0.5),
  QUALITY_CONFIDENCE_MIN_SAMPLE: intIn(1, 100_000_000).default(20),
  QUALITY_LOW_CONFIDENCE_FLOOR: z.coerce.number().min(0).max(1).default(0.5),
  QUALITY_MAX_LOW_CONFIDENCE_ENTITIES: intIn(0, 100_000_000).default(100),
  QUALITY_DUPLICATE_SIMILARITY: z.coerce.number().min(0).max(1).default(0.85),
  QUALITY_MAX_LAG_SECONDS: z.coerce.number().min(0).max(604_800).default(300),
  QUALITY_LAG_WINDOW_HOURS: intIn(1, 8760).default(24),
  QUALITY_MAX_DEAD_LETTERS: intIn(0, 100_000_000).default(0),
  QUALITY_MAX_LISTED: intIn(0, 1000).default(10),
  QUALITY_CONSISTENCY_MAX_AGE_SECONDS: intIn(0, 604_800).default(600),
  QUALITY_CONSISTENCY_REFRESH_SECONDS: intIn(0, 604_800).default(60),
  SEARCH_GRAPH_GOLD: z.enum(['true', 'false'], { error: 'expected true or false' }).default('true'),
  SEARCH_SPEAKER_BOOST: z.coerce.number().min(0).max(10).optional(),
  SEARCH_WARM_UP_SECONDS: intIn(0, 3600).default(15),
  SEARCH_REPLAN_SECONDS: intIn(0, 3600).default(30),
  SEARCH_HELD_VECTORS_MB: intIn(0, 65_536).default(256),
  OVERLAY_REANCHOR_ACCEPT: z.coerce.number().min(0).max(1).default(0.75),
  OVERLAY_REANCHOR_REVIEW: z.coerce.number().min(0).max(1).default(0.5),
  DECAY_AFTER_DAYS: intIn(0, 36_500).default(30),
  DECAY_CYCLE_DAYS: intIn(1, 36_500).default(7),
  DECAY_FACTOR: z.coerce.number().gt(0).max(1).default(0.8),
  DECAY_FLOOR: z.coerce.number().min(0).max(1).default(0.05),
  DECAY_EVERY_SECONDS: intIn(0, 31_536_000).default(86_400),
  PRUNE_EVERY_SECONDS: intIn(0, 31_536_000).default(604_800),
  PRUNE_MAX_IMPORTANCE: z.coerce.number().min(0).max(1).default(0.1),
  PRUNE_UNUSED_FOR_DAYS: intIn(1, 36_500).default(180),
  USAGE_FLUSH_MS: intIn(10, 3_600_000).default(5_000),
  BRONZE_RETENTION_DAYS: intIn(0, 73_050).default(0),
  CHAIN_VERIFY_EVERY_SECONDS: intIn(0, 31_536_000).default(3_600),
  JUDGE_MODEL: optionalString,
  EMBEDDING_DIMENSIONS: intIn(1, 65_536).optional(),
  MODEL_TIMEOUT_MS: intIn(100, 600_000).default(60_000),
  MODEL_MAX_RETRIES: intIn(0, 10).default(3),
  MODEL_CONCURRENCY: intIn(1, 64).default(4),
  OFFLINE_EMBEDDER: z.enum(['e5-small', 'bge-small', 'minilm', 'hashing']).default('e5-small'),
  OFFLINE_EMBEDDER_THREADS: intIn(0, 64).default(1),
  OFFLINE_EMBEDDER_SESSIONS: intIn(1, 16).optional(),
  ONTOLOGY_FILE: optionalString,
});

/**
 * Secure by default on one's own server: the owner role could disable Bronze's triggers and write
 * approval decisions directly, so the service does not run its queries as the owner unless told to.
 */
export const OWNER_RUNTIME_REFUSED =
  'DATABASE_RUNTIME_URL: required when DATABASE_URL is set. The service runs its queries as a role that owns nothing, so it cannot ' +
  "bypass Bronze's append-only triggers or forge approvals. Create it once as the owner: " +
  `CREATE ROLE medallion_runtime LOGIN PASSWORD '…'; (no SUPERUSER, CREATEROLE or BYPASSRLS), then set ` +
  'DATABASE_RUNTIME_URL=postgres://medallion_runtime:…@host:5432/<database>; the service grants it what it needs at start (docs/bronze.md). ' +
  'To run everything as the owner anyway (not recommended), set ALLOW_OWNER_RUNTIME=true';

/** Thrown at start when the environment is invalid; lists every bad variable at once. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Reads and validates the environment once; throws `ConfigError` naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}=${JSON.stringify(env[String(i.path[0])] ?? '')}: ${i.message}`));
  }
  const e = parsed.data;
  const problems: string[] = [];
  if (e.OVERLAY_REANCHOR_REVIEW > e.OVERLAY_REANCHOR_ACCEPT) problems.push('OVERLAY_REANCHOR_REVIEW: must not exceed OVERLAY_REANCHOR_ACCEPT');
  if (e.NEO4J_URI && !e.NEO4J_PASSWORD) problems.push('NEO4J_PASSWORD: required when NEO4J_URI is set');
  if (!e.NEO4J_URI && e.NEO4J_PASSWORD) problems.push('NEO4J_URI: required when NEO4J_PASSWORD is set');
  if (e.DATABASE_RUNTIME_URL && !e.DATABASE_URL)
    problems.push('DATABASE_URL: required when DATABASE_RUNTIME_URL is set (DATABASE_URL is the owner that runs migrations)');
  if (e.DATABASE_URL && !e.DATABASE_RUNTIME_URL && e.ALLOW_OWNER_RUNTIME !== 'true') problems.push(OWNER_RUNTIME_REFUSED);
  if (e.OPENAI_BASE_URL && !e.EXTRACTION_MODEL && !e.EMBEDDING_MODEL)
    problems.push('EXTRACTION_MODEL or EMBEDDING_MODEL: name at least one model when OPENAI_BASE_URL is set');
  if (problems.length > 0) throw new ConfigError(problems);

  const dataDir = path.resolve(e.DATA_DIR);
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    mcpAllowedHosts: Object.freeze(e.MCP_ALLOWED_HOSTS),
    dataDir,
    cacheDir: path.resolve(e.CACHE_DIR ?? '.cache'),
    databaseUrl: e.DATABASE_URL,
    databaseRuntimeUrl: e.DATABASE_RUNTIME_URL,
    allowOwnerRuntime: e.ALLOW_OWNER_RUNTIME === 'true',
    neo4j: e.NEO4J_URI ? Object.freeze({ uri: e.NEO4J_URI, user: e.NEO4J_USER, password: e.NEO4J_PASSWORD ?? '' }) : undefined,
    neo4jPageCacheMb: e.NEO4J_PAGECACHE_MB,
    javaHome: e.JAVA_HOME,
    adminToken: e.ADMIN_TOKEN,
    authRecheckMs: e.AUTH_RECHECK_MS,
    httpKeepAliveMs: e.HTTP_KEEP_ALIVE_SECONDS * 1000,
    openai: Object.freeze({
      apiKey: e.OPENAI_API_KEY,
      baseUrl: e.OPENAI_BASE_URL,
      extractionModel: e.EXTRACTION_MODEL,
      embeddingModel: e.EMBEDDING_MODEL,
    }),
    cliToken: e.MEDALLION_TOKEN,
    logLevel: e.LOG_LEVEL,
    metricsPort: e.METRICS_PORT,
    metricsToken: e.METRICS_TOKEN,
    healthStallSeconds: e.HEALTH_STALL_SECONDS,
    tracing: Object.freeze({
      tracesUrl:
        e.OTEL_SDK_DISABLED === 'true'
          ? undefined
          : (e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
            (e.OTEL_EXPORTER_OTLP_ENDPOINT ? `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces` : undefined)),
      serviceName: e.OTEL_SERVICE_NAME,
    }),
    limits: Object.freeze({
      maxContentBytes: e.MAX_CONTENT_BYTES,
      maxPayloadBytes: e.MAX_PAYLOAD_BYTES,
      maxPayloadDepth: e.MAX_PAYLOAD_DEPTH,
      maxBatchSize: e.MAX_BATCH_SIZE,
      maxRequestBytes: e.MAX_REQUEST_BYTES,
      maxQueryDepth: e.MAX_QUERY_DEPTH,
      maxQueryComplexity: e.MAX_QUERY_COMPLEXITY,
      maxInputDepth: e.MAX_INPUT_DEPTH,
      exploreTimeoutMs: e.EXPLORE_TIMEOUT_MS,
      maxPageSize: e.MAX_PAGE_SIZE,
      maxConversationEvents: e.MAX_CONVERSATION_EVENTS,
      maxNeighbourhoodDepth: e.MAX_NEIGHBOURHOOD_DEPTH,
      maxPathDepth: e.MAX_PATH_DEPTH,
      maxSubgraphNodes: e.MAX_SUBGRAPH_NODES,
      maxSubgraphEdges: e.MAX_SUBGRAPH_EDGES,
      maxChangesPageSize: e.MAX_CHANGES_PAGE_SIZE,
      occurredAtMaxPastDays: e.OCCURRED_AT_MAX_PAST_DAYS,
      occurredAtMaxFutureDays: e.OCCURRED_AT_MAX_FUTURE_DAYS,
    }),
    projector: Object.freeze({ batchSize: e.PROJECTOR_BATCH_SIZE, pollMs: e.PROJECTOR_POLL_MS }),
    search: Object.freeze({
      graphOverGold: e.SEARCH_GRAPH_GOLD === 'true',
      speakerBoost: e.SEARCH_SPEAKER_BOOST ?? null,
      warmUpMs: e.SEARCH_WARM_UP_SECONDS * 1000,
      replanEveryMs: e.SEARCH_REPLAN_SECONDS * 1000,
      heldVectorsBytes: e.SEARCH_HELD_VECTORS_MB * 1024 * 1024,
    }),
    approvalTtlSeconds: e.APPROVAL_TTL,
    overlays: Object.freeze({ reanchorAccept: e.OVERLAY_REANCHOR_ACCEPT, reanchorReview: e.OVERLAY_REANCHOR_REVIEW }),
    derive: Object.freeze({
      workerId: e.WORKER_ID ?? `${os.hostname()}-${process.pid}`,
      batchSize: e.DERIVE_BATCH_SIZE,
      maxWaitMs: e.DERIVE_MAX_WAIT_MS,
      quietMs: e.DERIVE_QUIET_MS,
      leaseSeconds: e.DERIVE_LEASE_SECONDS,
      jobLeaseSeconds: e.JOB_LEASE_SECONDS,
      concurrency: e.DERIVE_CONCURRENCY,
      maxAttempts: e.DERIVE_MAX_ATTEMPTS,
      retryBaseSeconds: e.DERIVE_RETRY_BASE_SECONDS,
      pollMs: e.DERIVE_POLL_MS,
      candidateLimit: e.CANDIDATE_LIMIT,
      trigramThreshold: e.CANDIDATE_TRIGRAM_THRESHOLD,
    }),
    gold: Object.freeze({
      promoteEverySeconds: e.GOLD_PROMOTE_EVERY_SECONDS,
      promoteSettleSeconds: e.GOLD_PROMOTE_SETTLE_SECONDS,
      promoteMinGapSeconds: e.GOLD_PROMOTE_MIN_GAP_SECONDS,
      minConfidence: e.GOLD_MIN_CONFIDENCE,
      minSources: e.GOLD_MIN_SOURCES,
      candidateTrigram: e.GOLD_CANDIDATE_TRIGRAM,
      mergeTrigram: e.GOLD_MERGE_TRIGRAM,
      mergeCosine: e.GOLD_MERGE_COSINE,
      batchSize: e.GOLD_BATCH_SIZE,
      candidatesPerEntity: e.GOLD_CANDIDATES_PER_ENTITY === 0 ? null : e.GOLD_CANDIDATES_PER_ENTITY,
      pairConcurrency: e.GOLD_PAIR_CONCURRENCY,
      reviewConfidence: e.GOLD_REVIEW_CONFIDENCE,
    }),
    quality: Object.freeze({
      minConfidence: e.QUALITY_MIN_CONFIDENCE,
      maxLowConfidenceShare: e.QUALITY_MAX_LOW_CONFIDENCE_SHARE,
      confidenceMinSample: e.QUALITY_CONFIDENCE_MIN_SAMPLE,
      lowConfidenceFloor: e.QUALITY_LOW_CONFIDENCE_FLOOR,
      maxLowConfidenceEntities: e.QUALITY_MAX_LOW_CONFIDENCE_ENTITIES,
      duplicateSimilarity: e.QUALITY_DUPLICATE_SIMILARITY,
      maxLagSeconds: e.QUALITY_MAX_LAG_SECONDS,
      lagWindowHours: e.QUALITY_LAG_WINDOW_HOURS,
      maxDeadLetters: e.QUALITY_MAX_DEAD_LETTERS,
      maxListed: e.QUALITY_MAX_LISTED,
      consistencyMaxAgeSeconds: e.QUALITY_CONSISTENCY_MAX_AGE_SECONDS,
      consistencyRefreshSeconds: e.QUALITY_CONSISTENCY_REFRESH_SECONDS,
    }),
    lifecycle: Object.freeze({
      decayAfterDays: e.DECAY_AFTER_DAYS,
      decayCycleDays: e.DECAY_CYCLE_DAYS,
      decayFactor: e.DECAY_FACTOR,
      decayFloor: e.DECAY_FLOOR,
      decayEverySeconds: e.DECAY_EVERY_SECONDS,
      pruneEverySeconds: e.PRUNE_EVERY_SECONDS,
      pruneMaxImportance: e.PRUNE_MAX_IMPORTANCE,
      pruneUnusedForDays: e.PRUNE_UNUSED_FOR_DAYS,
      usageFlushMs: e.USAGE_FLUSH_MS,
      bronzeRetentionDays: e.BRONZE_RETENTION_DAYS,
      chainVerifyEverySeconds: e.CHAIN_VERIFY_EVERY_SECONDS,
    }),
    models: Object.freeze({
      judgeModel: e.JUDGE_MODEL,
      embeddingDimensions: e.EMBEDDING_DIMENSIONS,
      timeoutMs: e.MODEL_TIMEOUT_MS,
      maxRetries: e.MODEL_MAX_RETRIES,
      concurrency: e.MODEL_CONCURRENCY,
      offlineEmbedder: e.OFFLINE_EMBEDDER,
      offlineEmbedderThreads: e.OFFLINE_EMBEDDER_THREADS,
      offlineEmbedderSessions: e.OFFLINE_EMBEDDER_SESSIONS,
      ontologyFile: e.ONTOLOGY_FILE ? path.resolve(e.ONTOLOGY_FILE) : undefined,
    }),
    workerProcessNice: e.WORKER_PROCESS_NICE,
    backgroundYield: e.BACKGROUND_YIELD,
    environment: Object.freeze({ ...env }),
  });
}

/** The decay formula's settings (silver/decay.ts) from the configuration. */
export function decaySettings(config: Pick<AppConfig, 'lifecycle'>): { afterDays: number; cycleDays: number; factor: number; floor: number } {
  const l = config.lifecycle;
  return { afterDays: l.decayAfterDays, cycleDays: l.decayCycleDays, factor: l.decayFactor, floor: l.decayFloor };
}

/**
 * The environment of a child process this service starts: `base` (the local Neo4j: this process's
 * own; the worker process: the configuration's `environment`), plus `extra`, without `drop`. Kept
 * here so that config.ts stays the one module that touches `process.env`.
 */
export function childProcessEnv(
  extra: Record<string, string | undefined>,
  base: Readonly<Record<string, string | undefined>> = process.env,
  drop: readonly string[] = [],
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, ...extra };
  // A child reads an unset variable as "undefined" when the key is there.
  for (const [name, value] of Object.entries(env)) if (value === undefined || drop.includes(name)) delete env[name];
  return env;
}
