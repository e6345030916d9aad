import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { eventChecksum } from '../../src/bronze/checksum';
import { Sql } from '../../src/platform/postgres/sql';
import { ChainRepository } from '../../src/gold/portability/chain.repository';
import { exportNamespace, verifyExportFile, verifyNamespace } from '../../src/gold/portability/export-file';
import { importExport, ImportSummary } from '../../src/gold/portability/import-file';
import { runExport, runVerify, settled as namespaceSettled } from '../../src/app/portability.command';
import { loadConfig } from '../../src/common/config';
import { createLogger } from '../../src/common/logger';
import { Writable } from 'node:stream';
import pino from 'pino';
import { namespaceHash } from '../../src/platform/telemetry/tracing';
import { anEvent } from '../builders/event-input';
import { testStores, uniqueNamespace } from '../support/stores';
import { createToken, gqlOk, startTestApp, TestApp } from '../support/test-app';

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status event { id } } }`;
const ADD = `mutation($input: OverlayInput!) { addOverlay(input: $input) { id version } }`;
const FACTS = `query($ns: String!) { facts(namespace: $ns, first: 200) { edges { node { id statement machineStatement validFrom validTo
  sources { event { source sourceEventId checksum } } } } } }`;

type FactNode = {
  id: string;
  statement: string;
  machineStatement: string;
  validFrom: string;
  validTo: string | null;
  sources: Array<{ event: { source: string; sourceEventId: string; checksum: string } }>;
};

/**
 * Issue 28 items 3-4 against the real stores with the default models: a namespace round-trips
 * through export and import (facts, overlays and provenance equal), export resumes and is
 * idempotent, import rejects bad lines alone and adds nothing when re-run, and the hash chain
 * survives an approved erasure and names the first altered row (live) or line (export file).
 */
describe('export, import and the verifiable hash chain', () => {
  let t: TestApp;
  let owner: Client;
  let chain: ChainRepository;
  let sql: Sql;
  let admin: string;
  let approver: string;
  const ns = uniqueNamespace('export');
  const ns2 = uniqueNamespace('import');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-export-'));
  const file = path.join(dir, 'export.jsonl');
  const ids: Record<string, string> = {};

  const settled = (namespace: string) => namespaceSettled(sql, namespace, 120_000);
  const facts = async (namespace: string) =>
    (await gqlOk<{ facts: { edges: Array<{ node: FactNode }> } }>(t.url, admin, FACTS, { ns: namespace })).facts.edges.map((e) => e.node);
  const importInto = (namespace: string, from = file): Promise<ImportSummary> =>
    importExport(sql, t.app.repositories.events, from, {
      namespace,
      batchSize: 2,
      limits: t.app.config.limits,
      derived: () => settled(namespace),
    });

  beforeAll(async () => {
    t = await startTestApp();
    sql = Sql.of(t.app.ds);
    chain = new ChainRepository(sql);
    admin = t.adminToken;
    approver = (await createToken(t, [{ namespacePattern: ns, capabilities: ['APPROVE'] }], 'dpo')).token;
    owner = new Client({ connectionString: t.databaseUrl });
    await owner.connect();
    const r = await gqlOk<{ ingestEvents: Array<{ event: { id: string } }> }>(t.url, admin, INGEST, {
      input: [
        anEvent(ns).withKey('chat', 'm1').inConversation('c1', 1).by('USER').saying('I live in Berlin').at('2026-01-02T09:00:00Z').build(),
        // No occurredAt: the server's time, and the checksum's occurredAt is null (docs/bronze.md).
        anEvent(ns).withKey('chat', 'm2').inConversation('c1', 2).by('USER').saying('I drink green tea every morning').build(),
        anEvent(ns)
          .withKey('chat', 'm3')
          .inConversation('c1', 3)
          .by('USER')
          .saying('I work at Zorblatt')
          .at('2026-01-03T09:00:00Z')
          .withPayload({ secret: 'Zorblatt-payload', n: 1.5 })
          .build(),
        anEvent(ns).withKey('chat', 'm4').inConversation('c1', 4).by('USER').saying('My sister Ada lives in Lisbon').at('2026-01-04T09:00:00Z').build(),
      ],
    });
    ['m1', 'm2', 'm3', 'm4'].forEach((k, i) => (ids[k] = r.ingestEvents[i]?.event.id as string));
    await settled(ns);
  }, 300_000);
  afterAll(async () => {
    await owner?.end();
    await t?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('seals every event, overlay version, approval log entry and judge decision; the chain survives an approved erasure', async () => {
    const all = await facts(ns);
    const tea = all.find((f) => /tea/.test(f.machineStatement));
    if (!tea) throw new Error(`no fact about tea: ${JSON.stringify(all.map((f) => f.machineStatement))}`);
    const edit = (
      await gqlOk<{ addOverlay: { id: string } }>(t.url, admin, ADD, {
        input: { factId: tea.id, kind: 'EDIT', exact: 'green tea', body: 'black coffee', reason: 'corrected' },
      })
    ).addOverlay;
    await gqlOk(t.url, admin, `mutation($id: ID!, $input: OverlayInput!) { reviseOverlay(id: $id, input: $input) { version } }`, {
      id: edit.id,
      input: { factId: tea.id, kind: 'EDIT', exact: 'green tea', body: 'black coffee, no sugar', reason: 'corrected again' },
    });
    await gqlOk(t.url, admin, ADD, { input: { eventId: ids.m1, kind: 'REDACTION', exact: 'Berlin', reason: 'private' } });
    // An overlay on a fact the erasure below will scrub: its erased form must still verify, and it is never imported.
    const employer = all.find((f) => /Zorblatt/.test(f.machineStatement));
    if (!employer) throw new Error(`no fact about Zorblatt: ${JSON.stringify(all.map((f) => f.machineStatement))}`);
    await gqlOk(t.url, admin, ADD, { input: { factId: employer.id, kind: 'ANNOTATION', exact: 'Zorblatt', body: 'Zorblatt is the employer' } });
    await settled(ns);
    await chain.sealAll(ns);
    const kinds = (await owner.query(`SELECT kind, count(*)::int AS n FROM ops.hash_chain WHERE namespace = $1 GROUP BY kind`, [ns])).rows as Array<{
      kind: string;
      n: number;
    }>;
    const byKind = Object.fromEntries(kinds.map((k) => [k.kind, k.n]));
    expect(byKind.event).toBe(4);
    expect(byKind.overlay).toBe(4);
    const judged = (await owner.query(`SELECT count(*)::int AS n FROM silver.judge_decisions WHERE namespace = $1`, [ns])).rows[0].n as number;
    expect(byKind.judge_decision ?? 0).toBe(judged);
    expect(await chain.unsealedCount(ns)).toBe(0);

    // The approved erasure of m3 scrubs Bronze, Silver (judge decisions included) and Gold copies after they were sealed.
    const req = await gqlOk<{ requestApproval: { id: string } }>(
      t.url,
      admin,
      `mutation($input: ApprovalRequestInput!) { requestApproval(input: $input) { id } }`,
      { input: { namespace: ns, action: 'DESTROY_EVENT', params: { eventId: ids.m3 }, reason: 'GDPR request' } },
    );
    await gqlOk(t.url, approver, `mutation($id: ID!) { approve(id: $id, reason: "verified") { status } }`, { id: req.requestApproval.id });
    await gqlOk(t.url, admin, `mutation($e: ID!, $a: ID!) { destroyEvent(eventId: $e, approvalId: $a) { id } }`, { e: ids.m3, a: req.requestApproval.id });
    await settled(ns);
    await chain.sealAll(ns);
    expect((await owner.query(`SELECT count(*)::int AS n FROM ops.hash_chain WHERE namespace = $1 AND kind = 'approval_log'`, [ns])).rows[0].n).toBe(3);
    expect((await owner.query(`SELECT count(*)::int AS n FROM gold.overlays WHERE namespace = $1 AND exact = '[erased]'`, [ns])).rows[0].n).toBe(1);
    const live = await verifyNamespace(chain, ns);
    expect(live).toMatchObject({ ok: true, broken: null, unsealed: 0 });
    expect(live.links).toBeGreaterThanOrEqual(4 + 3 + 3);
  }, 180_000);

  it('exports the namespace in chain order: header, events verbatim (the erased one as the tombstoned row), overlays, audit; verify --file passes', async () => {
    const s = await exportNamespace(chain, ns, file);
    const lines = fs
      .readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toEqual({ type: 'header', format: 'medallion-export', version: 1, namespace: ns });
    expect(s.lines).toBe(lines.length);
    expect(lines.slice(1).map((l) => l.seq)).toEqual(lines.slice(1).map((_, i) => i + 1));
    const events = lines.filter((l) => l.type === 'event').map((l) => l.item as Record<string, unknown>);
    const stored = (await owner.query(`SELECT id::text AS id, content, raw_payload::text AS p, checksum FROM bronze.events WHERE namespace = $1`, [ns]))
      .rows as Array<{
      id: string;
      content: string;
      p: string | null;
      checksum: string;
    }>;
    for (const row of stored)
      expect(events.find((e) => e.id === row.id)).toMatchObject({ content: row.content, rawPayloadText: row.p, checksum: row.checksum });
    const erased = events.find((e) => e.id === ids.m3);
    expect(erased).toMatchObject({ content: '', rawPayloadText: null, destroyedAt: expect.any(String) });
    expect(fs.readFileSync(file, 'utf8')).not.toContain('Zorblatt');
    expect(lines.filter((l) => l.type === 'overlay')).toHaveLength(4);
    expect(lines.filter((l) => l.type === 'overlay' && (l.ctx as { erased?: boolean }).erased)).toHaveLength(1);
    expect(lines.filter((l) => l.type === 'approval_log').map((l) => (l.item as { step: string }).step)).toEqual(['REQUESTED', 'APPROVED', 'EXECUTED']);
    expect(await verifyExportFile(file)).toMatchObject({ ok: true, namespace: ns, links: lines.length - 1, head: s.head });
  });

  it('export is idempotent and resumes a partial file after its last complete line', async () => {
    const full = fs.readFileSync(file, 'utf8');
    const again = await exportNamespace(chain, ns, file);
    expect(again.written).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toBe(full);
    const partial = path.join(dir, 'partial.jsonl');
    const cut = full.indexOf('\n', Math.floor(full.length / 2)) + 20; // mid-line
    fs.writeFileSync(partial, full.slice(0, cut));
    const completeLines = full.slice(0, cut).split('\n').length - 1;
    const resumed = await exportNamespace(chain, ns, partial);
    expect(resumed.resumedAfter).toBe(completeLines - 1);
    expect(fs.readFileSync(partial, 'utf8')).toBe(full);
  });

  it('imports into a new namespace where derivation rebuilds equal facts, overlays and provenance; a re-run adds nothing', async () => {
    const summary = await importInto(ns2);
    expect(summary.rejected).toEqual([]);
    expect(summary.events).toEqual({ created: 3, existing: 0, erased: 1 });
    expect(summary.overlays).toEqual({ created: 2, existing: 0, unplaced: 0, erased: 1 });
    expect(summary.approvalLog).toEqual({ created: 3, existing: 0 });
    await settled(ns2);

    const key = (f: FactNode) => JSON.stringify([f.statement, f.machineStatement, f.validTo === null]);
    const before = (await facts(ns)).map(key).sort();
    const after = (await facts(ns2)).map(key).sort();
    expect(after.length).toBeGreaterThan(0);
    expect(after).toEqual(before);
    expect(after.join('\n')).toContain('black coffee, no sugar');
    expect(after.join('\n')).not.toContain('Zorblatt');

    // Provenance: every fact of ns2 rests on imported events whose checksum equals the original's (same key).
    const originals = (await owner.query(`SELECT source, source_event_id, checksum FROM bronze.events WHERE namespace = $1`, [ns])).rows as Array<{
      source: string;
      source_event_id: string;
      checksum: string;
    }>;
    for (const f of await facts(ns2)) {
      expect(f.sources.length).toBeGreaterThan(0);
      for (const s of f.sources) {
        const o = originals.find((x) => x.source === s.event.source && x.source_event_id === s.event.sourceEventId);
        expect(s.event.checksum).toBe(o?.checksum);
      }
    }
    // Overlays: same versions, kinds and bodies; the event redaction sits on the imported event.
    const ov = async (namespace: string) =>
      (
        await owner.query(
          `SELECT o.version, o.kind, o.body, o.status, (o.event_id IS NOT NULL) AS on_event FROM gold.overlays o WHERE o.namespace = $1 AND o.exact <> '[erased]' ORDER BY kind, version`,
          [namespace],
        )
      ).rows;
    expect(await ov(ns2)).toEqual(await ov(ns));
    const redacted = await gqlOk<{ events: { edges: Array<{ node: { sourceEventId: string; content: string } }> } }>(
      t.url,
      (await createToken(t, [{ namespacePattern: ns2, capabilities: ['READ', 'LIST'] }], 'reader')).token,
      `query($ns: String!) { events(namespace: $ns) { edges { node { sourceEventId content } } } }`,
      { ns: ns2 },
    );
    expect(redacted.events.edges.find((e) => e.node.sourceEventId === 'm1')?.node.content).toBe('I live in [redacted]');

    const counts = async () =>
      (
        await owner.query(
          `SELECT (SELECT count(*) FROM bronze.events WHERE namespace = $1)::int AS e, (SELECT count(*) FROM gold.overlays WHERE namespace = $1)::int AS o,
                  (SELECT count(*) FROM access.approval_log WHERE namespace = $1)::int AS l, (SELECT count(*) FROM silver.facts WHERE namespace = $1)::int AS f`,
          [ns2],
        )
      ).rows[0];
    const first = await counts();
    const rerun = await importInto(ns2);
    expect(rerun).toMatchObject({
      events: { created: 0, existing: 3, erased: 1 },
      overlays: { created: 0, existing: 2, erased: 1 },
      approvalLog: { created: 0, existing: 3 },
      rejected: [],
    });
    await settled(ns2);
    expect(await counts()).toEqual(first);
    // The imported namespace has a chain of its own.
    await chain.sealAll(ns2);
    expect(await verifyNamespace(chain, ns2)).toMatchObject({ ok: true });
  }, 240_000);

  it('import rejects a bad line alone, with its number and a reason, and stores the good ones', async () => {
    const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
    const eventLines = lines.filter((l) => (JSON.parse(l) as { type: string }).type === 'event');
    const altered = JSON.parse(eventLines[0] as string) as { item: { content: string } };
    altered.item.content = 'I live in Paris';
    const bad = path.join(dir, 'bad.jsonl');
    fs.writeFileSync(bad, [lines[0], '{not json', JSON.stringify(altered), eventLines[1], '{"type":"mystery","seq":1}'].join('\n') + '\n');
    const ns3 = uniqueNamespace('bad-import');
    const s = await importInto(ns3, bad);
    expect(s.rejected.map((r) => r.line)).toEqual([2, 3, 5]);
    expect(s.rejected[0]?.reason).toMatch(/not JSON/);
    expect(s.rejected[1]?.reason).toMatch(/does not give its checksum/);
    expect(s.rejected[2]?.reason).toMatch(/unknown type "mystery"/);
    expect(s.events.created).toBe(1);
  }, 120_000);

  it('concurrent ingest and concurrent sealers give one gapless chain that covers every event once', async () => {
    const nsc = uniqueNamespace('chain-concurrent');
    const batch = (b: number) =>
      Array.from({ length: 25 }, (_, i) =>
        anEvent(nsc)
          .withKey('load', `b${b}-${i}`)
          .saying(`note ${b}-${i}`)
          .at(`2026-01-${String(1 + (i % 28)).padStart(2, '0')}T00:00:00Z`)
          .build(),
      );
    let sealing = true;
    const sealers = [0, 1].map(async () => {
      while (sealing) await chain.seal(nsc);
    });
    await Promise.all(Array.from({ length: 8 }, (_, b) => gqlOk(t.url, admin, INGEST, { input: batch(b) })));
    sealing = false;
    await Promise.all(sealers);
    await chain.sealAll(nsc);
    const rows = (await owner.query(`SELECT seq::int AS seq, kind, item_id FROM ops.hash_chain WHERE namespace = $1 ORDER BY seq`, [nsc])).rows as Array<{
      seq: number;
      kind: string;
      item_id: string;
    }>;
    expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
    const events = rows.filter((r) => r.kind === 'event').map((r) => r.item_id);
    expect(events).toHaveLength(200);
    expect(new Set(events).size).toBe(200);
    expect(await verifyNamespace(chain, nsc)).toMatchObject({ ok: true, unsealed: 0 });
  }, 120_000);

  it('verify --file names the line an edit broke', async () => {
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const at = lines.findIndex((l) => l.includes('"type":"overlay"'));
    const edited = JSON.parse(lines[at] as string) as { item: { body: string | null } };
    edited.item.body = 'something else';
    lines[at] = JSON.stringify(edited);
    const tampered = path.join(dir, 'tampered.jsonl');
    fs.writeFileSync(tampered, lines.join('\n'));
    const r = await verifyExportFile(tampered);
    expect(r.ok).toBe(false);
    expect(r.broken).toMatchObject({ line: at + 1, kind: 'overlay', reason: 'the overlay text differs from what was sealed' });
    // The command: exit 4 on a broken chain, 0 on an intact one, and no database needed for a file.
    const config = loadConfig({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', DATABASE_RUNTIME_URL: 'postgres://nobody@127.0.0.1:1/none' });
    const log = createLogger('silent');
    expect(await runVerify(config, log, { file: tampered })).toBe(4);
    expect(await runVerify(config, log, { file })).toBe(0);
    await expect(runVerify(config, log, {})).rejects.toThrow(/exactly one of --namespace NS .* or --file/);
  });

  it('medallion export through the command writes what the library writes, and verify --namespace through the command passes', async () => {
    const stores = testStores();
    const config = loadConfig({
      DATABASE_URL: t.databaseUrl,
      DATABASE_RUNTIME_URL: t.runtimeDatabaseUrl,
      NEO4J_URI: stores.neo4j.uri,
      NEO4J_USER: stores.neo4j.user,
      NEO4J_PASSWORD: stores.neo4j.password,
      ADMIN_TOKEN: t.adminToken,
      DATA_DIR: dir,
      LOG_LEVEL: 'silent',
    });
    const out = path.join(dir, 'cli.jsonl');
    // Structured lines for the run (start, end with counts), ids and counts only.
    const lines: string[] = [];
    const log = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) }));
    expect(await runExport(config, log, ns, out)).toBe(0);
    expect(fs.readFileSync(out, 'utf8')).toBe(fs.readFileSync(file, 'utf8'));
    expect(await runVerify(config, createLogger('silent'), { namespace: ns })).toBe(0);
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.op === 'export');
    expect(logged.map((l) => l.msg)).toEqual(['export started', 'export finished']);
    expect(logged[1]).toMatchObject({
      level: 30,
      store: namespaceHash(ns),
      lines: fs.readFileSync(out, 'utf8').trim().split('\n').length,
      ms: expect.any(Number),
    });
    expect(lines.join('')).not.toContain(ns);
    // A failure is a line too: a resumed file of another namespace is refused.
    await expect(runExport(config, log, `${ns}-other`, out)).rejects.toThrow();
    const failed = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.op === 'export');
    expect(failed[failed.length - 1]).toMatchObject({ level: 50, msg: 'export failed', store: namespaceHash(`${ns}-other`), error: expect.any(String) });
  }, 120_000);

  it('verify --namespace names the first row the owner altered behind the guards', async () => {
    const seq = (await owner.query(`SELECT seq::int AS seq FROM ops.hash_chain WHERE namespace = $1 AND kind = 'event' AND item_id = $2`, [ns, ids.m4])).rows[0]
      .seq as number;
    // The owner can switch the append-only triggers off (a superuser's replica mode); the chain still tells.
    await owner.query('BEGIN');
    await owner.query(`SET LOCAL session_replication_role = replica`);
    await owner.query(`UPDATE bronze.events SET content = 'My sister Ada lives in Porto' WHERE id = $1`, [ids.m4]);
    await owner.query('COMMIT');
    const r = await verifyNamespace(chain, ns);
    expect(r.ok).toBe(false);
    expect(r.broken).toEqual({ position: seq, kind: 'event', id: ids.m4, reason: 'the content does not match the event checksum' });

    // Rewriting the checksum to match breaks the item hash instead: the link sealed the old checksum.
    const checksum = eventChecksum({
      kind: 'message',
      content: 'My sister Ada lives in Porto',
      rawPayload: null,
      provenanceRoot: null,
      conversationId: 'c1',
      sessionId: null,
      sequenceNum: 4,
      role: 'user',
      actor: null,
      occurredAt: '2026-01-04T09:00:00.000Z',
    });
    await owner.query('BEGIN');
    await owner.query(`SET LOCAL session_replication_role = replica`);
    await owner.query(`UPDATE bronze.events SET checksum = $2 WHERE id = $1`, [ids.m4, checksum]);
    await owner.query('COMMIT');
    expect((await verifyNamespace(chain, ns)).broken).toEqual({
      position: seq,
      kind: 'event',
      id: ids.m4,
      reason: "the event's fields differ from what was sealed",
    });
  });
});
