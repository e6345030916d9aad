import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { MemoryClient, MemoryClientError, OnFactAddedDocument, type EventInput, type EventKind } from '../../packages/client/src';
import { uniqueNamespace } from '../support/stores';
import { createToken, eventually, gqlOk, startTestApp, TestApp } from '../support/test-app';

const root = path.resolve(__dirname, '..', '..');
const fixtures = path.join(root, 'test/fixtures/client-agent');

// Child npm and node processes must not inherit `npm test`'s npm_* settings (prefix, workspace).
const cleanEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_'))),
  ...extra,
});

/**
 * Runs a command without blocking: the service under test lives in this process, and the agent
 * script must reach it while it runs.
 */
function run(cmd: string, args: string[], cwd: string, extraEnv: Record<string, string> = {}, timeout = 300_000): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: cleanEnv(extraEnv), timeout, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) =>
      code === 0 ? resolve({ stdout, stderr }) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code ?? signal}\n${stdout}\n${stderr}`)),
    );
  });
}

/** The fenced blocks of one language in README.md's "Use it from TypeScript" section, in order. */
function readmeBlocks(lang: string): string[] {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Use it from TypeScript'), readme.indexOf('\n## ', readme.indexOf('## Use it from TypeScript') + 3));
  return [...section.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1] ?? '');
}

type Behaviour = 'forward' | 'drop-after-forward' | 'unavailable';

/** An HTTP hop in front of the service that misbehaves on cue, as a flaky network or proxy does. */
async function flakyProxy(target: string, script: Behaviour[]): Promise<{ url: string; seen: () => number; close: () => Promise<void> }> {
  let seen = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const behaviour = script[seen++] ?? 'forward';
      if (behaviour === 'unavailable') {
        res.writeHead(503, { 'content-type': 'text/plain' }).end('Service Unavailable');
        return;
      }
      const answer = await fetch(`${target}${req.url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: String(req.headers.authorization) },
        body: Buffer.concat(chunks),
      });
      const body = await answer.text();
      // The service has committed; the answer is lost on the way back.
      if (behaviour === 'drop-after-forward') return req.socket.destroy();
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    seen: () => seen,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

