import fs from 'node:fs';
import path from 'node:path';
import { uniqueNamespace } from '../support/stores';
import { collect, wsClient } from '../support/ws-client';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

/** One GraphQL example of README.md: the operation, its trailing comment, and who runs it. */
interface Example {
  readonly block: number;
  readonly operation: string;
  readonly comment: string;
  /** The last `# …` line above it in its block ("# 2. a different principal holding approve"). */
  readonly heading: string;
}

/** Splits a line at its first `#` outside a string: the operation and its comment. */
function splitComment(line: string): [string, string] {
  let inString = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '\\') i++;
    else if (c === '"') inString = !inString;
    else if (c === '#' && !inString) return [line.slice(0, i).trim(), line.slice(i + 1).trim()];
  }
  return [line.trim(), ''];
}

/** Every fenced ```graphql block of README.md, in order, one operation per line. */
function readmeExamples(): Example[] {
  const readme = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  return blocks.flatMap((text, block) => {
    let heading = '';
    const out: Example[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      const [operation, comment] = splitComment(line);
      if (operation === '') heading = comment;
      else out.push({ block, operation, comment, heading });
    }
    return out;
  });
}

/** Whether an answer holds nothing: a null field, an empty list, a connection without edges. */
function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if ('edges' in o) return isEmpty(o.edges);
    if ('steps' in o) return isEmpty(o.steps);
    return Object.keys(o).length > 0 && Object.values(o).every((v) => v === null);
  }
  return false;
}

describe('README.md: every GraphQL example runs against the service and answers what it shows', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50', GOLD_PROMOTE_EVERY_SECONDS: '5', EXPLORE_TIMEOUT_MS: '30000' });
  }, 300_000);
  afterAll(async () => t?.stop());

  it('runs the examples in order, each placeholder filled from an earlier answer', async () => {
    const examples = readmeExamples();
    expect(examples.length).toBeGreaterThan(15);
    // The README's namespaces, made unique to this run (the test Neo4j is shared).
    const prefix = uniqueNamespace('readme').replace(/[^a-z0-9-]/gi, '-');
    const approver = await createToken(t, [{ namespacePattern: `${prefix}/*`, capabilities: ['APPROVE'] }], 'readme-approver');
    // The erasure's requester is an admin with a token of its own: the bootstrap admin's requests have no second person (docs/approvals.md).
    const requester = await createToken(t, [{ namespacePattern: `${prefix}/*`, capabilities: ['ADMIN'] }], 'readme-requester');
    const seen: { event?: string; fact?: string; approval?: string; overlay?: string } = {};
    const failures: string[] = [];

    for (const ex of examples) {
      let op = ex.operation.replaceAll('team-a', prefix);
      // Placeholders: the id an earlier answer gave, by what the argument names.
      const fill = (pattern: RegExp, value: string | undefined, what: string) => {
        if (!pattern.test(op)) return;
        if (!value) throw new Error(`no ${what} id from an earlier example to fill ${ex.operation}`);
        op = op.replace(pattern, (m) => m.replace('…', value));
      };
      fill(/(factId|fact\(id): "…"/, seen.fact, 'fact');
      fill(/eventId: "…"/, seen.event, 'event');
      fill(/(approve\(id|approvalId): "…"/, seen.approval, 'approval');
      fill(/retractOverlay\(id: "…"/, seen.overlay, 'overlay');
      expect(op).not.toContain('…');

      const token = /different principal/.test(ex.heading) ? approver.token : /the requester/.test(ex.heading) ? requester.token : t.adminToken;
      const label = `README graphql block ${ex.block + 1}: ${op}`;

      if (op.startsWith('subscription')) {
        const client = wsClient(t.url, token);
        const sub = collect<Record<string, unknown>>(client, op, {});
        try {
          await sub.ready;
          const ns = /namespace: "([^"]+)"/.exec(op)?.[1] ?? '';
          await gqlOk(
            t.url,
            t.adminToken,
            `mutation($ns: String!) { ingestEvent(input: { namespace: $ns, source: "readme", sourceEventId: "sub-1", kind: NOTE, content: "pushed" }) { status } }`,
            { ns },
          );
          await eventually(async () => sub.received.next.length > 0 || sub.received.errors.length > 0, label, 30_000).catch(() => undefined);
          if (sub.received.errors.length > 0 || sub.received.next.length === 0) failures.push(`${label}: ${JSON.stringify(sub.received)}`);
        } finally {
          sub.stop();
          await client.dispose();
        }
        continue;
      }

      // Facts are derived, and Gold promoted, after the acknowledgement: an empty answer is asked
      // again for a while (the README says so), an error is a failure at once.
      let answer: Awaited<ReturnType<typeof gql>> | undefined;
      try {
        answer = await eventually(
          async () => {
            const r = await gql(t.url, token, op, {});
            if (r.errors?.length) return r;
            const data = r.data ?? {};
            // The README promotes once pipelineStatus says nothing is pending: wait for that.
            const pending = (data as { pipelineStatus?: { pending?: number } }).pipelineStatus?.pending;
            if (pending !== undefined && pending > 0) return undefined;
            return Object.values(data).some(isEmpty) ? undefined : r;
          },
          label,
          60_000,
        );
      } catch {
        failures.push(`${label}: answered nothing within 60 s: ${JSON.stringify((await gql(t.url, token, op, {})).data)}`);
        continue;
      }
      if (answer.errors?.length) {
        failures.push(`${label}: ${JSON.stringify(answer.errors)}`);
        continue;
      }
      const data = answer.data as Record<string, unknown>;
      // What a comment promises (`# e.g. "…"`) is in the answer.
      const promised = /e\.g\. "([^"]+)"/.exec(ex.comment)?.[1];
      if (promised && !JSON.stringify(data).includes(promised)) failures.push(`${label}: expected ${promised}, got ${JSON.stringify(data)}`);

      const d = data as {
        ingestEvent?: { event?: { id?: string } };
        facts?: { edges?: Array<{ node: { id: string } }> };
        requestApproval?: { id?: string };
        addOverlay?: { id?: string };
      };
      seen.event = d.ingestEvent?.event?.id ?? seen.event;
      seen.fact ??= d.facts?.edges?.[0]?.node.id;
      seen.approval = d.requestApproval?.id ?? seen.approval;
      seen.overlay ??= d.addOverlay?.id;
    }
    expect(failures).toEqual([]);
  }, 900_000);
});
