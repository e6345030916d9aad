import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { printAppSchema } from '../../src/api/schema';
import {
  AboutDocument,
  CreateTokenDocument,
  GetEventDocument,
  GetEventNodeDocument,
  IngestEventDocument,
  IngestEventsDocument,
  ListFactsDocument,
  PipelineStatusDocument,
  GetFactDocument,
  GetProvenanceDocument,
  SearchMemoryDocument,
  OnEventIngestedDocument,
  OnEventIngestedSubscription,
  RevokeTokenDocument,
  ViewerDocument,
  MemoryClient,
  MemoryClientError,
} from '../../packages/client/src';
import { uniqueNamespace } from '../support/stores';
import { eventually, startTestApp, TestApp } from '../support/test-app';
import { collect, wsClient } from '../support/ws-client';
import { print } from 'graphql';

const root = path.resolve(__dirname, '..', '..');

describe('the checked-in contract', () => {
  it('schema.graphql is what the code emits (run `npm run schema:emit` when this fails)', async () => {
    expect(fs.readFileSync(path.join(root, 'schema.graphql'), 'utf8')).toBe(await printAppSchema());
  });

  it('packages/client/src/generated is what codegen.yml produces (run `npm run codegen` when this fails)', async () => {
    const run = spawnSync(process.execPath, [path.join(root, 'test/support/codegen-output.cjs')], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    expect(run.stderr).toBe('');
    const outputs = JSON.parse(run.stdout) as Array<{ filename: string; content: string }>;
    expect(outputs.length).toBeGreaterThan(0);
    for (const out of outputs) {
      expect({ file: path.relative(root, out.filename), content: fs.readFileSync(out.filename, 'utf8') }).toEqual({
        file: path.relative(root, out.filename),
        content: out.content,
      });
    }
  });
});

describe('the generated operations against the running service', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_EMBEDDER: 'hashing', DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50' });
  });
  afterAll(async () => t?.stop());

  it('runs every agent operation with its generated types', async () => {
    const ns = uniqueNamespace('codegen');
    const admin = new MemoryClient({ url: t.url, token: t.adminToken });
    const created = await admin.request(CreateTokenDocument, {
      input: { name: 'codegen-agent', grants: [{ namespacePattern: ns, capabilities: ['INGEST', 'READ', 'LIST', 'SEARCH'] }] },
    });
    expect(created.createToken.info.grants).toEqual([{ namespacePattern: ns, capabilities: ['INGEST', 'READ', 'LIST', 'SEARCH'] }]);
    const agent = new MemoryClient({ url: t.url, token: created.createToken.token });

    expect((await agent.request(ViewerDocument, {})).viewer.name).toBe('codegen-agent');

    const ws = wsClient(t.url, created.createToken.token);
    const sub = collect<OnEventIngestedSubscription>(ws, print(OnEventIngestedDocument), { namespace: ns });
    await sub.ready;
    await new Promise((r) => setTimeout(r, 300));

    const one = await agent.request(IngestEventDocument, { input: { namespace: ns, source: 'codegen', sourceEventId: '1', kind: 'NOTE', content: 'typed' } });
    expect(one.ingestEvent.status).toBe('CREATED');
    const id = one.ingestEvent.event?.id as string;
    const many = await agent.request(IngestEventsDocument, {
      input: [
        { namespace: ns, source: 'codegen', sourceEventId: '1', kind: 'NOTE', content: 'typed' },
        { namespace: ns, source: 'codegen', sourceEventId: '2', kind: 'MESSAGE', role: 'USER', content: 'two' },
      ],
    });
    expect(many.ingestEvents.map((r) => r.status)).toEqual(['DUPLICATE', 'CREATED']);

    const pushed = await eventually(async () => sub.received.next[0], 'the typed subscription');
    expect(pushed.eventIngested).toMatchObject({ id, namespace: ns, kind: 'NOTE', content: 'typed' });
    sub.stop();
    await ws.dispose();

    const read = await agent.request(GetEventDocument, { id });
    expect(read.event).toMatchObject({ id, namespace: ns, kind: 'NOTE', content: 'typed' });
    const node = await eventually(async () => (await agent.request(GetEventNodeDocument, { id })).eventNode, 'projection');
    expect(node).toMatchObject({ id, namespace: ns, kind: 'note' });

    const settled = await eventually(async () => {
      const s = (await agent.request(PipelineStatusDocument, { namespace: ns })).pipelineStatus;
      return s.pending === 0 ? s : undefined;
    }, 'derivation');
    expect(settled).toMatchObject({ namespace: ns, deadLetters: 0 });
    await agent.request(IngestEventDocument, {
      input: { namespace: ns, source: 'codegen', sourceEventId: '3', kind: 'MESSAGE', role: 'USER', content: 'I prefer Rust for systems work' },
    });
    const page = await eventually(async () => {
      const p = (await agent.request(ListFactsDocument, { namespace: ns, first: 10 })).facts;
      return p.edges.some((e) => /rust/i.test(e.node.statement)) ? p : undefined;
    }, 'a fact about Rust');
    const rust = page.edges.find((e) => /rust/i.test(e.node.statement))?.node;
    const full = await agent.request(GetFactDocument, { id: rust?.id as string });
    expect(full.fact?.sources[0]?.quote).toMatch(/Rust/);
    expect(full.fact?.decisions[0]?.action).toBe('ADD');
    const trace = await eventually(async () => {
      const p = (await agent.request(GetProvenanceDocument, { factId: rust?.id as string })).provenance;
      return p.steps.length > 0 ? p : undefined;
    }, 'the fact in the graph');
    expect(trace.steps[0]).toMatchObject({ via: 'DIRECT', quote: expect.stringMatching(/Rust/) });
    const hits = (await agent.request(SearchMemoryDocument, { namespace: ns, query: 'which language for systems work: rust?', limit: 3 })).searchMemory;
    expect(hits[0]?.kind).toBe('FACT');
    expect(hits[0]?.fact?.id).toBe(rust?.id);
    expect(hits[0]?.channels.length).toBeGreaterThan(0);
    expect(hits[0]?.evidence[0]?.content).toMatch(/Rust/);
    // Nothing promoted to Gold yet: about knows no one.
    expect((await agent.request(AboutDocument, { namespace: ns, name: 'Rust' })).about).toBeNull();

    expect((await admin.request(RevokeTokenDocument, { id: created.createToken.info.id })).revokeToken).toBe(true);
    await expect(agent.request(ViewerDocument, {})).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await expect(agent.request(ViewerDocument, {})).rejects.toBeInstanceOf(MemoryClientError);
  });
});