describe('@medallion-memory/client', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50' });
  });
  afterAll(async () => t?.stop());

  describe('ingest retries', () => {
    const ns = uniqueNamespace('client-retry');
    let token: string;
    const note = (id: string, kind: EventKind = 'NOTE'): EventInput => ({
      namespace: ns,
      source: 'retry-test',
      sourceEventId: id,
      kind,
      content: `note ${id}`,
    });
    const fast = { retries: 3, initialDelayMs: 10, maxDelayMs: 50 };
    beforeAll(async () => {
      token = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'READ', 'LIST'] }])).token;
    });

    it('retries after a lost answer and stores the event once: the retry reports DUPLICATE', async () => {
      const proxy = await flakyProxy(t.url, ['drop-after-forward', 'forward']);
      try {
        const [result] = await new MemoryClient({ url: proxy.url, token, retry: fast }).ingest(note('lost-1'));
        expect(proxy.seen()).toBe(2);
        expect(result).toMatchObject({ index: 0, status: 'DUPLICATE', event: { id: expect.any(String) } });
        const listed = await gqlOk<{ events: { edges: Array<{ node: { id: string; sourceEventId: string } }> } }>(
          t.url,
          token,
          `query($ns: String!) { events(namespace: $ns, first: 50) { edges { node { id sourceEventId } } } }`,
          { ns },
        );
        expect(listed.events.edges.filter((e) => e.node.sourceEventId === 'lost-1').map((e) => e.node.id)).toEqual([result?.event?.id]);
      } finally {
        await proxy.close();
      }
    });

    it('backs off through 503s and succeeds on the third attempt', async () => {
      const proxy = await flakyProxy(t.url, ['unavailable', 'unavailable', 'forward']);
      try {
        const [result] = await new MemoryClient({ url: proxy.url, token, retry: fast }).ingest([note('busy-1')]);
        expect(result?.status).toBe('CREATED');
        expect(proxy.seen()).toBe(3);
      } finally {
        await proxy.close();
      }
    });

    it('gives up after its retries with the last error, typed', async () => {
      const proxy = await flakyProxy(t.url, ['unavailable', 'unavailable', 'unavailable', 'forward']);
      try {
        const err = await new MemoryClient({ url: proxy.url, token, retry: { ...fast, retries: 2 } }).ingest(note('busy-2')).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(MemoryClientError);
        expect(err).toMatchObject({ code: 'HTTP_ERROR', status: 503, retryable: true });
        expect(proxy.seen()).toBe(3);
      } finally {
        await proxy.close();
      }
    });

    it('does not retry what the service refused: BAD_USER_INPUT once, with its extensions.code', async () => {
      const proxy = await flakyProxy(t.url, []);
      try {
        const err = await new MemoryClient({ url: proxy.url, token, retry: fast }).ingest(note('bad-1', 'SHOUT' as EventKind)).catch((e: unknown) => e);
        expect(err).toMatchObject({ code: 'BAD_USER_INPUT', retryable: false });
        expect((err as MemoryClientError).errors[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        expect(proxy.seen()).toBe(1);
      } finally {
        await proxy.close();
      }
    });
  });

  describe('subscriptions', () => {
    it('a namespace without a grant ends the subscription with a FORBIDDEN MemoryClientError', async () => {
      const ns = uniqueNamespace('client-sub');
      const { token } = await createToken(t, [{ namespacePattern: ns, capabilities: ['READ', 'LIST'] }]);
      const client = new MemoryClient({ url: t.url, token });
      try {
        const err = await client
          .subscribe(OnFactAddedDocument, { namespace: `${ns}-other` })
          .next()
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(MemoryClientError);
        expect(err).toMatchObject({ code: 'FORBIDDEN' });
      } finally {
        await client.close();
      }
    });

    it('close() ends a pending next() as done', async () => {
      const ns = uniqueNamespace('client-sub');
      const { token } = await createToken(t, [{ namespacePattern: ns, capabilities: ['READ', 'LIST'] }]);
      const client = new MemoryClient({ url: t.url, token });
      try {
        const sub = client.subscribe(OnFactAddedDocument, { namespace: ns });
        const pending = sub.next();
        await new Promise((r) => setTimeout(r, 300));
        await sub.close();
        await expect(pending).resolves.toEqual({ done: true, value: undefined });
      } finally {
        await client.close();
      }
    });
  });

  describe("the README's install steps, from an empty folder", () => {
    let home: string;
    beforeAll(() => {
      home = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-client-readme-'));
    });
    afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

    it.each([
      ['ES modules', 'esm'],
      ['CommonJS', 'cjs'],
    ] as const)(
      '%s: pack into the project, npm init, install, run the example',
      async (_label, flavour) => {
        const [install] = readmeBlocks('bash').filter((b) => b.includes('npm pack -w @medallion-memory/client'));
        const [esm, cjs] = readmeBlocks('js');
        if (!install || !esm || !cjs) throw new Error('README.md lost its install steps or the ESM/CommonJS examples');
        expect(install).toContain('--pack-destination ~/my-agent');
        expect(install).toContain('npm init -y');
        // The README says: leave out `npm pkg set type=module` for CommonJS.
        const steps = (flavour === 'esm' ? install : install.replace(/^npm pkg set type=module\n/m, '')).replaceAll('~/my-agent', `~/agent-${flavour}`);
        expect(steps.includes('type=module')).toBe(flavour === 'esm');
        // HOME is the empty folder; the npm cache stays the machine's.
        const npmCache = process.env.npm_config_cache ?? path.join(os.homedir(), '.npm');
        await run('bash', ['-euo', 'pipefail', '-c', steps], root, { HOME: home, npm_config_cache: npmCache, npm_config_prefer_offline: 'true' });
        const project = path.join(home, `agent-${flavour}`);
        expect(fs.readdirSync(root).filter((f) => f.endsWith('.tgz'))).toEqual([]);
        expect(JSON.parse(fs.readFileSync(path.join(project, 'package.json'), 'utf8')).type).toBe(flavour === 'esm' ? 'module' : 'commonjs');

        const ns = uniqueNamespace(`client-readme-${flavour}`);
        const { token } = await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'SEARCH'] }], `readme-${flavour}`);
        await gqlOk(
          t.url,
          token,
          `mutation($ns: String!) { ingestEvent(input: { namespace: $ns, source: "chat", sourceEventId: "m-1", kind: MESSAGE, role: USER, content: "I use vim for everything" }) { status } }`,
          { ns },
        );
        const script = (flavour === 'esm' ? esm : cjs).replaceAll('http://127.0.0.1:4000', t.url).replaceAll('team-a/agent-1', ns);
        fs.writeFileSync(path.join(project, 'agent.js'), script);
        const hits = await eventually(async () => {
          const out = await run(process.execPath, ['agent.js'], project, { MEDALLION_TOKEN: token });
          const n = Number(out.stdout.trim());
          return n > 0 ? n : undefined;
        }, `the ${flavour} example to find the message`);
        expect(hits).toBeGreaterThan(0);
      },
      600_000,
    );
  });

  describe('packed and installed into a fresh project', () => {
    let work: string;
    beforeAll(() => {
      work = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-client-pack-'));
    });
    afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

    it('installs from its tarball, type-checks a strict agent script and runs it: ingest, wait for a fact, search, subscribe', async () => {
      // `npm pack` runs the package's prepack script, which builds dist/ (ESM + CJS + .d.ts).
      const packed = JSON.parse(
        (await run('npm', ['pack', '--json', '--workspace', '@medallion-memory/client', '--pack-destination', work], root)).stdout,
      ) as Array<{
        filename: string;
        files: Array<{ path: string }>;
      }>;
      const files = packed[0]?.files.map((f) => f.path) ?? [];
      expect(files).toEqual(
        expect.arrayContaining([
          'package.json',
          'dist/esm/index.js',
          'dist/esm/index.d.ts',
          'dist/esm/package.json',
          'dist/cjs/index.js',
          'dist/cjs/index.d.ts',
          'src/operations/facts.graphql',
        ]),
      );
      expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);

      const project = path.join(work, 'agent-project');
      fs.mkdirSync(project);
      fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'agent-project', private: true, type: 'module' }));
      for (const f of ['agent.ts', 'cjs-check.cts', 'tsconfig.json']) fs.copyFileSync(path.join(fixtures, f), path.join(project, f));
      const tarball = path.join(work, packed[0]?.filename ?? '');
      await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, 'graphql@16', 'typescript@5.9.3', '@types/node@20'], project);

      const tsc = await run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', '.'], project);
      expect(tsc.stdout + tsc.stderr).toBe('');

      const cjs = JSON.parse((await run(process.execPath, ['out/cjs-check.cjs'], project)).stdout.trim());
      expect(cjs).toEqual({ format: 'commonjs', isClientError: true, code: 'NETWORK_ERROR', retryable: true, documentKind: 'Document', typed: 'NOT_FOUND' });

      const ns = uniqueNamespace('client-agent');
      const { token } = await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'READ', 'LIST', 'SEARCH'] }], 'packed-agent');
      const agent = await run(process.execPath, ['out/agent.js'], project, { MEMORY_URL: t.url, MEMORY_TOKEN: token, MEMORY_NAMESPACE: ns }, 180_000);
      const saw = JSON.parse(agent.stdout.trim().split('\n').pop() ?? '{}');
      process.stderr.write(`packed agent saw: ${JSON.stringify(saw)}\n`);

      expect(saw.first).toMatchObject({ content: expect.stringMatching(/^ping \d+$/), wasAPing: true });
      expect(saw.created).toEqual({ status: 'CREATED', id: expect.any(String) });
      expect(saw.again).toEqual({ status: 'DUPLICATE', id: saw.created.id });
      expect(saw.pushed).toEqual({
        id: saw.created.id,
        namespace: ns,
        kind: 'MESSAGE',
        content: 'I prefer Rust for systems work',
        occurredAt: expect.any(String),
      });
      expect(saw.fact).toMatchObject({ namespace: ns, statement: expect.stringMatching(/rust/i) });
      const factHit = saw.hits.find((h: { factId?: string }) => h.factId === saw.fact.id);
      expect(factHit).toMatchObject({ kind: 'FACT', evidence: expect.arrayContaining(['I prefer Rust for systems work']) });
      // Whatever ranks first is about Rust: the fact, or the message it came from.
      expect(saw.hits[0].kind === 'FACT' ? saw.hits[0].evidence : [saw.hits[0].content]).toContain('I prefer Rust for systems work');
      expect(saw.refused).toEqual({ code: 'FORBIDDEN', isClientError: true });
    }, 600_000);
  });
});
