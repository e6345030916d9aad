import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CliError, ImportCommandOptions, runImportCommand } from '../../src/bronze/import.command';
import { loadConfig } from '../../src/common/config';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, gqlOk, startTestApp, TestApp } from '../support/test-app';

describe('medallion ingest FILE.jsonl', () => {
  let t: TestApp;
  let dir: string;
  const ns = uniqueNamespace('import');
  let token: string;

  beforeAll(async () => {
    t = await startTestApp();
    token = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'LIST'] }], 'importer')).token;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'medallion-import-'));
  });
  afterAll(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await t?.stop();
  });

  const run = async (file: string, batchSize = '7', over: Partial<ImportCommandOptions> = { token }, env: Record<string, string> = {}) => {
    const out: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
    const quietErr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const code = await runImportCommand(loadConfig({ DATA_DIR: dir, ...env }), file, { url: t.url, batchSize, ...over });
      return { code, out: out.join('') };
    } finally {
      spy.mockRestore();
      quietErr.mockRestore();
    }
  };

  it('imports a real file, reports rejected lines by number, and is safe to re-run', async () => {
    const good = Array.from({ length: 40 }, (_, i) =>
      JSON.stringify(
        anEvent(ns)
          .withKey('jsonl', `line-${i}`)
          .saying(`line ${i}`)
          .by(i % 2 ? 'assistant' : 'USER')
          .ofKind(i % 5 ? 'MESSAGE' : 'note')
          .build(),
      ),
    );
    const lines = [
      ...good.slice(0, 10),
      '{not json',
      JSON.stringify({ ...anEvent(ns).build(), kind: 'TELEGRAM' }),
      '',
      ...good.slice(10, 30),
      JSON.stringify([1, 2]),
      JSON.stringify({ ...anEvent(ns).build(), namespace: 'not allowed here!' }),
      ...good.slice(30),
    ];
    const file = path.join(dir, 'events.jsonl');
    fs.writeFileSync(file, lines.join('\n') + '\n');

    const first = await run(file);
    expect(first.code).toBe(3);
    expect(first.out).toContain(`${lines.length} lines, 40 created, 0 duplicate, 4 rejected`);
    expect(first.out).toMatch(/line 11: INVALID_JSON/);
    expect(first.out).toMatch(/line 12: INVALID_ENUM: unknown kind "TELEGRAM"/);
    expect(first.out).toMatch(/line 34: INVALID_FIELD/);
    expect(first.out).toMatch(/line 35: INVALID_NAMESPACE/);

    const second = await run(file, '500');
    expect(second.out).toContain('0 created, 40 duplicate, 4 rejected');

    const listed = await gqlOk<{ events: { edges: unknown[] } }>(
      t.url,
      token,
      `query($ns: String!) { events(namespace: $ns, first: 100) { edges { cursor } } }`,
      { ns },
    );
    expect(listed.events.edges).toHaveLength(40);
  });

  it('rejects each bad line by its file line number (unknown field, bad JSON, a value the server refuses) and imports the rest', async () => {
    const lines = Array.from({ length: 950 }, (_, i) => JSON.stringify(anEvent(ns).withKey('big', `row-${i}`).saying(`row ${i}`).build()));
    lines[899] = JSON.stringify({ ...anEvent(ns).withKey('big', 'colour').build(), colour: 'red' });
    lines[99] = '{"namespace": ';
    lines[499] = JSON.stringify(anEvent(ns).withKey('big', 'feb-30').at('2024-02-30T10:00:00Z').build());
    const file = path.join(dir, 'big.jsonl');
    fs.writeFileSync(file, lines.join('\n') + '\n');
    const res = await run(file, '500', {}, { MEDALLION_TOKEN: token });
    expect(res.code).toBe(3);
    expect(res.out).toContain('950 lines, 947 created, 0 duplicate, 3 rejected');
    expect(res.out).toMatch(/line 100: INVALID_JSON/);
    expect(res.out).toMatch(/line 500: BAD_USER_INPUT: .*2024-02-30/);
    expect(res.out).toMatch(/line 900: UNKNOWN_FIELD: unknown field "colour"/);
  });

  it('imports integers beyond 2^53 in a payload digit for digit', async () => {
    const own = uniqueNamespace('import-big');
    const reader = (await createToken(t, [{ namespacePattern: own, capabilities: ['INGEST', 'READ', 'LIST'] }], 'big-importer')).token;
    const file = path.join(dir, 'bigint.jsonl');
    const line = JSON.stringify(anEvent(own).withKey('bigint', 'one').saying('big ids').build()).replace(
      /}$/,
      ',"rawPayload":{"id":12345678901234567891,"n":1.5}}',
    );
    fs.writeFileSync(file, `${line}\n`);
    expect((await run(file, '7', {}, { MEDALLION_TOKEN: reader })).out).toContain('1 created');
    const found = await gqlOk<{ events: { edges: Array<{ node: { content: string; rawPayloadText: string | null } }> } }>(
      t.url,
      reader,
      `query($ns: String!) { events(namespace: $ns, first: 10) { edges { node { content rawPayloadText } } } }`,
      { ns: own },
    );
    expect(found.events.edges.map((e) => [e.node.content, e.node.rawPayloadText])).toEqual([['big ids', '{"id":12345678901234567891,"n":1.5}']]);
  });

  it('reads the token from --token-file, and names the URL when nothing listens there', async () => {
    const file = path.join(dir, 'tok.jsonl');
    fs.writeFileSync(file, JSON.stringify(anEvent(ns).build()) + '\n');
    const tokenFile = path.join(dir, 'token.txt');
    fs.writeFileSync(tokenFile, `${token}\n`);
    expect((await run(file, '7', { tokenFile })).out).toContain('1 created');
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(p));
      });
    });
    const err = await run(file, '7', { token, url: `http://127.0.0.1:${port}` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CliError);
    expect((err as Error).message).toBe(`cannot reach the service at http://127.0.0.1:${port} (ECONNREFUSED): start it (npm start) or pass --url`);
  });

  it('explains a batch size the service would refuse', async () => {
    const file = path.join(dir, 'one.jsonl');
    fs.writeFileSync(file, JSON.stringify(anEvent(ns).build()) + '\n');
    await expect(run(file, '100000')).rejects.toThrow(/--batch-size must be an integer between 1 and 1000/);
  });
});
