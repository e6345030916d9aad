import { eventChecksum } from '../src/bronze/checksum';
import { HashingEmbedder } from '../src/models/offline/hashing-embedder';

/**
 * Deterministic synthetic memory for the search and provenance benchmarks: entities, Bronze
 * events, Silver facts (statement, hashing embedding, spans into their events, supersession
 * chains, ABOUT subjects/objects) and relationships, generated namespace by namespace in chunks
 * from a seeded PRNG, so two runs load the same data and queries have real lexical neighbours.
 */

/** mulberry32: small, fast, seeded. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Rng = () => number;
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)] as T;
const between = (rng: Rng, lo: number, hi: number): number => lo + rng() * (hi - lo);

/** A v4-shaped UUID from the PRNG (deterministic ids). */
export function uuidFrom(rng: Rng): string {
  const h: string[] = [];
  for (let i = 0; i < 4; i++)
    h.push(
      Math.floor(rng() * 2 ** 32)
        .toString(16)
        .padStart(8, '0'),
    );
  const s = h.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-4${s.slice(13, 16)}-${'89ab'[parseInt(s[16] as string, 16) & 3]}${s.slice(17, 20)}-${s.slice(20, 32)}`;
}

const FIRST =
  'Alice Bruno Chen Dana Emil Fatima Gregor Hana Ivan Julia Kenji Lena Marco Nadia Oskar Priya Quentin Rosa Samir Tara Ulrich Vera Wei Ximena Yusuf Zoe Arjun Beatriz Carlos Dmitri Elena Farid Greta Hugo Ines Jonas Kira Luca Mei Noah Olga Pavel Rania Sven Tomas Uma Viktor Wanda Yara Zeno'.split(
    ' ',
  );
const LAST =
  'Chen Novak Okafor Silva Becker Tanaka Rossi Kowalski Haddad Larsen Moreau Petrov Santos Weber Ibrahim Nakamura Jensen Costa Fischer Kaur Schmidt Dubois Ivanova Garcia Horvat Lindqvist Mendes Nieminen Ortiz Popescu Quinn Richter Sato Torres Ueda Varga Wagner Yilmaz Zhang Adler Bianchi Cruz Duarte Eriksen Falk Gomez Hoffmann Jovanovic Keller Lopez'.split(
    ' ',
  );
const TOOLS =
  'neovim vim emacs vscode intellij zed helix sublime git mercurial docker podman kubernetes nomad terraform pulumi ansible jenkins buildkite postgres mysql sqlite redis kafka rabbitmq neo4j elasticsearch grafana prometheus datadog sentry jira linear notion slack zoom figma bazel gradle maven webpack vite esbuild pnpm yarn npm cargo poetry conda airflow dagster dbt snowflake bigquery spark flink tmux zsh fish'.split(
    ' ',
  );
const LANGUAGES = 'TypeScript Rust Go Python Kotlin Java Scala Haskell Elixir Ruby Swift Zig OCaml Clojure C# F# Julia Lua Dart Erlang'.split(' ');
const CITIES =
  'Berlin Tokyo Lisbon Toronto Nairobi Oslo Madrid Seoul Austin Dublin Prague Vienna Helsinki Warsaw Athens Cairo Lagos Lima Bogota Santiago Montreal Vancouver Denver Boston Chicago Seattle Portland Amsterdam Rotterdam Zurich Geneva Munich Hamburg Milan Turin Lyon Marseille Porto Seville Krakow Budapest Bucharest Sofia Istanbul Dubai Mumbai Bangalore Singapore Jakarta Manila Sydney Melbourne Auckland Osaka Kyoto Taipei Hanoi Bangkok Riga Tallinn'.split(
    ' ',
  );
const ADJ =
  'billing search payments ledger onboarding mobile analytics identity checkout inventory shipping pricing catalog notification reporting gateway scheduler storage indexing ranking fraud loyalty support routing telemetry'.split(
    ' ',
  );
const NOUN =
  'service api pipeline dashboard worker portal engine platform cli sdk app backend frontend cache crawler exporter bridge hub monitor importer'.split(' ');
const ORGS =
  'Acme Globex Initech Umbrella Hooli Vandelay Stark Wayne Wonka Cyberdyne Tyrell Soylent Aperture Oscorp Gringotts Monarch Pied-Piper Dunder-Mifflin Massive-Dynamic Nakatomi'.split(
    ' ',
  );
const ACTIVITY_LIST = [
  'code review',
  'debugging',
  'note taking',
  'writing documentation',
  'pair programming',
  'data exploration',
  'load testing',
  'incident response',
  'refactoring',
  'prototyping',
  'release planning',
  'database migrations',
  'log analysis',
  'profiling',
  'onboarding new hires',
  'writing tests',
  'design reviews',
  'sprint planning',
  'estimating tickets',
];
const TOPICS = [
  'the hiring plan',
  'the quarterly roadmap',
  'the on-call rotation',
  'the security audit',
  'the data retention policy',
  'the cloud budget',
  'the API versioning',
  'flaky integration tests',
  'the schema migration',
  'the latency regression',
  'the memory leak',
  'the vendor contract',
  'the GDPR request',
  'the backup strategy',
  'the rate limiter',
  'the search relevance',
  'the cache invalidation',
  'the deploy freeze',
  'the feature flags',
  'the logging costs',
];
const MONTHS = 'January February March April May June July August September October November December'.split(' ');
const WEEKDAYS = 'Monday Tuesday Wednesday Thursday Friday Saturday Sunday'.split(' ');
const SEVERITIES = ['critical', 'minor', 'subtle', 'nasty', 'long-standing'];
const FOODS = [
  'ramen',
  'falafel',
  'sushi',
  'pizza',
  'salad',
  'tacos',
  'pho',
  'burritos',
  'dumplings',
  'curry',
  'bagels',
  'pasta',
  'poke bowls',
  'kebab',
  'soup',
];
const THINGS = ['meetings', 'standups', 'code reviews', 'deploys', 'emails', 'phone calls', 'coffee'];
const ROLES = ['tech lead', 'product owner', 'staff engineer', 'engineering manager', 'designer', 'data scientist', 'on-call lead'];
const TEAMS = ['platform', 'growth', 'infra', 'data', 'payments', 'mobile', 'search', 'security', 'frontend', 'developer experience'];
const FEATURES = [
  'dark mode',
  'bulk export',
  'single sign-on',
  'audit log',
  'saved searches',
  'offline sync',
  'usage billing',
  'webhooks',
  'two-factor login',
  'CSV import',
];

export type EntityType = 'person' | 'technology' | 'programming_language' | 'place' | 'project' | 'organization';

export interface GenEntity {
  id: string;
  type: EntityType;
  name: string;
  aliases: string[];
}

/** The entities of one namespace, by kind; `user` is the hub most facts are about. */
export interface Vocabulary {
  user: GenEntity;
  people: GenEntity[];
  tools: GenEntity[];
  languages: GenEntity[];
  cities: GenEntity[];
  projects: GenEntity[];
  orgs: GenEntity[];
  all: GenEntity[];
}

export function vocabulary(seed: number, factsPerNamespace: number): Vocabulary {
  const rng = prng(seed ^ 0x5eed);
  const ent = (type: EntityType, name: string, aliases: string[] = []): GenEntity => ({ id: uuidFrom(rng), type, name, aliases });
  const nPeople = Math.min(FIRST.length * LAST.length, Math.max(100, Math.round(factsPerNamespace / 40)));
  const people: GenEntity[] = [];
  for (let i = 0; i < nPeople; i++) people.push(ent('person', `${FIRST[i % FIRST.length]} ${LAST[Math.floor(i / FIRST.length) % LAST.length]}`));
  const nProjects = Math.min(ADJ.length * NOUN.length, Math.max(30, Math.round(factsPerNamespace / 200)));
  const projects: GenEntity[] = [];
  for (let i = 0; i < nProjects; i++) projects.push(ent('project', `${ADJ[i % ADJ.length]}-${NOUN[Math.floor(i / ADJ.length) % NOUN.length]}`));
  const user = ent('person', 'the user', ['user', 'me']);
  const tools = TOOLS.map((t) => ent('technology', t, t === 'neovim' ? ['nvim'] : t === 'postgres' ? ['postgresql'] : []));
  const languages = LANGUAGES.map((l) => ent('programming_language', l));
  const cities = CITIES.map((c) => ent('place', c));
  const orgs = ORGS.map((o) => ent('organization', o.replace(/-/g, ' ')));
  return { user, people, tools, languages, cities, projects, orgs, all: [user, ...people, ...tools, ...languages, ...cities, ...projects, ...orgs] };
}

interface Rendered {
  text: string;
  factType: string;
  predicate: string;
  objectValue: string;
  objectEntityId: string | null;
}

type Template = (rng: Rng, subject: string, v: Vocabulary) => Rendered;

const withObject = (e: GenEntity) => ({ objectValue: e.name, objectEntityId: e.id });

/** Statement templates; a superseding fact re-renders its predecessor's template for the same subject. */
const TEMPLATES: readonly Template[] = [
  (r, s, v) => {
    const t = pick(r, v.tools);
    return { text: `${s} prefers ${t.name} for ${pick(r, ACTIVITY_LIST)}`, factType: 'preference', predicate: 'prefers', ...withObject(t) };
  },
  (r, s, v) => {
    const c = pick(r, v.cities);
    return { text: `${s} lives in ${c.name}`, factType: 'attribute', predicate: 'lives_in', ...withObject(c) };
  },
  (r, s, v) => {
    const p = pick(r, v.projects);
    return { text: `${s} works on ${p.name} with ${pick(r, v.people).name}`, factType: 'relationship', predicate: 'works_on', ...withObject(p) };
  },
  (r, s, v) => {
    const p = pick(r, v.projects);
    return {
      text: `${s} fixed a ${pick(r, SEVERITIES)} bug in ${p.name} during the ${pick(r, MONTHS)} release`,
      factType: 'event',
      predicate: 'fixed_bug_in',
      ...withObject(p),
    };
  },
  (r, s, v) => {
    const p = pick(r, v.projects);
    const to = pick(r, v.tools);
    return {
      text: `${s} plans to migrate ${p.name} from ${pick(r, v.tools).name} to ${to.name} by ${pick(r, MONTHS)}`,
      factType: 'plan',
      predicate: 'plans_to_migrate_to',
      ...withObject(to),
    };
  },
  (r, s, v) => {
    const l = pick(r, v.languages);
    return { text: `${s} uses ${l.name} at ${pick(r, v.orgs).name}`, factType: 'attribute', predicate: 'uses', ...withObject(l) };
  },
  (r, s, v) => {
    const p = pick(r, v.people);
    return { text: `${s} met ${p.name} in ${pick(r, v.cities).name} to discuss ${pick(r, TOPICS)}`, factType: 'event', predicate: 'met', ...withObject(p) };
  },
  (r, s) => {
    const x = pick(r, THINGS);
    return { text: `${s} avoids ${x} before ${7 + Math.floor(r() * 5)} am`, factType: 'preference', predicate: 'avoids', objectValue: x, objectEntityId: null };
  },
  (r, s, v) => {
    const p = pick(r, v.projects);
    return { text: `${s} mentioned that ${pick(r, TOPICS)} is blocking ${p.name}`, factType: 'other', predicate: 'mentioned', ...withObject(p) };
  },
  (r, s) => {
    const f = pick(r, FOODS);
    return { text: `${s} likes ${f} for lunch on ${pick(r, WEEKDAYS)}s`, factType: 'preference', predicate: 'likes', objectValue: f, objectEntityId: null };
  },
  (r, s) => {
    const role = pick(r, ROLES);
    return { text: `${s} is the ${role} of the ${pick(r, TEAMS)} team`, factType: 'attribute', predicate: 'has_role', objectValue: role, objectEntityId: null };
  },
  (r, s, v) => {
    const p = pick(r, v.projects);
    return {
      text: `${s} needs to ship the ${pick(r, FEATURES)} feature of ${p.name} before ${pick(r, MONTHS)}`,
      factType: 'plan',
      predicate: 'needs_to_ship',
      ...withObject(p),
    };
  },
];

const subjectText = (e: GenEntity) => (e.name === 'the user' ? 'The user' : e.name);

export interface GenSource {
  eventId: string;
  spanStart: number;
  spanEnd: number;
  quote: string;
}

export interface GenFact {
  id: string;
  statement: string;
  factType: string;
  subjectEntityId: string;
  predicate: string;
  objectValue: string;
  objectEntityId: string | null;
  confidence: number;
  importance: number;
  validFrom: Date;
  validTo: Date | null;
  supersededBy: string | null;
  embedding: number[];
  sources: GenSource[];
  /** Its position in a supersession chain (0 = not in a chain). */
  chainLength: number;
  template: number;
  subject: GenEntity;
}

export interface GenEvent {
  id: string;
  sourceEventId: string;
  conversationId: string;
  sequenceNum: number;
  role: 'user' | 'assistant';
  content: string;
  checksum: string;
  occurredAt: Date;
}

export interface GenRelationship {
  id: string;
  type: string;
  sourceEntityId: string;
  targetEntityId: string;
  validFrom: Date;
  eventId: string;
}

export interface Chunk {
  facts: GenFact[];
  events: GenEvent[];
  relationships: GenRelationship[];
}

const T0 = Date.UTC(2025, 0, 1);
const SPAN_MS = 540 * 86_400_000; // 18 months of history
const FILLERS = [
  'Noted for later.',
  'Just so you know.',
  'Anyway, back to the ticket.',
  'Thanks for the help earlier!',
  'Can you remember that?',
  'That is all for today.',
  'Let me know if that changes anything.',
];

/** Share of facts that supersede an earlier current fact (same subject and template) of their chunk. */
export const SUPERSEDE_RATE = 0.05;
/** Share of events that restate an earlier fact of their chunk (a second DERIVED_FROM source). */
export const CORROBORATE_RATE = 0.1;
const MAX_CHAIN = 4;

/**
 * Generates facts [from, from + n) of a namespace: two facts per event, in time order; a fact
 * supersedes an earlier current one of the chunk with probability SUPERSEDE_RATE (chains of 2-4).
 */
export function generateChunk(seed: number, v: Vocabulary, total: number, from: number, n: number, embedder: HashingEmbedder): Chunk {
  const rng = prng(seed * 7919 + from);
  const facts: GenFact[] = [];
  const events: GenEvent[] = [];
  const relationships: GenRelationship[] = [];
  const open: number[] = []; // chunk-local indices of current facts that may be superseded
  for (let i = 0; i < n; i++) {
    const at = new Date(T0 + Math.floor(((from + i) / total) * SPAN_MS) + Math.floor(rng() * 60_000));
    let subject = rng() < 0.2 ? v.user : pick(rng, v.people);
    let template = Math.floor(rng() * TEMPLATES.length);
    let predecessor: GenFact | undefined;
    if (open.length > 0 && rng() < SUPERSEDE_RATE) {
      const k = Math.floor(rng() * open.length);
      predecessor = facts[open[k] as number] as GenFact;
      open.splice(k, 1);
      subject = predecessor.subject;
      template = predecessor.template;
    }
    const r = (TEMPLATES[template] as Template)(rng, subjectText(subject), v);
    const fact: GenFact = {
      id: uuidFrom(rng),
      statement: r.text,
      factType: r.factType,
      subjectEntityId: subject.id,
      predicate: r.predicate,
      objectValue: r.objectValue,
      objectEntityId: r.objectEntityId,
      confidence: Math.round(between(rng, 0.6, 0.95) * 100) / 100,
      importance: Math.round(between(rng, 0.3, 0.9) * 100) / 100,
      validFrom: at,
      validTo: null,
      supersededBy: null,
      embedding: embedder.embedOne(r.text).map(Math.fround),
      sources: [],
      chainLength: 0,
      template,
      subject,
    };
    if (predecessor) {
      predecessor.validTo = at;
      predecessor.supersededBy = fact.id;
      fact.chainLength = Math.max(predecessor.chainLength, 1) + 1;
    }
    facts.push(fact);
    if (fact.chainLength < MAX_CHAIN) open.push(facts.length - 1);
    if (i % 2 === 1 || i === n - 1) events.push(eventFor(rng, facts.slice(i % 2 === 1 ? -2 : -1), facts, from + i));
  }
  for (const e of events.filter(() => rng() < 0.02)) {
    relationships.push({
      id: uuidFrom(rng),
      type: 'works_on',
      sourceEntityId: pick(rng, v.people).id,
      targetEntityId: pick(rng, v.projects).id,
      validFrom: e.occurredAt,
      eventId: e.id,
    });
  }
  return { facts, events, relationships };
}

/** One chat message stating `own` (and, sometimes, restating an earlier fact): spans point at each statement. */
function eventFor(rng: Rng, own: GenFact[], chunk: GenFact[], index: number): GenEvent {
  const id = uuidFrom(rng);
  const stated = [...own];
  if (chunk.length > own.length + 1 && rng() < CORROBORATE_RATE) stated.push(chunk[Math.floor(rng() * (chunk.length - own.length))] as GenFact);
  let content = '';
  for (const f of stated) {
    if (content) content += ` ${pick(rng, FILLERS)} `;
    const start = content.length;
    content += `${f.statement}.`;
    f.sources.push({ eventId: id, spanStart: start, spanEnd: start + f.statement.length, quote: f.statement });
  }
  content += ` ${pick(rng, FILLERS)}`;
  const occurredAt = (own[0] as GenFact).validFrom;
  const seq = Math.floor(index / 2);
  const conversationId = `c-${Math.floor(seq / 40)}`;
  const role = seq % 2 === 0 ? 'user' : 'assistant';
  const checksum = eventChecksum({
    kind: 'message',
    content,
    rawPayload: null,
    provenanceRoot: null,
    conversationId,
    sessionId: null,
    sequenceNum: seq % 40,
    role,
    actor: null,
    occurredAt: occurredAt.toISOString(),
  });
  return { id, sourceEventId: `m-${seq}`, conversationId, sequenceNum: seq % 40, role, content, checksum, occurredAt };
}

/** Search queries a user of the namespace might send: natural questions and keyword lists. */
export function searchQueries(seed: number, v: Vocabulary, n: number): Array<{ text: string; style: 'question' | 'keywords' }> {
  const rng = prng(seed ^ 0x9e37);
  const person = () => (rng() < 0.2 ? 'the user' : pick(rng, v.people).name);
  const forms: Array<() => { text: string; style: 'question' | 'keywords' }> = [
    () => ({ text: `which tool does ${person()} prefer for ${pick(rng, ACTIVITY_LIST)}?`, style: 'question' }),
    () => ({ text: `where does ${person()} live?`, style: 'question' }),
    () => ({ text: `who works on ${pick(rng, v.projects).name}?`, style: 'question' }),
    () => ({ text: `what did ${person()} say about ${pick(rng, TOPICS)}?`, style: 'question' }),
    () => ({ text: `is ${person()} migrating anything to ${pick(rng, v.tools).name}?`, style: 'question' }),
    () => ({ text: `${pick(rng, v.tools).name} ${pick(rng, ACTIVITY_LIST)}`, style: 'keywords' }),
    () => ({ text: `${pick(rng, v.projects).name} bug ${pick(rng, MONTHS)} release`, style: 'keywords' }),
    () => ({ text: `${person()} lunch ${pick(rng, FOODS)}`, style: 'keywords' }),
    () => ({ text: `${pick(rng, FEATURES)} ${pick(rng, v.projects).name} deadline`, style: 'keywords' }),
    () => ({ text: `${person()} ${pick(rng, v.languages).name}`, style: 'keywords' }),
  ];
  return Array.from({ length: n }, () => pick(rng, forms)());
}
