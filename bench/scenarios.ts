import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { nowMs, report, round, summarize, withBenchStores } from './harness';
import { poster, Post, waitSettled } from './recall';
import { TurnBm25 } from './locomo';
import { BLIND_FILES, ifPresent, inValidate, Split, tuneValidate } from './split';
import { extractorVersion } from './rule-set';

/**
 * The first-use scenario suite (issue 23): small namespaces of two to six messages, each asking one
 * question whose answer the first searchMemory hit must hold. Written for this project
 * (bench/scenarios/scenarios.json); the kinds: knowledge update, preference, user fact, assistant
 * fact, several people, time, a fact among chit-chat, short messy turns.
 */
export interface ScenarioMessage {
  role: 'USER' | 'ASSISTANT';
  actor?: string;
  content: string;
}

export interface Scenario {
  id: string;
  kind: string;
  messages: ScenarioMessage[];
  question: string;
  /** The first hit must hold one of these (whole words, case-insensitive). */
  answer: string[];
}

/** Messages are dated a minute apart from this instant ("next Tuesday" is 24 November 2026). */
export const SCENARIO_EPOCH = new Date('2026-11-20T10:00:00Z');

export function loadScenarios(file = path.join(scenarioDir(), 'scenarios.json')): Scenario[] {
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { scenarios: Scenario[] }).scenarios;
}

function scenarioDir(): string {
  // From bench/ (ts-jest, swc) or dist/bench/ (the built bench runner).
  const here = __dirname.includes(`${path.sep}dist${path.sep}`) ? path.join(__dirname, '..', '..', 'bench') : __dirname;
  return path.join(here, 'scenarios');
}

export function scenarioEvents(ns: string, s: Scenario): Array<Record<string, unknown>> {
  return s.messages.map((m, i) => ({
    namespace: ns,
    source: 'scenario',
    sourceEventId: `${s.id}-${i}`,
    kind: 'MESSAGE',
    role: m.role,
    ...(m.actor ? { actor: m.actor } : {}),
    content: m.content,
    occurredAt: new Date(SCENARIO_EPOCH.getTime() + i * 60_000).toISOString(),
    conversationId: s.id,
    sequenceNum: i + 1,
  }));
}

/** Whether `text` holds one of the answers as whole words. */
export function holdsAnswer(text: string, answers: readonly string[]): boolean {
  const t = text.toLowerCase();
  return answers.some((a) => new RegExp(`(^|[^\\p{L}\\p{N}])${a.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\p{L}\\p{N}])`, 'u').test(t));
}

const INGEST = `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status reason } }`;
const SEARCH = `query($ns: String!, $q: String!) { searchMemory(namespace: $ns, query: $q, limit: 5) { kind score channels fact { statement } event { content } } }`;

export interface ScenarioOutcome {
  id: string;
  kind: string;
  ok: boolean;
  first: string | null;
  /** The first three hits with their score and channels: what decided the order. */
  top: string[];
  ms: number;
  bm25: boolean | null;
}

type Hit = { kind: 'FACT' | 'EVENT'; score?: number; channels?: string[]; fact: { statement: string } | null; event: { content: string } | null };

export const hitText = (h: Hit): string => (h.kind === 'FACT' ? (h.fact?.statement ?? '') : (h.event?.content ?? ''));

/**
 * How the messages reach the service: `together` in one ingest (one derivation batch per
 * namespace), or `one-by-one`, each posted once the previous one was derived and projected, as a
 * live chat arrives (every message its own batch: DERIVE_QUIET_MS passes between them).
 */
export type Arrival = 'together' | 'one-by-one';

/** Ingests every scenario into its own namespace, waits until derived and projected, asks each question once. */
export async function runScenarios(post: Post, scenarios: readonly Scenario[], run: string, arrival: Arrival = 'together'): Promise<ScenarioOutcome[]> {
  const namespaces = scenarios.map((s) => `scenario-${s.id}-${run}`);
  const events = scenarios.map((s, i) => scenarioEvents(namespaces[i] as string, s));
  if (arrival === 'together') {
    await post(INGEST, { input: events.flat() });
    await waitSettled(post, namespaces, 600_000);
  } else {
    for (let turn = 0; turn < Math.max(...events.map((e) => e.length)); turn++) {
      await post(INGEST, { input: events.flatMap((e) => e.slice(turn, turn + 1)) });
      await waitSettled(post, namespaces, 600_000);
    }
  }
  const out: ScenarioOutcome[] = [];
  for (let i = 0; i < scenarios.length; i++) {
    const s = scenarios[i] as Scenario;
    const t0 = nowMs();
    const res = await post<{ searchMemory: Hit[] }>(SEARCH, { ns: namespaces[i], q: s.question });
    const ms = nowMs() - t0;
    const first = res.searchMemory[0] ? hitText(res.searchMemory[0]) : null;
    const top = res.searchMemory.slice(0, 3).map((h) => `${(h.score ?? 0).toFixed(4)} [${(h.channels ?? []).join(',')}] ${h.kind}: ${hitText(h)}`);
    out.push({ id: s.id, kind: s.kind, ok: first !== null && holdsAnswer(first, s.answer), first, top, ms, bm25: bm25First(s) });
  }
  return out;
}

