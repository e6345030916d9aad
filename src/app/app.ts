import fs from 'node:fs';
import path from 'node:path';
import { GraphQLSchema } from 'graphql';
import { Driver } from 'neo4j-driver';
import { DataSource } from 'typeorm';
import { TokenRepository } from '../access/token.repository';
import { TokenService } from '../access/token.service';
import { TokenRevocations } from '../access/token-revocations';
import { PostgresApprovalGate } from '../access/approval-gate';
import { ApprovalRepository } from '../access/approval.repository';
import { ApprovalService } from '../access/approval.service';
import { ErasureRepository } from '../bronze/erasure.repository';
import { ErasureService } from '../bronze/erasure.service';
import { AppMetrics, ProcessRole } from '../api/metrics';
import { buildAppSchema } from '../api/schema';
import { HttpServerHandle, startHttpServer } from './server';
import { startWorkerProcess, WorkerProcess, WorkerProcessOptions } from './worker-process';
import { Registry } from 'prom-client';
import { EventQueryRepository } from '../bronze/event-query.repository';
import { EventRepository } from '../bronze/event.repository';
import { EventService } from '../bronze/event.service';
import { IngestService } from '../bronze/ingest.service';
import { AppConfig, childProcessEnv, decaySettings } from '../common/config';
import { Clock, systemClock } from '../common/clock';
import { UsageRecorder } from '../silver/usage-recorder';
import { RetentionRepository } from '../bronze/retention.repository';
import { RetentionService } from '../bronze/retention.service';
import { LifecycleRepository } from '../gold/decay/lifecycle.repository';
import { LifecycleService } from '../gold/decay/lifecycle.service';
import { AppLogger } from '../common/logger';
import { EventNodeService } from '../graph/event-node.service';
import { ChangeRepository } from '../graph/change.repository';
import { provenanceLimits, ProvenanceService } from '../graph/provenance.service';
import { scopeFor, Services } from '../scope/request-scope';
import { SubscriptionService } from '../scope/subscription.service';
import { GraphRebuildService } from '../graph/graph-rebuild.service';
import { checkExploreCompat } from '../api/explore/explore.schema';
import { ExploreService } from '../graph/explore.service';
import { ProjectionJob, projectorStage } from '../graph/projection.job';
import { WARM_UP_NAME, WARM_UP_NAMESPACE, WarmUpRead, warmUpGraph } from '../graph/graph-warm-up';
import { warmUpExploration } from '../api/explore/explore.warm-up';
import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import type { WarmUpOutcome } from '../graph/search.service';
import { ReembedService } from '../silver/reembed.service';
import { StageRunner } from '../platform/stages';
import { Foreground, ReadNotes } from '../platform/foreground';
import { pipelineMetrics } from '../platform/telemetry/metrics';
import { AuditLog } from '../platform/telemetry/audit';
import { ChainRepository } from '../gold/portability/chain.repository';
import { chainSealerStage } from '../gold/portability/chain-sealer';
import { runShutdown, ShutdownStep } from '../common/shutdown';
import { GoldService } from '../gold/promotion/gold.service';
import { AboutRepository } from '../gold/about/about.repository';
import { AboutService, DEFAULT_ABOUT_OPTIONS } from '../gold/about/about.service';
import { ConflictService } from '../gold/review/conflict.service';
import { ReviewRepository } from '../gold/review/review.repository';
import { ReviewService } from '../gold/review/review.service';
import { GoldReadService } from '../gold/reads/gold-read.service';
import { QualityRepository } from '../gold/quality/quality.repository';
import { QualityService } from '../gold/quality/quality.service';
import { GraphConsistencyAnswers } from '../gold/quality/graph-consistency-answers';
import { GraphConsistencyRepository } from '../gold/quality/graph-consistency.repository';
import { PromotionRepository } from '../gold/promotion/promotion.repository';
import { PromotionService } from '../gold/promotion/promotion.service';
import { GoldProjectionJob } from '../gold/promotion/gold-projection.job';
import { goldGraphSource } from '../gold/promotion/gold-graph-source';
import { EventEmbedding } from '../silver/event-embedding.service';
import { CandidateRepository } from '../silver/candidate.repository';
import { DeriveJob, DeriveObserver, deriveStage } from '../silver/derive.job';
import { DeriveService } from '../silver/derive.service';
import { FactReader, FactTextView } from '../silver/fact-reader';
import { OverlayRepository } from '../gold/overlay/overlay.repository';
import { OverlayService } from '../gold/overlay/overlay.service';
import { describeReport, ReanchorService } from '../gold/overlay/reanchor.service';
import { LineageRepository } from '../silver/lineage.repository';
import { ApprovalGate } from '../access/approval.port';
import { FactRepository } from '../silver/fact.repository';
import { loadEmbedder, loadEntityJudge, loadModels } from './models';
import { Embedder } from '../silver/model-ports';
import { DEFAULT_SEARCH_SETTINGS, lazyEmbedder, SearchService } from '../graph/search.service';
import { loadOntology } from '../silver/ontology-file';
import { PipelineService } from '../silver/pipeline.service';
import { SilverReadService } from '../silver/silver-read.service';
import { applyNeo4jSchema, createNeo4jDriver, pingNeo4j } from '../platform/neo4j/neo4j-client';
import { QueryCounter } from '../platform/postgres/data-source';
import { Sql } from '../platform/postgres/sql';
import { JobRepository } from '../platform/jobs/job.repository';
import { parsePayload } from '../platform/jobs/job-kinds';
import { jobHandlers } from './job-registry';
import { startTracing } from './telemetry';
import { chainSection, HealthSection, lagsSection, storeSection, workerProcessSection, workersSection } from './health';
import { serveOpsEndpoints } from './ops-endpoints';
import { JobWorker, jobStage } from '../platform/jobs/job-worker';
import { ScheduleRepository } from '../platform/jobs/schedule.repository';
import { SCHEDULE_CHECK_MS, scheduleKeeper } from '../platform/jobs/schedule-keeper';
import { ChainVerificationRepository } from '../gold/portability/chain-verify.repository';
import { PromotionTrigger } from '../gold/promotion/promotion-trigger';
import { openDatabase } from '../platform/postgres/database';
import { PgListener } from '../platform/pubsub/pg-listener';
import { AppPubSub, CHANNELS, createAppPubSub, EventsIngestedNotification, FactsChangedNotification } from '../platform/pubsub/topics';

