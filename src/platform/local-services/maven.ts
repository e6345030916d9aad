// Running `java`/`mvn` for the artifacts fetched from Maven Central at first use: the Neo4j jars
// (local-neo4j.ts) and the offline embedding models (offline-models/model-artifact.ts).
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import * as readline from 'node:readline';

export interface RunResult {
  code: number | null;
  output: string;
}

const noop = (): void => undefined;

/**
 * Runs a command, collecting stdout+stderr line by line; rejects with a clear message (prefixed
 * with `label`) only when it cannot start. A non-zero exit is the caller's to judge.
 */
export function runCommand(label: string, cmd: string, args: string[], onLine: (line: string) => void = noop, cwd?: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd });
    let output = '';
    const collect = (stream: NodeJS.ReadableStream): void => {
      readline.createInterface({ input: stream }).on('line', (line) => {
        output += line + '\n';
        if (output.length > 400_000) output = output.slice(-200_000);
        onLine(line);
      });
    };
    collect(child.stdout);
    collect(child.stderr);
    child.on('error', (err: NodeJS.ErrnoException) => {
      const hint = err.code === 'ENOENT' ? ` (is ${path.basename(cmd)} installed and on PATH?)` : '';
      reject(new Error(`${label}: cannot run \`${cmd}\`${hint}: ${err.message}`));
    });
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** The last `lines` lines of a command's output, for error messages. */
export function tail(text: string, lines = 30): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

export interface RunMavenOptions {
  /** Prefix of log lines and error messages ("local-neo4j"). */
  label: string;
  log?: (msg: string) => void;
  /** Working folder (default: this process's). Goals run without a pom write files relative to it. */
  cwd?: string;
}

/**
 * Runs `mvn -B -Dstyle.color=never <args>`, logging download progress every 5 s; throws with the
 * command and the tail of Maven's output when it exits non-zero.
 */
export async function runMaven(args: string[], opts: RunMavenOptions): Promise<void> {
  const log = opts.log ?? noop;
  const fullArgs = ['-B', '-Dstyle.color=never', ...args];
  const started = Date.now();
  let downloads = 0;
  let lastReport = started;
  const onLine = (line: string): void => {
    if (!line.includes('Downloaded from')) return;
    downloads++;
    if (Date.now() - lastReport >= 5_000) {
      lastReport = Date.now();
      log(`${opts.label}: maven: ${downloads} files downloaded (${Math.round((lastReport - started) / 1000)} s)`);
    }
  };
  const { code, output } = await runCommand(opts.label, 'mvn', fullArgs, onLine, opts.cwd);
  if (code !== 0) throw new Error(`${opts.label}: \`mvn ${fullArgs.join(' ')}\` exited with ${code}:\n${tail(output)}`);
}
