import { sleep } from './chaos-cluster';
import { prng } from './memory-data';

/** The seeded PRNG of the benches (mulberry32): the same seed gives the same run plan. */
export const seeded = prng;

export const pick = <T>(rnd: () => number, xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;

export interface GqlResult<T> {
  data?: T;
  errors?: Array<{ message: string; extensions?: { code?: string } }>;
}

/**
 * One GraphQL operation against whichever API answers: a refused or dropped connection (the API
 * was just killed) or a 5xx is retried on the other API until `deadlineMs`. A GraphQL answer,
 * errors included, is returned as is: only an answer counts as an acknowledgement.
 */
export async function gqlAny<T>(
  urls: () => string[],
  token: string,
  query: string,
  variables: Record<string, unknown>,
  stats: { transportRetries: number },
  deadlineMs = 180_000,
): Promise<GqlResult<T>> {
  const deadline = Date.now() + deadlineMs;
  let i = Math.floor(Math.random() * 2);
  for (;;) {
    const list = urls();
    const url = list[i % list.length] as string;
    i += 1;
    try {
      const res = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query, variables }),
        signal: AbortSignal.timeout(30_000),
      });
      if (res.status < 500) return (await res.json()) as GqlResult<T>;
      await res.body?.cancel();
    } catch {
      // killed mid-request or not listening yet: try the other one
    }
    stats.transportRetries += 1;
    if (Date.now() > deadline) throw new Error(`no API answered ${query.slice(0, 60)} for ${deadlineMs} ms`);
    await sleep(150);
  }
}

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { index status code event { id } } }`;
const FACTS = `query($ns: String!) { facts(namespace: $ns, first: 50) { edges { node { id statement } } } }`;
const ADD_OVERLAY = `mutation($input: OverlayInput!) { addOverlay(input: $input) { id } }`;
const REQUEST = `mutation($input: ApprovalRequestInput!) { requestApproval(input: $input) { id status } }`;
const APPROVE = `mutation($id: ID!) { approve(id: $id, reason: "chaos") { id status } }`;
const PROMOTE = `mutation($ns: String!) { promote(namespace: $ns, reason: "chaos") { id } }`;

/** Codes that reject the event itself; any other refusal is retried. */
const CLIENT_ERRORS = ['BAD_USER_INPUT', 'FORBIDDEN', 'NOT_FOUND', 'LIMIT_EXCEEDED'];

const CITIES = ['Lisbon', 'Berlin', 'Porto', 'Oslo', 'Madrid', 'Vienna', 'Prague', 'Dublin', 'Krakow', 'Turin'];
const TOOLS = ['vim', 'neovim', 'emacs', 'VS Code', 'IntelliJ', 'Sublime', 'Helix', 'Zed'];
const COMPANIES = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Stark', 'Wayne', 'Tyrell'];
const PEOPLE = ['Dana', 'Ravi', 'Mina', 'Tom', 'Ines', 'Kofi', 'Lena', 'Yuki'];
const LANGS = ['Rust', 'Go', 'TypeScript', 'Python', 'Kotlin', 'Elixir', 'Haskell', 'Zig'];

/** One chaos turn's text: the same few templates, with names (a "Dana" among them) that clash with the speaker's. */
export function sentence(rnd: () => number): string {
  const templates = [
    () => `I live in ${pick(rnd, CITIES)} now`,
    () => `I use ${pick(rnd, TOOLS)} for everything`,
    () => `I work at ${pick(rnd, COMPANIES)}`,
    () => `My sister ${pick(rnd, PEOPLE)} lives in ${pick(rnd, CITIES)}`,
    () => `I prefer ${pick(rnd, LANGS)} over ${pick(rnd, LANGS)}`,
    () => `We plan to move to ${pick(rnd, CITIES)} next year`,
    () => `My manager ${pick(rnd, PEOPLE)} works at ${pick(rnd, COMPANIES)}`,
    () => `I no longer use ${pick(rnd, TOOLS)}`,
  ];
  return pick(rnd, templates)();
}

export interface AckedEvent {
  id: string;
  namespace: string;
  source: string;
  sourceEventId: string;
}

/** What the clients were told succeeded: the chaos run's ground truth. */
export interface Acks {
  events: Map<string, AckedEvent>;
  /** Re-sends of acknowledged events answered DUPLICATE with another id than the first answer. */
  idMismatches: number;
  rejected: number;
  overlays: Set<string>;
  approvalsRequested: Set<string>;
  approvalsApproved: Set<string>;
  promotions: number;
  stats: { transportRetries: number; ingestRequests: number; graphqlErrors: number };
}

export interface LoadOptions {
  urls: () => string[];
  adminToken: string;
  requesterToken: string;
  approverToken: string;
  namespaces: readonly string[];
  seed: number;
  log: (msg: string) => void;
}

/**
 * Drives the service while processes die: two ingest clients (batches of 1–4 events with unique
 * keys, now and then re-sending an acknowledged batch), overlays on derived facts, approval
 * requests approved by a second principal, and promotion requests. Runs until `stop()`.
 */
export function startLoad(opts: LoadOptions): { acks: Acks; stop(): Promise<void> } {
  const acks: Acks = {
    events: new Map(),
    idMismatches: 0,
    rejected: 0,
    overlays: new Set(),
    approvalsRequested: new Set(),
    approvalsApproved: new Set(),
    promotions: 0,
    stats: { transportRetries: 0, ingestRequests: 0, graphqlErrors: 0 },
  };
  let running = true;
  const gql = <T>(token: string, query: string, variables: Record<string, unknown>) => gqlAny<T>(opts.urls, token, query, variables, acks.stats);
  const errorsOf = (r: GqlResult<unknown>, what: string): boolean => {
    if (!r.errors?.length) return false;
    acks.stats.graphqlErrors += 1;
    opts.log(`${what}: ${r.errors[0]?.extensions?.code ?? ''} ${r.errors[0]?.message ?? ''}`.slice(0, 300));
    return true;
  };
  // Every load event is in or after June 2026: the retention of the run drops months before April.
  let clock = Date.UTC(2026, 5, 1);

  const ingestClient = async (client: number): Promise<void> => {
    const rnd = seeded(opts.seed * 31 + client);
    let seq = 0;
    const sent: Array<Array<Record<string, unknown>>> = [];
    // A batch that got no answer (or an error: PostgreSQL was down) is sent again as it was.
    let unanswered: Array<Record<string, unknown>> | undefined;
    while (running) {
      let batch: Array<Record<string, unknown>>;
      const resend = unanswered === undefined && sent.length > 0 && rnd() < 0.1;
      if (unanswered) batch = unanswered;
      else if (resend) batch = pick(rnd, sent);
      else {
        const ns = pick(rnd, opts.namespaces);
        batch = Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => {
          seq += 1;
          clock += 60_000;
          return {
            namespace: ns,
            source: `chaos-${client}`,
            sourceEventId: `c${client}-${seq}`,
            kind: 'MESSAGE',
            role: 'USER',
            actor: 'Dana',
            conversationId: `conv-${client}`,
            sequenceNum: seq,
            content: sentence(rnd),
            occurredAt: new Date(clock).toISOString(),
          };
        });
      }
      acks.stats.ingestRequests += 1;
      const r = await gql<{ ingestEvents: Array<{ index: number; status: string; code: string | null; event: { id: string } | null }> }>(
        opts.adminToken,
        INGEST,
        { input: batch },
      );
      if (errorsOf(r, 'ingestEvents') || !r.data) {
        if (!resend) unanswered = batch;
        await sleep(200);
        continue;
      }
      unanswered = undefined;
      if (!resend) sent.push(batch);
      for (const res of r.data.ingestEvents) {
        const e = batch[res.index] as { namespace: string; source: string; sourceEventId: string };
        const key = `${e.namespace}\u0000${e.source}\u0000${e.sourceEventId}`;
        if ((res.status !== 'CREATED' && res.status !== 'DUPLICATE') || !res.event) {
          // A store that is down is no verdict on the event: the batch goes again.
          if (!resend && !CLIENT_ERRORS.includes(res.code ?? '')) unanswered = batch;
          acks.rejected += 1;
          opts.log(`ingest rejected ${key}: ${res.status} ${res.code ?? ''}`);
          continue;
        }
        const before = acks.events.get(key);
        if (before && before.id !== res.event.id) acks.idMismatches += 1;
        if (!before) acks.events.set(key, { id: res.event.id, ...e });
      }
      await sleep(20 + rnd() * 80);
    }
  };

  const goldClient = async (): Promise<void> => {
    const rnd = seeded(opts.seed * 17 + 5);
    const annotated = new Set<string>();
    let n = 0;
    while (running) {
      await sleep(400 + rnd() * 600);
      n += 1;
      const ns = pick(rnd, opts.namespaces);
      if (n % 10 === 0) {
        const r = await gql(opts.adminToken, PROMOTE, { ns });
        if (!r.errors?.length) acks.promotions += 1;
        continue;
      }
      if (n % 3 === 0) {
        // An approval: requested by one principal, approved by another (never executed).
        const events = [...acks.events.values()].filter((e) => e.namespace === ns);
        if (events.length === 0) continue;
        const target = pick(rnd, events);
        const req = await gql<{ requestApproval: { id: string } }>(opts.requesterToken, REQUEST, {
          input: { namespace: ns, action: 'DESTROY_EVENT', params: { eventId: target.id }, reason: `chaos request ${n}` },
        });
        if (errorsOf(req, 'requestApproval') || !req.data) continue;
        acks.approvalsRequested.add(req.data.requestApproval.id);
        if (rnd() < 0.7) {
          const ok = await gql<{ approve: { id: string; status: string } }>(opts.approverToken, APPROVE, { id: req.data.requestApproval.id });
          if (!errorsOf(ok, 'approve') && ok.data?.approve.status === 'APPROVED') acks.approvalsApproved.add(ok.data.approve.id);
        }
        continue;
      }
      const facts = await gql<{ facts: { edges: Array<{ node: { id: string; statement: string } }> } }>(opts.adminToken, FACTS, { ns });
      if (errorsOf(facts, 'facts') || !facts.data) continue;
      const fresh = facts.data.facts.edges.map((e) => e.node).filter((f) => !annotated.has(f.id) && f.statement.length > 3);
      if (fresh.length === 0) continue;
      const fact = pick(rnd, fresh);
      annotated.add(fact.id);
      const exact = fact.statement.split(' ').slice(0, 2).join(' ');
      const r = await gql<{ addOverlay: { id: string } }>(opts.adminToken, ADD_OVERLAY, {
        input: { factId: fact.id, kind: 'ANNOTATION', exact, start: 0, body: `chaos note ${n}`, reason: 'chaos' },
      });
      if (errorsOf(r, 'addOverlay') || !r.data) continue;
      acks.overlays.add(r.data.addOverlay.id);
    }
  };

  const loops = [ingestClient(1), ingestClient(2), goldClient()];
  return {
    acks,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}