import type { Stores } from './stores';
export { startStores } from './stores';
export type { Stores } from './stores';

export interface AppOptions {
  /** Serve GraphQL over HTTP. */
  api: boolean;
  /** Run background work (derivation, rebuild jobs, the Neo4j projector) in this process. */
  worker: boolean;
  /**
   * With `api` and without `worker`: run the background work in a child process this app starts,
   * keeps running and stops (worker-process.ts; `serve`'s default), so nothing CPU-heavy shares
   * the event loop that answers requests. Needs the compiled service (`npm run build`).
   */
  workerProcess?: boolean;
  /** Sees each derive step's result (tests, benchmarks). */
  onDerive?: DeriveObserver;
  /**
   * How fact text is shown to callers (FactReader); the stored text when unset. A composition
   * hook for tests that prove every path reads facts through the one reader.
   */
  factTextView?: FactTextView;
  /** The gate approvals pass through (tests may record its calls); unset: the Postgres gate (access.consume_approval). */
  approvals?: ApprovalGate;
  /** The clock of decay, pruning and recorded uses (tests simulate time); unset: the system clock. */
  clock?: Clock;
  /**
   * Warm the embedder and the graph's statements before serving (default true). A CLI command
   * that runs a worker for its own work (`import` with no service running) answers no searches
   * and turns it off.
   */
  warmUp?: boolean;
  /**
   * The graph's schema is already in place: a supervised worker child whose parent applied it
   * before starting it (`worker --supervised --graph-schema-applied`). The schema step, which
   * scans every node of the labels it backfills, is skipped; unset: it is applied (and retried
   * while Neo4j does not answer) as at any start.
   */
  graphSchemaApplied?: boolean;
}

export interface App {
  readonly config: AppConfig;
  readonly ds: DataSource;
  readonly queryCounter: QueryCounter;
  readonly neo4j: Driver;
  readonly services: Services;
  /** Direct store access for benchmarks and tests that set up or inspect state; never handed to a transport. */
  readonly repositories: { readonly events: EventRepository; readonly facts: FactRepository };
  readonly http: HttpServerHandle | undefined;
  /** The background stages (projector; derivation and jobs in a worker): tests quiet or pause one with `stages.get(name)`. */
  readonly stages: StageRunner;
  /** Recorded uses of facts not yet written (tests flush it; the `usage` stage does every USAGE_FLUSH_MS). */
  readonly usage: UsageRecorder;
  /** How often this process loaded its embedder (once at most) and whether the API warmed it before serving. */
  readonly embedder: { readonly loads: number; readonly warmed: boolean };
  /** Whether a worker warmed its extractor before its stages started (`Extractor.warmUp`; false without a worker or a warm-up). */
  readonly extractor: { readonly warmed: boolean };
  /** The API's background search warm-up (SEARCH_WARM_UP_SECONDS): how it ended; null when none ran. */
  readonly searchWarmUp: Promise<WarmUpOutcome | null>;
  /** The child process that runs the background work (`workerProcess`), if this app started one. */
  readonly workerProcess: WorkerProcess | undefined;
  /** This process's metrics (what /metrics renders; a worker process hands its pipeline counters to the service that started it). */
  readonly metrics: Registry;
  stop(): Promise<void>;
}