/** BM25's first message over the scenario's own messages holds the answer (null below the 3 documents wink-bm25 needs). */
function bm25First(s: Scenario): boolean | null {
  if (s.messages.length < 3) return null;
  const turns = s.messages.map((m, i) => ({
    diaId: String(i),
    speaker: m.actor ?? m.role,
    session: 1,
    sequenceNum: i + 1,
    content: m.content,
    occurredAt: SCENARIO_EPOCH,
  }));
  const top = new TurnBm25(turns).search(s.question, 1)[0];
  return top === undefined ? false : holdsAnswer(s.messages[Number(top)]?.content ?? '', s.answer);
}

/**
 * The scenarios of a run with their split (bench/split.ts): a third of scenarios.json (by id) and
 * the whole blind-written scenarios-2.json, when present, are validate.
 */
export function splitScenarios(): Array<Scenario & { split: Split; set: string }> {
  const blind = ifPresent(BLIND_FILES.scenarios);
  return [
    ...loadScenarios().map((s) => ({ ...s, split: (inValidate(s.id) ? 'validate' : 'tune') as Split, set: 'scenarios.json' })),
    ...(blind ? loadScenarios(blind).map((s) => ({ ...s, id: `blind2-${s.id}`, split: 'validate' as Split, set: 'scenarios-2.json' })) : []),
  ];
}

/** First hits right per split and set; individual misses of tune only (a validate case is never read while tuning). */
function splitFigures(chosen: ReadonlyArray<{ split: Split; set: string }>, outcomes: readonly ScenarioOutcome[]) {
  const of = (f: (x: { split: Split; set: string }) => boolean) => {
    const idx = chosen.map((c, i) => (f(c) ? i : -1)).filter((i) => i >= 0);
    const right = idx.filter((i) => outcomes[i]?.ok).length;
    return { right, of: idx.length, share: idx.length === 0 ? null : right / idx.length };
  };
  const tune = of((c) => c.split === 'tune');
  const validate = of((c) => c.split === 'validate');
  return {
    ...tuneValidate(tune.share ?? 0, validate.share),
    tuneRight: `${tune.right}/${tune.of}`,
    validateRight: `${validate.right}/${validate.of}`,
    validateBySet: Object.fromEntries(
      [...new Set(chosen.filter((c) => c.split === 'validate').map((c) => c.set))].map((set) => {
        const f = of((c) => c.split === 'validate' && c.set === set);
        return [set, `${f.right}/${f.of}`];
      }),
    ),
    tuneFailures: outcomes.filter((o, i) => !o.ok && chosen[i]?.split === 'tune').map((o) => ({ id: o.id, first: o.first, top: o.top })),
  };
}

/** `npm run bench -- scenarios`: the suite through the real service with default settings. */
export async function scenariosBench(): Promise<void> {
  const scenarios = splitScenarios();
  const only = process.env.BENCH_SCENARIOS?.split(',');
  const chosen = only ? scenarios.filter((s) => only.includes(s.id) || only.includes(s.kind)) : scenarios;
  await withBenchStores(async (b) => {
    const { app, url, adminToken } = await b.startApp();
    try {
      const t0 = nowMs();
      const run = randomBytes(3).toString('hex');
      const outcomes = await runScenarios(poster(url, adminToken), chosen, run);
      const t1 = nowMs();
      const oneByOne = await runScenarios(poster(url, adminToken), chosen, `${run}-live`, 'one-by-one');
      const tuned = outcomes.filter((_, i) => chosen[i]?.split === 'tune');
      const kinds = [...new Set(tuned.map((o) => o.kind))];
      const byKind = Object.fromEntries(
        kinds.map((k) => {
          const os = tuned.filter((o) => o.kind === k);
          return [k, `${os.filter((o) => o.ok).length}/${os.length}`];
        }),
      );
      const withBm25 = tuned.filter((o) => o.bm25 !== null);
      report('scenarios', {
        ruleSet: extractorVersion(),
        split: {
          rule: 'bench/split.ts: a third of scenarios.json by the SHA-256 of the id, and the blind-written scenarios-2.json, are validate',
          together: splitFigures(chosen, outcomes),
          oneByOne: splitFigures(chosen, oneByOne),
        },
        scenarios: outcomes.length,
        firstHitRight: outcomes.filter((o) => o.ok).length,
        tuneByKind: byKind,
        bm25FirstRight: `tune: ${withBm25.filter((o) => o.bm25).length}/${withBm25.length} (scenarios of 3+ messages; ours on the same: ${withBm25.filter((o) => o.ok).length})`,
        searchMs: summarize(outcomes.map((o) => o.ms)),
        wallSeconds: round((t1 - t0) / 1000, 1),
        oneByOneWallSeconds: round((nowMs() - t1) / 1000, 1),
      });
    } finally {
      await app.stop();
    }
  });
}
