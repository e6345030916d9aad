import fs from 'node:fs';
import path from 'node:path';
import { buildSchema, Kind, parse, validate } from 'graphql';
import { uniqueNamespace } from '../support/stores';
import { collect, wsClient } from '../support/ws-client';
import { createToken, eventually, gql, gqlOk, startTestApp, TestApp } from '../support/test-app';

const ROOT = path.join(__dirname, '..', '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** Every fenced ```graphql block of README.md, as written. */
const BLOCKS = [...README.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');

/** Who runs an operation: the README says it in a `# as …` line above it. */
type Runner = 'admin' | 'agent' | 'approver' | 'requester';

/** One GraphQL example of README.md: the operation, its trailing comment, and who runs it. */
interface Example {
  readonly block: number;
  readonly operation: string;
  readonly comment: string;
  /** The last `# …` line above it in its block ("# as my-agent", "# 2. as an approver's token: …"). */
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

/** The examples of every block, in order, one operation per line. */
function readmeExamples(): Example[] {
  return BLOCKS.flatMap((text, block) => {
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

/** The token a heading names, or undefined when it names none (a failure: the reader cannot know). */
function runnerOf(heading: string): Runner | undefined {
  if (/\bas the admin token\b/.test(heading)) return 'admin';
  if (/\bas my-agent\b/.test(heading)) return 'agent';
  if (/\bas an approver's token\b/.test(heading)) return 'approver';
  if (/\bas the requester's token\b/.test(heading)) return 'requester';
  return undefined;
}

/** The quoted strings of a comment after a keyword: `e.g. "A", "B"` → [A, B]. */
function quotedAfter(comment: string, keyword: RegExp): string[] | undefined {
  const m = keyword.exec(comment);
  if (!m) return undefined;
  return [...comment.slice(m.index + m[0].length).matchAll(/"([^"]+)"/g)].map((q) => q[1] ?? '');
}

/**
 * What a trailing comment promises about the answer, checked on the answer's data:
 * `# e.g. "A", "B"`: the answer holds each; `# first "A", "B"`: the first item of the answer's
 * list holds each (an order); `# null`: the answer is null. Undefined when it holds, else why not.
 */
function unmetPromise(comment: string, data: Record<string, unknown>): string | undefined {
  const root = Object.values(data)[0];
  if (/^null\b/.test(comment)) return root === null ? undefined : `expected null, got ${JSON.stringify(root)}`;
  const contained = quotedAfter(comment, /\be\.g\.\s/);
  const text = JSON.stringify(data);
  for (const s of contained ?? []) if (!text.includes(s)) return `expected ${JSON.stringify(s)} in the answer`;
  const first = quotedAfter(comment, /^first\s/);
  if (first) {
    const item = JSON.stringify(Array.isArray(root) ? root[0] : undefined);
    for (const s of first) if (!item?.includes(s)) return `expected ${JSON.stringify(s)} in the first item, got ${item}`;
  }
  return undefined;
}

interface About {
  name: string;
  aliases: string[];
  mergedFrom: Array<{ name: string }>;
  facts: Array<{ statement: string; sources: Array<{ event: { id: string } }> }>;
}

/**
 * What the README's sentence after the Bob example says `about` answers, checked on AboutBob's
 * answer (the sentence itself is asserted verbatim below, so that changing one changes the other).
 */
const BOB_SENTENCE =
  '`about(name: "Bob")` (or `"bob"`, `"Bob Smith"`) answers with Bob Smith, "Bob" among its aliases\nand merged names, and the facts stated where either name appears, each with its source event;\nDenver, named once, is not promoted (null).';
function unmetBobSentence(about: About | null): string | undefined {
  if (!about) return 'about("bob") is null';
  if (about.name !== 'Bob Smith') return `name ${about.name}, not Bob Smith`;
  if (!about.aliases.includes('Bob')) return `aliases ${JSON.stringify(about.aliases)} without "Bob"`;
  const merged = about.mergedFrom.map((m) => m.name);
  if (!merged.includes('Bob') || !merged.includes('Bob Smith')) return `merged names ${JSON.stringify(merged)}`;
  if (about.facts.length === 0) return 'no facts';
  if (!about.facts.every((f) => /\bBob\b/.test(f.statement))) return `a fact that names neither: ${JSON.stringify(about.facts.map((f) => f.statement))}`;
  if (!about.facts.every((f) => f.sources.length > 0)) return 'a fact without its source event';
  return undefined;
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

describe('README.md: every GraphQL block pastes into GraphiQL as one document of the service schema', () => {
  it('parses each block as one document whose operations are all named and valid against schema.graphql', () => {
    const schema = buildSchema(fs.readFileSync(path.join(ROOT, 'schema.graphql'), 'utf8'));
    expect(BLOCKS.length).toBeGreaterThanOrEqual(4);
    const problems = BLOCKS.flatMap((text, i) => {
      const doc = parse(text);
      const unnamed = doc.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION && !d.name).length;
      return [...(unnamed > 0 ? [`block ${i + 1}: ${unnamed} unnamed operation(s)`] : []), ...validate(schema, doc).map((e) => `block ${i + 1}: ${e.message}`)];
    });
    expect(problems).toEqual([]);
  });
});

describe('README.md: every GraphQL example runs against the service with the token it names and answers what it shows', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ DERIVE_MAX_WAIT_MS: '0', DERIVE_POLL_MS: '50', GOLD_PROMOTE_EVERY_SECONDS: '5', EXPLORE_TIMEOUT_MS: '30000' });
  }, 300_000);
  afterAll(async () => t?.stop());

  it('runs the examples in order, each as the token its block names, each placeholder filled from an earlier answer', async () => {
    expect(README).toContain(BOB_SENTENCE);
    const examples = readmeExamples();
    expect(examples.length).toBeGreaterThan(15);
    // The README's namespaces, made unique to this run (the test Neo4j is shared).
    const prefix = uniqueNamespace('readme').replace(/[^a-z0-9-]/gi, '-');
    const approver = await createToken(t, [{ namespacePattern: `${prefix}/*`, capabilities: ['APPROVE'] }], 'readme-approver');
    // The erasure's requester is an admin with a token of its own: the bootstrap admin's requests have no second person (docs/approvals.md).
    const requester = await createToken(t, [{ namespacePattern: `${prefix}/*`, capabilities: ['ADMIN'] }], 'readme-requester');
    const tokens: Record<Runner, string | undefined> = { admin: t.adminToken, approver: approver.token, requester: requester.token, agent: undefined };
    const seen: { event?: string; fact?: string; approval?: string; overlay?: string } = {};
    const failures: string[] = [];
    let checkedBob = false;

    for (const ex of examples) {
      let op = ex.operation.replaceAll('team-a', prefix);
      // Placeholders: the id an earlier answer gave, by what the argument names.
      const missing: string[] = [];
      const fill = (pattern: RegExp, value: string | undefined, what: string) => {
        if (!pattern.test(op)) return;
        if (value) op = op.replace(pattern, (m) => m.replace('…', value));
        else missing.push(what);
      };
      fill(/(factId|fact\(id): "…"/, seen.fact, 'fact');
      fill(/eventId: "…"/, seen.event, 'event');
      fill(/(approve\(id|approvalId): "…"/, seen.approval, 'approval');
      fill(/retractOverlay\(id: "…"/, seen.overlay, 'overlay');

      const label = `README graphql block ${ex.block + 1}: ${op}`;
      const runner = runnerOf(ex.heading);
      if (!runner) {
        failures.push(`${label}: no "# as the admin token" / "# as my-agent" / "# as an approver's token" line above it says which token runs it`);
        continue;
      }
      const token = tokens[runner];
      if (missing.length > 0 || op.includes('…') || !token) {
        failures.push(`${label}: no earlier example gave ${[...missing, ...(token ? [] : [`the ${runner} token`])].join(', ') || 'a value for "…"'}`);
        continue;
      }

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

      // Facts are derived, and Gold promoted, after the acknowledgement: an empty answer, or one
      // that does not yet hold what the README promises, is asked again for a while (the README
      // says so); an error is a failure at once.
      const expectsNull = /^null\b/.test(ex.comment);
      const isAboutBob = /^query AboutBob\b/.test(op);
      let why = '';
      let answer: Awaited<ReturnType<typeof gql>> | undefined;
      try {
        answer = await eventually(
          async () => {
            const r = await gql(t.url, token, op, {});
            if (r.errors?.length) return r;
            const data = (r.data ?? {}) as Record<string, unknown>;
            // The README promotes once pipelineStatus says nothing is pending: wait for that.
            const pending = (data as { pipelineStatus?: { pending?: number } }).pipelineStatus?.pending;
            if (pending !== undefined && pending > 0) return undefined;
            if (!expectsNull && Object.values(data).some(isEmpty)) return void (why = `an empty answer: ${JSON.stringify(data)}`);
            const unmet = unmetPromise(ex.comment, data) ?? (isAboutBob ? unmetBobSentence(data.about as About | null) : undefined);
            if (unmet) return void (why = `${unmet}; answer ${JSON.stringify(data)}`);
            return r;
          },
          label,
          90_000,
        );
      } catch {
        failures.push(`${label} (as ${runner}): not what the README shows within 90 s: ${why}`);
        continue;
      }
      if (answer.errors?.length) {
        failures.push(`${label} (as ${runner}): ${JSON.stringify(answer.errors)}`);
        continue;
      }
      if (isAboutBob) {
        checkedBob = true;
        // "(or "bob", "Bob Smith")": every spelling the sentence names finds the same entity.
        for (const name of ['Bob', 'Bob Smith']) {
          const other = await gqlOk<{ about: { name: string } | null }>(t.url, token, op.replace('name: "bob"', `name: "${name}"`));
          if (other.about?.name !== 'Bob Smith') failures.push(`${label}: about(name: "${name}") answered ${JSON.stringify(other.about)}`);
        }
      }

      const d = answer.data as {
        createToken?: { token?: string };
        ingestEvent?: { event?: { id?: string } };
        facts?: { edges?: Array<{ node: { id: string } }> };
        requestApproval?: { id?: string };
        addOverlay?: { id?: string };
      };
      // The token "my-agent" of the README is the one its first example created.
      tokens.agent ??= d.createToken?.token;
      seen.event = d.ingestEvent?.event?.id ?? seen.event;
      seen.fact ??= d.facts?.edges?.[0]?.node.id;
      seen.approval = d.requestApproval?.id ?? seen.approval;
      seen.overlay ??= d.addOverlay?.id;
    }
    expect(failures).toEqual([]);
    expect(checkedBob).toBe(true);
  }, 1_200_000);
});