/** Wires the service on already-running stores: migrations, bootstrap admin, API and workers. */
export async function startApp(
  config: AppConfig,
  stores: Pick<Stores, 'postgresUrl' | 'postgresRuntimeUrl' | 'neo4j'>,
  opts: AppOptions,
  log: AppLogger,
): Promise<App> {
  let generated: string | undefined;
  // Tracing (OTEL_EXPORTER_OTLP_ENDPOINT) before anything that makes spans; off: nothing registered.
  // `serve`'s own process runs the background work in the child it supervises: its /metrics carries the child's counters.
  const runsWorker = opts.worker || (opts.workerProcess === true && opts.api);
  const role: ProcessRole = opts.api && runsWorker ? 'api+worker' : opts.api ? 'api' : opts.worker ? 'worker' : 'cli';
  const tracing = startTracing(config, role, log);
  const database = await openDatabase({
    ownerUrl: stores.postgresUrl,
    runtimeUrl: stores.postgresRuntimeUrl,
    window: { maxPastDays: config.limits.occurredAtMaxPastDays, maxFutureDays: config.limits.occurredAtMaxFutureDays },
    log: { info: (m, fields) => log.info(fields ?? {}, m), warn: (m) => log.warn(m), debug: (m) => log.debug(m) },
    // The bootstrap admin is written by the owner: the runtime role cannot insert tokens.
    atStart: async (owner) => {
      ({ generated } = await new TokenService(new TokenRepository(owner)).ensureBootstrapAdmin(config.adminToken));
    },
  });
  const { ds, counter } = database;
  const cleanups: ShutdownStep[] = [{ what: 'PostgreSQL pool', run: () => database.close() }];
  // Runs last: the spans of the stop itself are sent too.
  if (tracing) cleanups.unshift({ what: 'trace export', run: () => tracing.shutdown() });
  try {
    const driver = createNeo4jDriver(stores.neo4j);
    cleanups.push({ what: 'Neo4j driver', run: () => driver.close() });
    // The graph's schema comes before the projector's first write (its MERGEs rely on the
    // constraints) and before exploration serves. Neo4j down at start does not keep ingest and
    // derivation down, which need Postgres alone: the process starts, says so, and applies the
    // schema in the background until Neo4j answers; the projector starts then (bench/chaos: an
    // API or worker restarted during an outage stayed down until Neo4j was back).
    const graph: GraphReadiness = opts.graphSchemaApplied
      ? { upAtStart: true, ready: Promise.resolve(true), stop: () => undefined }
      : await prepareGraph(driver, Boolean(opts.api), log);
    cleanups.push({ what: 'graph schema retries', run: async () => graph.stop() });
    // Migrations and the graph schema are in place: the worker process starts beside the rest of this start.
    let graphApplied = graph.upAtStart;
    void graph.ready.then((ok) => (graphApplied = ok));
    const workerProcess =
      opts.workerProcess && opts.api && !opts.worker
        ? startWorkerProcess({ ...workerProcessOptions(config, stores, log), graphSchemaApplied: () => graphApplied })
        : undefined;
    if (workerProcess) cleanups.push({ what: 'worker process', run: () => workerProcess.stop() });

    const tokenService = new TokenService(new TokenRepository(ds));
    if (generated) announceAdminToken(config, generated, log);

    const pubSub: AppPubSub = createAppPubSub();
    const listener = new PgListener(stores.postgresRuntimeUrl ?? stores.postgresUrl, (m) => log.warn(m));
    await listener.start();
    cleanups.push({ what: 'PostgreSQL LISTEN connection', run: () => listener.close() });
    const revocations = new TokenRevocations();
    await revocations.listen(listener);

    const metrics = new AppMetrics(ds, role);
    cleanups.push({ what: 'process metrics (event-loop histograms, GC observer)', run: async () => metrics.close() });
    if (workerProcess) metrics.registry.mergeFrom(() => workerProcess.metrics());
    const eventRepository = new EventRepository(ds);
    const eventQueries = new EventQueryRepository(ds);
    const factRepository = new FactRepository(ds);
    const sql = Sql.of(ds);
    // Readers first: this process's searches say so on medallion_reads; its stages (if any) pause for any process's.
    const foreground = new Foreground(config.backgroundYield);
    const readNotes = new ReadNotes(
      async () => void (await ds.query(`SELECT pg_notify('${CHANNELS.reads}', '')`)),
      (m) => log.warn(m),
    );
    const jobRepository = new JobRepository(sql);
    const overlayRepository = new OverlayRepository(sql);
    const facts = new FactReader(factRepository, opts.factTextView, overlayRepository);
    const pipeline = new PipelineService(ds, jobRepository);
    // One embedder per process, loaded on first use: search queries and derived facts share it.
    // A worker-only process gives it two onnxruntime sessions (docs/silver.md "Throughput"); where
    // the API runs too, a second session's thread took the CPU that requests needed (bench/recall:
    // search p95 154 → 232 ms and ingest 18.8 → 33.9 s with two).
    const embedderStatus = { loads: 0, warmed: false };
    const extractorStatus = { warmed: false };
    const embedder = lazyEmbedder(() => {
      embedderStatus.loads++;
      return loadEmbedder(config, (m) => log.info(m), { sessions: opts.worker && !opts.api ? 2 : 1 });
    });
    // Its onnxruntime worker threads outlive the app otherwise: a process that starts and stops
    // apps (the tests do) kept a loaded model and its thread for every app it stopped.
    cleanups.push({ what: 'embedder', run: () => embedder.close() });
    const approvalRepository = new ApprovalRepository(sql);
    // Irreversible operations and approval decisions: one structured log line and a count each (platform/telemetry/audit.ts).
    const audit = new AuditLog(log);
    const approvalGate = opts.approvals ?? new PostgresApprovalGate(approvalRepository);
    const ontology = loadOntology(config.models.ontologyFile);
    const promotionRepository = new PromotionRepository(sql);
    const reviewRepository = new ReviewRepository(sql);
    const review = new ReviewService(sql, reviewRepository, { maxPageSize: config.limits.maxPageSize });
    const promotion = new PromotionService(
      sql,
      promotionRepository,
      { ...config.gold, fallbackType: ontology.fallbackEntityType, personType: ontology.entityTypes.includes('person') ? 'person' : null },
      loadEntityJudge(config, (m) => log.info(m)),
      () => embedder().catch(() => null),
      new ConflictService(sql, reviewRepository, { reviewConfidence: config.gold.reviewConfidence, objectOverlap: 0.6, batchSize: config.gold.batchSize }),
    );
    const about = new AboutService(new AboutRepository(sql), driver, facts, DEFAULT_ABOUT_OPTIONS, review);
    const graphRebuild = graphRebuildService(ds, driver, { embedder, warn: (m) => log.warn(m) });
    // Uses of facts (search hits, reads by id) for decay, written in batches by the `usage` stage (docs/lifecycle.md).
    const usage = new UsageRecorder(sql, opts.clock ?? systemClock);
    cleanups.push({ what: 'recorded fact uses', run: () => usage.flush().then(() => undefined) });
    const lifecycleRepository = new LifecycleRepository(sql);
    const lifecycle = new LifecycleService(sql, lifecycleRepository, jobRepository, decaySettings(config), opts.clock ?? systemClock);
    // consistency_graph reads a stored graphConsistency answer with its age (docs/quality.md); a worker keeps read answers fresh.
    const consistencyAnswers = new GraphConsistencyAnswers(new GraphConsistencyRepository(sql), graphRebuild, {
      maxAgeSeconds: config.quality.consistencyMaxAgeSeconds,
      refreshSeconds: config.quality.consistencyRefreshSeconds,
    });
    const services: Services = {
      tokens: tokenService,
      ingest: new IngestService(eventRepository, systemClock, config.limits, (o) => metrics.observeIngest(o)),
      events: new EventService(
        eventRepository,
        eventQueries,
        {
          maxPageSize: config.limits.maxPageSize,
          maxConversationEvents: config.limits.maxConversationEvents,
        },
        (ids) => overlayRepository.spansOnEvents(ids),
      ),
      eventNodes: new EventNodeService(driver),
      provenance: new ProvenanceService(driver, new ChangeRepository(ds), facts, provenanceLimits(config.limits)),
      pubSub,
      subscriptions: new SubscriptionService(pubSub, pipeline),
      facts,
      silver: new SilverReadService(facts, factRepository, config.limits.maxPageSize, usage),
      pipeline,
      graph: graphRebuild,
      search: new SearchService(
        driver,
        embedder,
        {
          ...DEFAULT_SEARCH_SETTINGS,
          graphOverGold: config.search.graphOverGold,
          speakerBoost: config.search.speakerBoost ?? DEFAULT_SEARCH_SETTINGS.speakerBoost,
          replanInBackground: opts.api === true && config.search.replanEveryMs > 0,
          heldVectorsBytes: config.search.heldVectorsBytes,
        },
        (m) => log.warn(m),
        usage,
        () => readNotes.reading(),
      ),
      reembed: new ReembedService(ds, embedder, jobRepository),
      explore: new ExploreService(
        driver,
        () => eventQueries.namespaces(),
        { queryTimeoutMs: config.limits.exploreTimeoutMs },
        (field) => metrics.exploreQueries.inc({ field }),
      ),
      approvals: new ApprovalService(
        approvalRepository,
        (ids) => eventRepository.findByIds(ids),
        { ttlSeconds: config.approvalTtlSeconds, maxPageSize: config.limits.maxPageSize },
        audit,
      ),
      approvalGate,
      erasure: new ErasureService(eventRepository, new ErasureRepository(sql), approvalRepository, audit),
      retention: new RetentionService(new RetentionRepository(sql), { retentionDays: config.lifecycle.bronzeRetentionDays }, opts.clock ?? systemClock, {
        approvals: approvalRepository,
        log: audit,
      }),
      gold: new GoldService(
        sql,
        promotionRepository,
        jobRepository,
        { maxPageSize: config.limits.maxPageSize, fallbackType: ontology.fallbackEntityType },
        facts,
      ),
      overlays: new OverlayService(sql, overlayRepository, factRepository, eventRepository, approvalGate, audit),
      about,
      review,
      goldReads: new GoldReadService(driver, facts, about, config.limits, review),
      quality: new QualityService(new QualityRepository(sql), driver, consistencyAnswers, config.quality, new ChainVerificationRepository(sql)),
      lifecycle,
    };
    // Before the projector's first batch and before /health answers: the first event after a
    // start took 1-2.5 s to reach the graph and the first search 2-5 s, in a cold Neo4j
    // (graph-warm-up.ts). It runs while the rest of the start (models, schedules, the GraphQL
    // schema) goes on, and is awaited before the stages start.
    const warmedUp = (
      opts.warmUp === false ? Promise.resolve() : warmUp(driver, embedder, opts.api ? services : undefined, embedderStatus, log, graph.upAtStart)
    ).then(
      () => null,
      (err: unknown) => err,
    );
    const schema = opts.api
      ? buildAppSchema().then(
          (built) => ({ built }),
          (err: unknown) => ({ err }),
        )
      : undefined;

    const warn = (m: string) => log.warn(m);
    // Every background stage on one runner (platform/stages.ts): this process registers them, the
    // runner starts, wakes (NOTIFY) and stops them.
    const stages = new StageRunner(warn, {
      foreground,
      paused: (stage, ms) => pipelineMetrics.backgroundYieldSeconds.inc({ stage }, ms / 1000),
    });
    // LOG_LEVEL=debug: each batch's stages, to attribute a slow first answer (bench/start-stop.ts).
    const projection = new ProjectionJob(ds, driver, config.projector.batchSize, {
      overlays: (tx) => new OverlayRepository(tx),
      embedding: { embedder, warn },
      trace: (t) => log.debug({ projector: t }, 'projector batch'),
    });
    // Recorded uses of facts, one INSERT … ON CONFLICT per USAGE_FLUSH_MS (silver/usage-recorder.ts).
    stages.register(usage.stage(config.lifecycle.usageFlushMs));
    // The search statements planned again in the background as the graph grows (SearchService.refreshPlans).
    if (opts.api && config.search.replanEveryMs > 0)
      stages.register(services.search.plansStage(config.search.replanEveryMs, graph.upAtStart ? undefined : graph.ready));
    // The projector writes the graph: it starts once the graph's schema is in place.
    stages.register(
      projectorStage(
        [projection, new GoldProjectionJob(sql, driver)],
        { pollMs: config.projector.pollMs, startWhen: graph.upAtStart ? undefined : graph.ready },
        warn,
      ),
    );
    if (opts.worker) {
      const models = loadModels(config, await embedder(), (m) => log.info(m));
      // Before the derivation stage starts: a first batch paid it on the event loop the API shares.
      if (models.extractor.warmUp) {
        const t0 = Date.now();
        await models.extractor.warmUp();
        extractorStatus.warmed = true;
        log.info({ ms: Date.now() - t0, model: models.extractor.model }, 'extractor warmed up');
      }
      const deriveService = new DeriveService(models, new CandidateRepository(ds), { ...config.derive, ontology });
      const promotionTrigger = new PromotionTrigger(sql, {
        everySeconds: config.gold.promoteEverySeconds,
        settleSeconds: config.gold.promoteSettleSeconds,
        minGapSeconds: config.gold.promoteMinGapSeconds,
      });
      const deriveJob = new DeriveJob(ds, eventRepository, deriveService, config.derive, warn);
      stages.register(
        deriveStage(
          deriveJob,
          config.derive,
          (r) => {
            if (r.kind !== 'skipped') log.debug({ derive: r }, 'derive step');
            metrics.observeDerive(r);
            opts.onDerive?.(r);
            // Promotion at the first run after the namespace settles (docs/gold.md, "When promotion runs").
            if (r.kind === 'success' && r.events > 0 && promotionTrigger.enabled)
              promotionTrigger.afterDerive(r.namespace).catch((err: unknown) => warn(`promotion trigger: ${err instanceof Error ? err.message : String(err)}`));
          },
          warn,
        ),
      );
      // Every kind of ops.jobs through the one kernel (platform/jobs/): schedules fire, then the next due job runs.
      const reanchor = new ReanchorService(sql, overlayRepository, factRepository, new LineageRepository(ds), {
        accept: config.overlays.reanchorAccept,
        review: config.overlays.reanchorReview,
      });
      const handlers = jobHandlers({
        sql,
        graph: services.graph,
        reembed: services.reembed,
        promotion,
        promotionTrigger,
        lifecycle,
        pollMs: config.derive.pollMs,
        reanchorOverlays: async (namespace, jobId) => describeReport(await reanchor.reanchorNamespace(namespace, jobId)),
        log,
      });
      const schedules = new ScheduleRepository(sql);
      const worker = new JobWorker(jobRepository, schedules, handlers, {
        workerId: config.derive.workerId,
        leaseSeconds: config.derive.jobLeaseSeconds,
        parse: parsePayload,
        log: warn,
        events: log,
      });
      // Promotion every GOLD_PROMOTE_EVERY_SECONDS for each namespace with Silver entities
      // (docs/gold.md): checked at start and then once a minute, so a namespace that gets its
      // first entities while the worker runs is scheduled too.
      const keepSchedules = scheduleKeeper(config.gold.promoteEverySeconds, async () => {
        await schedules.ensure('promote', await promotionRepository.namespacesWithEntities(), {}, config.gold.promoteEverySeconds);
      });
      // Decay and pruning of every namespace with facts, each on its own interval (docs/lifecycle.md); 0 turns one off.
      const keepDecay = scheduleKeeper(config.lifecycle.decayEverySeconds, async () => {
        await schedules.ensure('decay', await lifecycleRepository.namespacesWithFacts(), {}, config.lifecycle.decayEverySeconds);
      });
      const keepPrune = scheduleKeeper(config.lifecycle.pruneEverySeconds, async () => {
        const params = { maxImportance: config.lifecycle.pruneMaxImportance, unusedForDays: config.lifecycle.pruneUnusedForDays };
        await schedules.ensure('prune', await lifecycleRepository.namespacesWithFacts(), params, config.lifecycle.pruneEverySeconds);
      });
      // The hash chain of every namespace that has one, verified every CHAIN_VERIFY_EVERY_SECONDS (docs/operations.md
      // "Scheduled verify"); a namespace's schedule appears within that interval (at most a minute) of its first sealed record.
      const verifyEvery = config.lifecycle.chainVerifyEverySeconds;
      const keepVerify = scheduleKeeper(
        verifyEvery,
        async () => {
          await schedules.ensure('verify_chain', await new ChainVerificationRepository(sql).namespaces(), {}, verifyEvery);
        },
        Math.min(SCHEDULE_CHECK_MS, verifyEvery * 1000),
      );
      await keepSchedules();
      await keepDecay();
      await keepPrune();
      await keepVerify();
      stages.register(
        jobStage(
          worker,
          {
            pollMs: config.derive.pollMs,
            beforeStep: () =>
              Promise.all([
                keepSchedules().catch((err: unknown) => warn(`promotion schedules: ${err instanceof Error ? err.message : String(err)}`)),
                keepDecay().catch((err: unknown) => warn(`decay schedules: ${err instanceof Error ? err.message : String(err)}`)),
                keepPrune().catch((err: unknown) => warn(`prune schedules: ${err instanceof Error ? err.message : String(err)}`)),
                keepVerify().catch((err: unknown) => warn(`verify schedules: ${err instanceof Error ? err.message : String(err)}`)),
              ]).then(() => undefined),
          },
          warn,
        ),
      );
      // The per-namespace hash chain over Bronze, overlays, approval log and judge decisions (docs/operations.md).
      stages.register(chainSealerStage(new ChainRepository(sql)));
      if (config.quality.consistencyMaxAgeSeconds > 0 && config.quality.consistencyRefreshSeconds > 0) stages.register(consistencyAnswers.stage());
      const reembedJob = await services.reembed.enqueueIfModelChanged();
      if (reembedJob)
        log.info(
          { job: reembedJob },
          'the embedding model changed: re-embedding facts and events (the jobProgress subscription and the job(id) query show progress)',
        );
    }
    await listener.on(CHANNELS.events, (payload) => {
      const { namespace, ids } = JSON.parse(payload) as EventsIngestedNotification;
      log.debug({ namespace, events: ids.length }, 'events ingested (NOTIFY)');
      for (const id of ids) pubSub.publish('EVENT_INGESTED', { id, namespace });
      stages.wake(CHANNELS.events);
    });
    await listener.on(CHANNELS.facts, (payload) => {
      const { namespace, added, superseded } = JSON.parse(payload) as FactsChangedNotification;
      for (const id of added) pubSub.publish('FACT_ADDED', { namespace, id });
      for (const [id, newId] of superseded) pubSub.publish('FACT_SUPERSEDED', { namespace, id, newId });
      stages.wake(CHANNELS.facts);
    });
    // Searches served by any process make this one's stages pause between steps (platform/foreground.ts).
    if (opts.worker) await listener.on(CHANNELS.reads, () => foreground.heard());
    await listener.on(CHANNELS.jobs, (payload) => {
      pubSub.publish('JOB_CHANGED', JSON.parse(payload) as { id: string });
      stages.wake(CHANNELS.jobs);
    });
    const warmUpFailed = await warmedUp;
    if (warmUpFailed) throw warmUpFailed;
    if (opts.worker) {
      cleanups.push(...stages.stopSteps().reverse());
      stages.start();
      log.info('background workers running (projector, derivation, jobs)');
    } else if (opts.api) {
      // The uses of facts this API's reads record are written by this process (a worker cannot see
      // them); the search plans are this process's searches'.
      cleanups.push(...stages.startOnly(['usage', 'search-plans']));
    }
    // Before /health answers: a message sent then is projected (and searchable) as before.
    await workerProcess?.ready;
    // /health's sections, in the API and in a worker's METRICS_PORT server (health.ts, docs/operations.md "Health").
    const health: HealthSection[] = [
      storeSection('postgres', async () => void (await ds.query('SELECT 1'))),
      storeSection('neo4j', () => pingNeo4j(driver)),
      workersSection(stages, config.healthStallSeconds),
      lagsSection(ds),
      chainSection(ds),
      ...(workerProcess ? [workerProcessSection(workerProcess)] : []),
    ];
    // A process without the API (`medallion worker`) serves /metrics and /health at METRICS_PORT when set.
    if (!opts.api && opts.worker && config.metricsPort !== undefined) {
      const served = await serveOpsEndpoints({
        registry: metrics.registry,
        health,
        metricsToken: config.metricsToken,
        host: config.host,
        port: config.metricsPort,
      });
      cleanups.push({ what: 'metrics and health server', run: () => served.close() });
      log.info({ metrics: `${served.url}/metrics`, health: `${served.url}/health` }, 'serving worker metrics and health');
    }

    let httpHandle: HttpServerHandle | undefined;
    if (opts.api) {
      httpHandle = await startHttpServer({
        host: config.host,
        port: config.port,
        schema: await servedSchema(schema, services, graph.upAtStart, log),
        services,
        metrics,
        limits: {
          maxDepth: config.limits.maxQueryDepth,
          maxComplexity: config.limits.maxQueryComplexity,
          maxInputDepth: config.limits.maxInputDepth,
          maxRequestBytes: config.limits.maxRequestBytes,
        },
        authRecheckMs: config.authRecheckMs,
        keepAliveMs: config.httpKeepAliveMs,
        revocations,
        mcp: { maxPageSize: config.limits.maxPageSize, maxBatchSize: config.limits.maxBatchSize },
        mcpAllowedHosts: config.mcpAllowedHosts,
        health,
        metricsToken: config.metricsToken,
        log: { info: (m) => log.info(m), error: (m, err) => log.error({ err }, m), warn: (fields, m) => log.warn(fields, m) },
      });
      cleanups.push({ what: 'HTTP server (open requests, subscriptions, MCP sessions)', run: () => (httpHandle as HttpServerHandle).close() });
      log.info({ url: `${httpHandle.url}/graphql`, graphiql: `${httpHandle.url}/graphiql`, mcp: `${httpHandle.url}/mcp` }, 'serving GraphQL and MCP');
    }
    // Serving now; until someone searches, compile the search path (SearchService.keepWarm).
    let searchWarmUp: Promise<WarmUpOutcome | null> = Promise.resolve(null);
    if (opts.api && opts.warmUp !== false && graph.upAtStart && config.search.warmUpMs > 0) {
      let stopping = false;
      searchWarmUp = services.search
        .keepWarm(config.search.warmUpMs, () => stopping)
        .then((o) => {
          log.info({ searches: o.searches, ms: o.ms, stoppedBy: o.reason }, 'search path warmed up in the background');
          return o;
        });
      cleanups.push({
        what: 'background search warm-up',
        run: async () => {
          stopping = true;
          await searchWarmUp;
        },
      });
    }

    return {
      config,
      ds,
      queryCounter: counter,
      neo4j: driver,
      services,
      repositories: { events: eventRepository, facts: factRepository },
      http: httpHandle,
      stages,
      usage,
      embedder: embedderStatus,
      extractor: extractorStatus,
      searchWarmUp,
      workerProcess,
      metrics: metrics.registry,
      stop: () => runShutdown([...cleanups].reverse(), log),
    };
  } catch (err) {
    for (const c of cleanups.reverse()) await c.run().catch(() => undefined);
    throw err;
  }
}

