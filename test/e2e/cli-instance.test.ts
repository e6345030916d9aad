import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { readInstanceState } from '../../src/platform/local-services/instance-state';
import { uniqueNamespace } from '../support/stores';
import { eventually, gqlOk } from '../support/test-app';
import { MAIN, personEnv, runCli, spawnMain, Spawned, stopAndCount, untilServing } from '../support/instance-process';

/**
 * Issue 41, items 1 to 3, as an operator meets them: the service started the README's way on the
 * embedded defaults (no store URL, port or secret set), and every CLI command beside it with
 * nothing but the same DATA_DIR; then the same commands with no service running; a backup taken
 * while ingest goes on, restored into an empty instance that answers the same searches. Each
 * stop is timed until every process below the service is gone.
 */
describe('the CLI beside a running instance, and without one', () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-cli-'));
  fs.chmodSync(work, 0o755);
  const dataA = path.join(work, 'a');
  const dataB = path.join(work, 'b');
  const ns = uniqueNamespace('cli');
  const copy = uniqueNamespace('cli-copy');
  const load = uniqueNamespace('load');
  const exportFile = path.join(work, 'export.jsonl');
  const backupFile = path.join(work, 'backup.gz');
  const running: Spawned[] = [];
  // What the first part leaves for the second.
  let adminToken = '';
  let firstPorts: { postgres?: number; neo4j?: string } = {};
  let searchesAtBackup: string[] = [];
  let agentToken = '';
  let approvalId = '';

  afterAll(async () => {
    for (const p of running) if (p.child.exitCode === null) await stopAndCount(p, 'SIGKILL');
    fs.rmSync(work, { recursive: true, force: true });
  });

  const QUESTIONS = ['which instrument does Bob play?', 'where does Bob live?', 'what editor do I use?', 'who is my manager?'];
  const searchIds = async (url: string, token: string): Promise<string[]> => {
    const out: string[] = [];
    for (const q of QUESTIONS) {
      const r = await gqlOk<{ searchMemory: Array<{ kind: string; fact: { id: string } | null; event: { id: string } | null }> }>(
        url,
        token,
        `query($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q, limit: 5) { kind fact { id } event { id } } }`,
        { ns, q },
      );
      out.push(`${q} → ${r.searchMemory.map((h) => `${h.kind}:${h.fact?.id ?? h.event?.id}`).join(' ')}`);
    }
    return out;
  };
  const currentStatements = async (url: string, token: string, namespace: string): Promise<string[]> => {
    const r = await gqlOk<{ facts: { edges: Array<{ node: { statement: string } }> } }>(
      url,
      token,
      `query($ns: String!) { facts(namespace: $ns, first: 500) { edges { node { statement } } } }`,
      { ns: namespace },
    );
    return r.facts.edges.map((e) => e.node.statement).sort();
  };
  const settled = (url: string, token: string, namespace: string) =>
    eventually(
      async () => {
        const r = await gqlOk<{ pipelineStatus: { pending: number; outboxLag: number } }>(
          url,
          token,
          `query($ns: String!) { pipelineStatus(namespace: $ns) { pending outboxLag } }`,
          { ns: namespace },
        );
        return r.pipelineStatus.pending === 0 && r.pipelineStatus.outboxLag === 0;
      },
      `${namespace} derived and projected`,
      300_000,
    );

  it('beside a running service: ingest, quality, mcp, export → import → verify, and a backup while ingest goes on; SIGTERM ends every child within 10 s', async () => {
    const serve = spawnMain(['serve'], personEnv(dataA, { PORT: '0' }));
    running.push(serve);
    const state = await untilServing(dataA, serve);
    const url = state.api;
    adminToken = fs.readFileSync(path.join(dataA, 'admin.token'), 'utf8').trim();
    firstPorts = { postgres: state.postgres?.embedded ? state.postgres.port : undefined, neo4j: state.neo4j?.embedded ? state.neo4j.uri : undefined };
    const env = personEnv(dataA);

    // ingest: the service's URL and the admin token come from DATA_DIR.
    const lines = ['Bob Smith is my manager', 'Bob lives in Berlin', 'Bob plays the cello', 'I use vim for everything', 'I had lunch with Bob Smith today'].map(
      (content, i) => JSON.stringify({ namespace: ns, source: 'chat', sourceEventId: `m-${i}`, kind: 'MESSAGE', role: 'USER', content }),
    );
    const jsonl = path.join(work, 'events.jsonl');
    fs.writeFileSync(jsonl, `${lines.join('\n')}\n`);
    const ingest = await runCli(['ingest', jsonl], env);
    expect({ code: ingest.code, out: ingest.stdout }).toEqual({ code: 0, out: `${jsonl}: 5 lines, 5 created, 0 duplicate, 0 rejected\n` });
    await settled(url, adminToken, ns);

    // quality and mcp (stdio) find the service the same way.
    const quality = await runCli(['quality', '--namespace', ns], env);
    expect(quality.stdout).toContain(`quality of ${ns}`);
    expect([0, 2]).toContain(quality.code);
    const mcp = new Client({ name: 'cli-test', version: '1.0.0' });
    await mcp.connect(
      new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp'], env: { ...personEnv(dataA), MEDALLION_TOKEN: adminToken }, stderr: 'pipe' }),
    );
    expect((await mcp.listTools()).tools.map((t) => t.name)).toContain('search_memory');
    await mcp.close();

    // export → verify --file → import into another namespace (the service derives it) → verify.
    const exported = await runCli(['export', '--namespace', ns, '--out', exportFile], env);
    expect(exported.code).toBe(0);
    expect(exported.stderr).toMatch(/chain head [0-9a-f]{64}/);
    expect(exported.stderr).not.toMatch(/embedded PostgreSQL started|local Neo4j started|migrations applied/);
    expect((await runCli(['verify', '--file', exportFile], env)).stdout).toMatch(/chain intact/);
    const imported = await runCli(['import', exportFile, '--namespace', copy], env);
    // Beside the service the import starts no store of its own (its own `import started` log line aside).
    expect({ code: imported.code, err: imported.stderr.match(/embedded PostgreSQL started|local Neo4j started|migrations applied/g) }).toEqual({
      code: 0,
      err: null,
    });
    await settled(url, adminToken, copy);
    expect(await currentStatements(url, adminToken, copy)).toEqual(await currentStatements(url, adminToken, ns));
    const verified = await runCli(['verify', '--namespace', copy], env);
    expect({ code: verified.code, out: verified.stdout }).toEqual({ code: 0, out: expect.stringMatching(/chain intact/) });
    process.stdout.write(
      `beside the service: ingest ${ingest.ms} ms, quality ${quality.ms} ms, export ${exported.ms} ms, verify ${verified.ms} ms, import ${imported.ms} ms\n`,
    );

    // Things a backup must carry besides events: a token with its grants, an approval request.
    agentToken = (
      await gqlOk<{ createToken: { token: string } }>(
        url,
        adminToken,
        `mutation($ns: String!) { createToken(input: { name: "agent", grants: [{ namespacePattern: $ns, capabilities: [SEARCH, READ, LIST] }] }) { token } }`,
        { ns },
      )
    ).createToken.token;
    const someEvent = await gqlOk<{ events: { edges: Array<{ node: { id: string } }> } }>(
      url,
      adminToken,
      `query($ns: String!) { events(namespace: $ns, first: 1) { edges { node { id } } } }`,
      { ns },
    );
    approvalId = (
      await gqlOk<{ requestApproval: { id: string } }>(
        url,
        adminToken,
        `mutation($ns: String!, $params: JSON!) { requestApproval(input: { namespace: $ns, action: DESTROY_EVENT, params: $params, reason: "backup test" }) { id } }`,
        { ns, params: { eventId: someEvent.events.edges[0]?.node.id } },
      )
    ).requestApproval.id;

    // A backup while another namespace is being written: one event every 20 ms throughout.
    let loading = true;
    let sent = 0;
    const loader = (async () => {
      while (loading) {
        await gqlOk(
          url,
          adminToken,
          `mutation($ns: String!, $id: String!) { ingestEvent(input: { namespace: $ns, source: "load", sourceEventId: $id, kind: MESSAGE, role: USER, content: "zqx telemetry ping" }) { status } }`,
          {
            ns: load,
            id: `l-${sent}`,
          },
        );
        sent += 1;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await eventually(async () => sent >= 20, 'ingest under way', 60_000);
    const before = sent;
    const backup = await runCli(['backup', '--out', backupFile], env);
    const during = sent - before;
    searchesAtBackup = await searchIds(url, adminToken);
    loading = false;
    await loader;
    expect({ code: backup.code, err: backup.stderr }).toEqual({ code: 0, err: expect.stringMatching(/\d+ tables, \d+ rows/) });
    expect(during).toBeGreaterThan(0);
    process.stdout.write(`backup: ${backup.ms} ms while ${during} events were ingested beside it; ${backup.stderr.trim()}\n`);

    const stop = await stopAndCount(serve, 'SIGTERM');
    process.stdout.write(`SIGTERM → ${stop.children.length} child processes (${stop.children.map((c) => c.command).join(', ')}) gone in ${stop.goneMs} ms\n`);
    expect(stop.code).toBe(0);
    expect(stop.children.map((c) => c.command)).toEqual(expect.arrayContaining(['java', 'postgres']));
    expect(stop.goneMs).toBeLessThan(10_000);
    expect(readInstanceState(dataA)?.stoppedAt).toBeDefined();
  }, 1_800_000);

  it('with no service running: verify and export start PostgreSQL alone on its previous port, import derives by itself, and the backup restores into an empty instance that answers the same searches', async () => {
    const env = personEnv(dataA);
    const verified = await runCli(['verify', '--namespace', ns], env);
    expect({ code: verified.code, out: verified.stdout }).toEqual({ code: 0, out: expect.stringMatching(/chain intact/) });
    expect(verified.stderr).toMatch(/embedded PostgreSQL started/);
    expect(verified.stderr).not.toMatch(/local-neo4j|migrations applied|embedder/);
    expect(readInstanceState(dataA)).toMatchObject({ command: 'verify', postgres: { port: firstPorts.postgres }, stoppedAt: expect.any(String) });
    const again = path.join(work, 'export-again.jsonl');
    expect((await runCli(['export', '--namespace', ns, '--out', again], env)).code).toBe(0);
    // The same chain, extended since by the approval request's log line: the first file's lines up to its
    // closing `end` line (links and head, which the longer chain changes) begin the second file.
    const linesOf = (file: string) => fs.readFileSync(file, 'utf8').trimEnd().split('\n');
    const before = linesOf(exportFile);
    const after = linesOf(again);
    expect(JSON.parse(before.at(-1) ?? '{}')).toMatchObject({ type: 'end' });
    expect(after.length).toBeGreaterThan(before.length);
    expect(after.slice(0, before.length - 1)).toEqual(before.slice(0, -1));

    // import with no service: PostgreSQL and Neo4j (on its previous port) and a worker of its own.
    const third = uniqueNamespace('cli-alone');
    const imported = await runCli(['import', exportFile, '--namespace', third], env);
    expect(imported.code).toBe(0);
    expect(readInstanceState(dataA)).toMatchObject({ command: 'import', neo4j: { uri: firstPorts.neo4j } });
    expect((await runCli(['verify', '--namespace', third], env)).stdout).toMatch(/chain intact/);
    process.stdout.write(`without a service: verify ${verified.ms} ms, import ${imported.ms} ms\n`);

    // restore into an empty instance (nothing running there), verify its chains, then serve it.
    const envB = personEnv(dataB);
    const restored = await runCli(['restore', backupFile], envB);
    expect(restored.code).toBe(0);
    const jobId = /job ([0-9a-f-]{36})/.exec(restored.stderr)?.[1];
    expect(jobId).toBeDefined();
    for (const namespace of [ns, copy, load]) {
      const v = await runCli(['verify', '--namespace', namespace], envB);
      expect({ namespace, code: v.code, out: v.stdout }).toEqual({ namespace, code: 0, out: expect.stringMatching(/chain intact/) });
    }
    const serveB = spawnMain(['serve'], personEnv(dataB, { PORT: '0' }));
    running.push(serveB);
    const url = (await untilServing(dataB, serveB)).api;
    await eventually(
      async () =>
        (await gqlOk<{ job: { status: string } }>(url, adminToken, `query($id: ID!) { job(id: $id) { status } }`, { id: jobId })).job.status === 'succeeded',
      'the graph rebuilt',
      300_000,
    );
    expect(await searchIds(url, adminToken)).toEqual(searchesAtBackup);
    // The agent's token, its grants and the approval request came along.
    const asAgent = await gqlOk<{ searchMemory: unknown[] }>(
      url,
      agentToken,
      `query($ns: String!) { searchMemory(namespace: $ns, query: "cello", limit: 3) { kind } }`,
      { ns },
    );
    expect(asAgent.searchMemory.length).toBeGreaterThan(0);
    const approvals = await gqlOk<{ approvals: Array<{ id: string }> }>(url, adminToken, `query($ns: String!) { approvals(namespace: $ns) { id } }`, { ns });
    expect(approvals.approvals.map((a) => a.id)).toContain(approvalId);

    const stop = await stopAndCount(serveB, 'SIGINT');
    process.stdout.write(`SIGINT → ${stop.children.length} child processes gone in ${stop.goneMs} ms\n`);
    expect(stop.code).toBe(0);
    expect(stop.goneMs).toBeLessThan(10_000);
  }, 1_800_000);
});