/**
 * The worker process reads this process's configuration, with the stores this process started (the
 * embedded PostgreSQL, the local Neo4j) named by URL so it starts none of its own. It serves no
 * metrics port of its own: the service's /metrics carries its pipeline counters. Its embedder gets
 * one onnxruntime session unless configured (two took the CPU requests needed: see loadEmbedder's caller).
 */
function workerProcessOptions(config: AppConfig, stores: Pick<Stores, 'postgresUrl' | 'postgresRuntimeUrl' | 'neo4j'>, log: AppLogger): WorkerProcessOptions {
  const env = childProcessEnv(
    {
      DATABASE_URL: stores.postgresUrl,
      DATABASE_RUNTIME_URL: stores.postgresRuntimeUrl,
      NEO4J_URI: stores.neo4j.uri,
      NEO4J_USER: stores.neo4j.user,
      NEO4J_PASSWORD: stores.neo4j.password,
      OFFLINE_EMBEDDER_SESSIONS: config.environment.OFFLINE_EMBEDDER_SESSIONS ?? '1',
    },
    config.environment,
    ['METRICS_PORT'],
  );
  return { env, log, nice: config.workerProcessNice };
}

/** The graph's rebuild and consistency check, handed Gold's rows and the overlays (tests build one without an embedder). */
export function graphRebuildService(ds: DataSource, driver: Driver, embedding?: EventEmbedding): GraphRebuildService {
  const sql = Sql.of(ds);
  return new GraphRebuildService(ds, driver, { gold: goldGraphSource(new PromotionRepository(sql)), overlays: new OverlayRepository(sql), embedding });
}

async function builtSchema(pending: Promise<{ built: GraphQLSchema } | { err: unknown }> | undefined): Promise<GraphQLSchema> {
  const result = await (pending ?? buildAppSchema().then((built) => ({ built })));
  if ('err' in result) throw result.err;
  return result.built;
}

/**
 * The query embedder is loaded and has run once before /health answers (the first searchMemory
 * after a start paid the model load and onnxruntime's first run, 7 s); a model that cannot load
 * fails the start. Then the graph's statements run once over throwaway rows (`warmUpGraph`, best
 * effort), and, where this process serves the API, those of the reads a person or an agent starts
 * with: search, provenance, about (exploration once the schema is built: `servedSchema`).
 */
async function warmUp(
  driver: Driver,
  embedder: () => Promise<Embedder>,
  api: Pick<Services, 'search' | 'provenance' | 'about'> | undefined,
  status: { loads: number; warmed: boolean },
  log: AppLogger,
  graphUp: boolean,
): Promise<void> {
  if (api) {
    const t0 = Date.now();
    const queryEmbedder = await embedder();
    await queryEmbedder.embedQuery(['which editor do I use?']);
    status.warmed = true;
    log.info({ ms: Date.now() - t0, model: queryEmbedder.model }, 'query embedder loaded and warmed');
  }
  if (!graphUp) return; // Neo4j is down: the first batch and search pay for it once it is back
  const t1 = Date.now();
  const warn = (m: string) => log.warn(m);
  const reads: WarmUpRead[] = api ? [() => api.search.warmUp(), (rows) => api.provenance.warmUp(rows), (rows) => api.about.warmUp(rows)] : [];
  await warmUpGraph(driver, { embedder, warn }, reads).then(
    () => log.info({ ms: Date.now() - t1 }, 'graph statements warmed up'),
    (err: unknown) => warn(`graph warm-up failed (the first projection and search pay for it): ${err instanceof Error ? err.message : String(err)}`),
  );
}

/**
 * The built schema, once the documented exploration shapes have run over the warm-up rows
 * (`warmUpExploration`, best effort), as a caller that may list only their namespace. That caller
 * lives in this process alone: no token stands for it, and no real namespace is `#warm-up`.
 */
async function servedSchema(
  pending: Promise<{ built: GraphQLSchema } | { err: unknown }> | undefined,
  services: Services,
  graphUp: boolean,
  log: AppLogger,
): Promise<GraphQLSchema> {
  const schema = await builtSchema(pending);
  if (!graphUp) return schema;
  const t0 = Date.now();
  const warmUpCaller = AuthContext.of({
    tokenId: WARM_UP_NAMESPACE,
    principalId: WARM_UP_NAMESPACE,
    name: 'start warm-up',
    grants: [{ namespacePattern: WARM_UP_NAMESPACE, capabilities: [Capability.LIST, Capability.READ] }],
  });
  // Its queries stay out of medallion_graph_explore_queries_total.
  const quiet = { ...services, explore: new ExploreService(services.explore.driver, async () => [], services.explore.settings) };
  await warmUpExploration(schema, scopeFor(quiet, warmUpCaller), { ns: WARM_UP_NAMESPACE, name: WARM_UP_NAME }).then(
    () => log.info({ ms: Date.now() - t0 }, 'exploration shapes warmed up'),
    (err: unknown) => log.warn(`exploration warm-up failed (the first graph query pays for it): ${err instanceof Error ? err.message : String(err)}`),
  );
  return schema;
}

/** Whether the graph's schema was applied at start, and when it is (false: the process stopped first). */
export interface GraphReadiness {
  readonly upAtStart: boolean;
  readonly ready: Promise<boolean>;
  stop(): void;
}

/**
 * Applies the Neo4j schema (and, for the API, checks exploration's compatibility). A Neo4j that
 * does not answer (`pingNeo4j`) is an outage, not a failed start: the process goes on and the
 * schema is applied again every `retryMs` (doubling up to 30 s) until Neo4j answers or the
 * process stops. Any other error (a schema Neo4j refuses) fails the start as before.
 */
export async function prepareGraph(driver: Driver, api: boolean, log: AppLogger, retryMs = 1_000): Promise<GraphReadiness> {
  const apply = async (): Promise<void> => {
    await applyNeo4jSchema(driver);
    if (api) await checkExploreCompat(driver);
  };
  const down = (): Promise<boolean> =>
    pingNeo4j(driver).then(
      () => false,
      () => true,
    );
  try {
    await apply();
    return { upAtStart: true, ready: Promise.resolve(true), stop: () => undefined };
  } catch (err) {
    if (!(await down())) throw err;
    log.warn(
      `Neo4j does not answer at start (${err instanceof Error ? err.message : String(err)}): ingest and derivation run; the graph schema is applied, and the projector starts, once it answers`,
    );
  }
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let settle: (ok: boolean) => void = () => undefined;
  const ready = new Promise<boolean>((resolve) => {
    settle = resolve;
    const attempt = async (delay: number): Promise<void> => {
      if (stopped) return;
      try {
        await apply();
        log.info('Neo4j answers: graph schema applied, projector starting');
        resolve(true);
      } catch (err) {
        if (stopped) return;
        if (!(await down())) log.warn(`applying the graph schema failed, retrying: ${err instanceof Error ? err.message : String(err)}`);
        timer = setTimeout(() => void attempt(Math.min(delay * 2, 30_000)), delay);
      }
    };
    timer = setTimeout(() => void attempt(Math.min(retryMs * 2, 30_000)), retryMs);
  });
  return {
    upAtStart: false,
    ready,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
      settle(false);
    },
  };
}

function announceAdminToken(config: AppConfig, token: string, log: AppLogger): void {
  const file = path.join(config.dataDir, 'admin.token');
  fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
  // Printed once, on stdout, for the person starting the service; the database keeps only a hash.
  process.stdout.write(`\nBootstrap admin token (shown once, also written to ${file}):\n  ${token}\n\n`);
  log.info({ file }, 'generated the bootstrap admin token');
}
