import * as chrono from 'chrono-node';
import { eng as ENGLISH_STOP_WORDS } from 'stopword';
import { Fact } from '../silver/silver.types';
import { isVisible } from '../silver/visibility';
import { asks, asksYesOrNo, withoutVocative } from '../common/chat-question';
import { splitSpeakerLabel } from './speaker-label';
import { ScoredId } from './cypher/search-channel';
import { wordKeys } from '../common/word-forms';
import { saysAChange } from '../common/change-cues';

/**
 * The retrieval channels of memory search: over Silver facts (`vector`, `keyword`, `graph`) and
 * over the raw Bronze events through the projection (`event_vector`, `event_keyword`).
 */
export const SEARCH_CHANNELS = ['vector', 'keyword', 'graph', 'event_vector', 'event_keyword'] as const;
export type SearchChannel = (typeof SEARCH_CHANNELS)[number];
export const EVENT_CHANNELS: readonly SearchChannel[] = ['event_vector', 'event_keyword'];
export const FACT_CHANNELS = ['vector', 'keyword', 'graph'] as const;

/** What every channel ranked for one query (fact lists carry their source events, event lists their superseding facts). */
export type ChannelLists = Record<SearchChannel, ScoredId[]>;

/** Each channel's weight in the fusion: a hit at rank r adds weight / (RRF_K + r). */
export type ChannelWeights = Record<SearchChannel, number>;

/**
 * The raw events count fully. Facts, which are lossy distillations of them (a derivation holds
 * only what its extractor recognised), count a quarter by vector and by keyword, and the graph
 * channel half: its first part is the named entities' facts ordered by similarity to the query
 * (`entityNameSearch`), so it votes for facts that are both about whom the question names and
 * close to it. Chosen by `bench/recall-tune` on the LoCoMo development split (Recall@10,
 * categories 1–4, e5-small-v2 channels, session 9): these 0.777, the previous { 0.5, 0.5, 0.25 }
 * 0.765, and better in each of the three conversations (0.752/0.719/0.804 → 0.765/0.743/0.807);
 * every graph weight from 0.4 to 0.75 with facts at a quarter scores 0.767–0.777.
 */
export const DEFAULT_CHANNEL_WEIGHTS: ChannelWeights = { vector: 0.25, keyword: 0.25, graph: 0.5, event_vector: 1, event_keyword: 1 };

/**
 * Reciprocal-rank-fusion constant. Cormack et al. (2009) chose 60 for long TREC runs; here a
 * channel's first few ranks are what it knows (its 30th hit is mostly noise), and a smaller k lets
 * them count. Chosen on the LoCoMo development split (session 20, docs/search.md "Fusion and
 * filters"): live Recall@10 0.769 → 0.784, every conversation up (0.757/0.768/0.781 →
 * 0.768/0.780/0.802), the first-use scenarios (49/51) and the current-belief-first count of
 * bench/updates (13/25) unchanged; replayed, 15 is the best of 10-90 on two dumps of different
 * extractions, with the channel weights unchanged.
 */
export const RRF_K = 15;

export interface RankedId {
  id: string;
}

export interface FusedHit {
  id: string;
  /** Sum over the channels that found it of 1 / (RRF_K + rank), rank 1-based. */
  score: number;
  channels: SearchChannel[];
}

/**
 * Reciprocal rank fusion: every channel contributes 1/(k + rank) for each fact it ranked, so a fact
 * several channels agree on rises, and scores of different scales (cosine, BM25) never mix.
 * Ties break on the best single rank, then on id, so results are deterministic.
 */
export function fuseByReciprocalRank(lists: Partial<Record<SearchChannel, readonly RankedId[]>>, k = RRF_K, weights: Partial<ChannelWeights> = {}): FusedHit[] {
  const acc = new Map<string, FusedHit & { best: number }>();
  for (const channel of SEARCH_CHANNELS) {
    const list = lists[channel] ?? [];
    const weight = weights[channel] ?? 1;
    if (weight <= 0) continue;
    const seen = new Set<string>();
    list.forEach((item, i) => {
      if (seen.has(item.id)) return;
      seen.add(item.id);
      const hit = acc.get(item.id) ?? { id: item.id, score: 0, channels: [], best: Number.POSITIVE_INFINITY };
      hit.score += weight / (k + i + 1);
      hit.channels.push(channel);
      hit.best = Math.min(hit.best, i + 1);
      acc.set(item.id, hit);
    });
  }
  return [...acc.values()].sort((a, b) => b.score - a.score || a.best - b.best || a.id.localeCompare(b.id)).map(({ best: _b, ...hit }) => hit);
}

/** What the ranking knows of a hit beyond its channels (search.service computes them from the loaded rows). */
export interface RankingPriors {
  /** An event hit's weight, 0..1 (`eventInformation`). */
  eventPrior?: (id: string) => number;
  /** A fact hit's weight, with the turns it carries (`factPolarity`). */
  factPrior?: (id: string) => number;
}

/**
 * The priors search weighs a question's hits by: `eventInformation` for a raw turn (with the
 * names the question asks about) and `factPolarity` for a fact. `event` and `fact` give what is
 * known of a hit by its id (undefined: not a hit of that kind, weight 1). One place, so the
 * benches that replay the ranking weigh as search does.
 */
export function rankingPriors(
  query: string,
  event: (id: string) => { content: string; actor: string | null } | undefined,
  fact: (id: string) => { isNegation: boolean; statement?: string } | undefined,
): Required<RankingPriors> {
  const names = askedNames(query);
  const wanted = expectedAnswer(query);
  return {
    eventPrior: (id) => {
      const e = event(id);
      return e ? eventInformation(e.content, e.actor, names) * answerFit(wanted, e.content) : 1;
    },
    factPrior: (id) => {
      const f = fact(id);
      return f ? factPolarity(f, query) * answerFit(wanted, f.statement ?? '') : 1;
    },
  };
}

/**
 * Runs the ranking's text work once for each of `questions` over one sample turn, so the
 * libraries it uses build their tables before a real search needs them: chrono-node makes its
 * parsers on first use (~190 ms on an idle machine), which the first question asking "when" after
 * a start paid inside its request (225 ms of the event loop under load in the CPU profile of
 * bench/search-under-load). The search warm-up runs it.
 */
export function warmRanking(questions: readonly string[]): void {
  const turn = { content: 'Sam: I moved to Berlin last Tuesday at 9, three weeks after we planned it.', actor: 'Sam' };
  for (const q of questions) {
    const priors = rankingPriors(
      q,
      () => turn,
      () => ({ isNegation: false, statement: turn.content }),
    );
    priors.eventPrior('event');
    priors.factPrior('fact');
    wordKeys(`${q} ${turn.content}`);
  }
}

/** What kind of value a question asks for, when its opening words say so. */
export type AnswerKind = 'time' | 'amount';

/**
 * The kind of value a question asks for, by its opening words (after a name it addresses): a time
 * ("when …", "what time / day / date / month / year …", "which day …", "how long ago …", "since
 * when …") or an amount ("how many / much / often / old / long …"). Null for any other question:
 * "what", "who" and "where" name no kind a text can be checked for without a tagger.
 */
export function expectedAnswer(query: string): AnswerKind | null {
  const q = withoutVocative(query.trim()).toLowerCase();
  if (ASKS_TIME.test(q)) return 'time';
  if (ASKS_AMOUNT.test(q)) return 'amount';
  return null;
}

const ASKS_TIME = /^(?:when\b|since when\b|until when\b|how long ago\b|(?:at |on |in )?(?:what|which) (?:time|day|date|month|year|week|weekday|hour)s?\b)/;
const ASKS_AMOUNT = /^how (?:many|much|often|old|long|far)\b/;

/**
 * How a hit fits the kind of value its question asks for: a text that holds a time (chrono-node
 * finds a date, a weekday, a clock time or a relative one such as "yesterday" or "next week") for
 * a question asking when, a number for one asking how many, weighs ANSWER_KIND_FACTOR; any other
 * text 1. "When is the user's dentist appointment?" then ranks "… appointment on Tuesday at 9"
 * above "The user is scared of the dentist", whatever their words share.
 */
export function answerFit(kind: AnswerKind | null, text: string): number {
  if (kind === null || text === '') return 1;
  if (kind === 'amount') return AMOUNT.test(text) ? ANSWER_KIND_FACTOR : 1;
  return chrono.parse(text).length > 0 ? ANSWER_KIND_FACTOR : 1;
}

/** The weight of a hit holding the kind of value its question asks for (a prior, like polarity's). */
export const ANSWER_KIND_FACTOR = 1.25;

const AMOUNT =
  /\b(?:\d+(?:[.,]\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|dozen|couple|once|twice|several|few)\b/i;

export interface MemoryCandidate {
  kind: MemoryHitKindName;
  id: string;
  score: number;
  channels: SearchChannel[];
  /** Ids of the hits on the same page said later about the same thing (`newerFirst`). */
  updatedBy?: string[];
}

/**
 * Turns fused fact and event hits into memory hits: a raw event that is a source of a fact hit is
 * not listed on its own — its score and channels are added to the best-ranked fact that rests on
 * it, so a turn and the fact distilled from it reinforce each other instead of taking two places.
 * `factEvents` holds the source events of the facts that passed the checks (only those can carry
 * an event); other facts must already be left out of `fused`. `staleEvents` maps an event to the
 * facts that superseded what it said: it is ranked below the best of them that is a hit (a
 * current fact adds the stale turn's score and outranks it). Order: score, then the fused order.
 */
export function foldEventsIntoFacts(
  fused: readonly FusedHit[],
  factEvents: ReadonlyMap<string, readonly string[]>,
  staleEvents: ReadonlyMap<string, readonly string[]> = new Map(),
  priors: RankingPriors = {},
): MemoryCandidate[] {
  const { eventPrior = () => 1, factPrior = () => 1 } = priors;
  const out: MemoryCandidate[] = fused.map((h) => {
    const kind = factEvents.has(h.id) ? 'FACT' : 'EVENT';
    return { kind, id: h.id, score: kind === 'EVENT' ? h.score * eventPrior(h.id) : h.score, channels: [...h.channels] };
  });
  const carrier = new Map<string, MemoryCandidate>();
  for (const hit of out) {
    if (hit.kind !== 'FACT') continue;
    for (const ev of factEvents.get(hit.id) ?? []) if (!carrier.has(ev)) carrier.set(ev, hit);
  }
  const kept = out.filter((hit) => {
    const fact = hit.kind === 'EVENT' ? carrier.get(hit.id) : undefined;
    if (!fact) return true;
    fact.score += hit.score;
    for (const c of hit.channels) if (!fact.channels.includes(c)) fact.channels.push(c);
    return false;
  });
  // A fact's prior weighs it with the turns it carries: they are one hit.
  for (const hit of kept) if (hit.kind === 'FACT') hit.score *= factPrior(hit.id);
  // A stale turn (what it said was superseded) hands its relevance to the current fact that
  // superseded it (a question about the old belief is a question about the belief: "which editor?"
  // matches "I use vim" better than "I switched to neovim") and ranks below it.
  const factHit = new Map(kept.filter((h) => h.kind === 'FACT').map((h) => [h.id, h]));
  for (const hit of kept) {
    if (hit.kind !== 'EVENT') continue;
    const successors = (staleEvents.get(hit.id) ?? []).map((id) => factHit.get(id)).filter((x): x is MemoryCandidate => x !== undefined);
    if (successors.length === 0) continue;
    const best = successors.reduce((a, b) => (b.score > a.score ? b : a));
    best.score += hit.score;
    for (const c of hit.channels) if (!best.channels.includes(c)) best.channels.push(c);
    hit.score = Math.min(hit.score, best.score * STALE_TURN_FACTOR);
  }
  const order = new Map(kept.map((h, i) => [h, i]));
  return kept.sort((a, b) => b.score - a.score || (order.get(a) as number) - (order.get(b) as number));
}

/** What `newerFirst` reads of a hit: its text (a fact's statement with the turns it rests on, an event's content) and when it was said. */
export interface DatedText {
  text: string;
  /** When it was said, ms since the epoch: an event's time, the latest of a fact's turns. */
  at: number;
}

/**
 * A page of hits with what was said later first among hits about the same thing (issue 44, item
 * 2): "the user is aiming for about 120 g protein a day" and a later "I'd raise your protein target
 * from 120 g to about 140 g a day", or "Theo found flights to Lisbon" and a later "we scrapped
 * Lisbon, we're going to Kyoto instead", both found for one question: the newer moves just above
 * the highest-ranked older one it is about the same thing as, and takes its score (the page stays
 * ordered by score). Two hits are about the same thing when their texts share at least
 * SAME_THING_KEYS word keys (docs/search.md "Word forms") beyond the roles, the names the
 * question asks about and light verbs, counting names back in only beside such a word. The newer
 * must be said at least SAME_SITTING_MS later (a reply in the same exchange, "Classic cat move:
 * an automatic feeder…", restates rather than replaces) and be found nearly as well, its score at
 * least NEWER_SCORE_SHARE of the older's (a hit far down the page is not lifted over the best
 * answer by one shared word). A question about the past ("When did Caroline go to the support
 * group?", "what was the old name?") wants what was said then, not what was said last: its page
 * is left as it is (`asksAboutThePast`). Only the page's order changes, never which hits are on it.
 * Whatever the question, each hit carries in `updatedBy` the hits of the page said later about
 * the same thing (what may have replaced it), so a reader of the older one knows to look there.
 */
export function newerFirst(page: readonly MemoryCandidate[], dated: (hit: MemoryCandidate) => DatedText | undefined, query: string): MemoryCandidate[] {
  const names = new Set([...askedNames(query)].map((n) => wordKeys(n)[0] ?? n));
  const keyed = page.map((hit) => {
    const d = dated(hit);
    return {
      hit,
      at: d?.at,
      score: hit.score,
      keys: d ? new Set(wordKeys(d.text).filter((k) => !LIGHT_KEYS.has(k))) : new Set<string>(),
      change: d !== undefined && saysAChange(d.text),
    };
  });
  /**
   * `b` is about what `a` is about: they share SAME_THING_KEYS topic keys, or (`loose`) one when
   * `b` says a change ("I quit coffee completely, only green tea now" after "I drink three coffees
   * a day": only "coffee" is shared). Loose is enough to name `b` in `a`'s `updatedBy`, not to
   * reorder the page (measured: lifting on one shared key cost the messy chats Recall@10).
   */
  const sameThing = (a: (typeof keyed)[number], b: (typeof keyed)[number], loose: boolean): boolean => {
    let shared = 0;
    let topical = 0;
    for (const k of a.keys)
      if (b.keys.has(k)) {
        shared++;
        if (!names.has(k)) topical++;
      }
    return topical >= 1 && shared >= (loose && b.change ? 1 : SAME_THING_KEYS);
  };
  const saidLater = (older: (typeof keyed)[number], newer: (typeof keyed)[number], loose = false): boolean =>
    older.at !== undefined && newer.at !== undefined && newer.at - older.at >= SAME_SITTING_MS && sameThing(older, newer, loose);
  for (const older of keyed) {
    const updatedBy = keyed.filter((newer) => newer !== older && saidLater(older, newer, true)).map((newer) => newer.hit.id);
    if (updatedBy.length > 0) older.hit = { ...older.hit, updatedBy };
  }
  if (asksAboutThePast(query)) return keyed.map((k) => k.hit);
  const out = [...keyed];
  for (let j = 1; j < out.length; j++) {
    const newer = out[j] as (typeof keyed)[number];
    if (newer.at === undefined) continue;
    const i = out.findIndex((older, idx) => idx < j && newer.score >= older.score * NEWER_SCORE_SHARE && saidLater(older, newer));
    if (i < 0) continue;
    out.splice(j, 1);
    out.splice(i, 0, newer);
    newer.hit = { ...newer.hit, score: Math.max(newer.hit.score, (out[i + 1] as (typeof keyed)[number]).hit.score) };
  }
  return out.map((k) => k.hit);
}

/**
 * Whether a question asks about the past rather than what holds now: a past auxiliary ("did",
 * "was", "were", "had"), "used to", or words that point back ("ago", "last", "before", "first",
 * "previous", "old", "former", "originally").
 */
export function asksAboutThePast(query: string): boolean {
  return PAST_QUESTION.test(query);
}

const PAST_QUESTION =
  /\b(?:did|didn't|was|wasn't|were|weren't|had|hadn't|used to|ago|last|before|first|previous(?:ly)?|old|former(?:ly)?|originally|initially)\b/i;

/** Word keys two hits must share to be about the same thing (`newerFirst`). */
export const SAME_THING_KEYS = 2;
/** How much later a hit must be said to come first (`newerFirst`): an hour, past the exchange it answers. */
export const SAME_SITTING_MS = 60 * 60 * 1000;
/** The least share of the older hit's fused score a newer one needs to come first (`newerFirst`). */
export const NEWER_SCORE_SHARE = 0.5;

/** Keys that name no topic: the roles every statement names, and verbs of any sentence. */
const LIGHT_KEYS: ReadonlySet<string> = new Set(
  wordKeys(
    'user users assistant go goes going went gone get gets got getting make makes made making say says said tell told think thought know knew want wants wanted like likes liked use uses used take took come came give gave really just also now then today yesterday tomorrow day week month year time one two thing things lot well good new old still',
  ),
);

/** A stale turn's score is capped at this share of its successor fact's score (strictly below it). */
export const STALE_TURN_FACTOR = 0.999;

/**
 * What search re-checks against Postgres: the best `perKind` facts and the best `perKind` events
 * of the fused lists. Only these can be hits (and only these facts fold their events).
 */
export function fusedCandidates(
  lists: ChannelLists,
  perKind: number,
  weights: Partial<ChannelWeights> = {},
  k = RRF_K,
): { facts: FusedHit[]; events: FusedHit[] } {
  const fused = fuseByReciprocalRank(lists, k, weights);
  const factIds = new Set(FACT_CHANNELS.flatMap((c) => lists[c].map((h) => h.id)));
  return { facts: fused.filter((h) => factIds.has(h.id)).slice(0, perKind), events: fused.filter((h) => !factIds.has(h.id)).slice(0, perKind) };
}

/**
 * The whole ranking of searchMemory over the channels' lists, given which hits passed the checks
 * against Postgres (`visible`): weighted reciprocal rank fusion, then folding (a raw event carried
 * by a fact hit adds to it) and the stale-turn rule. Pure, so benchmarks and specs run it as is.
 */
export function rankMemoryHits(
  lists: ChannelLists,
  visible: (id: string) => boolean,
  weights: Partial<ChannelWeights> = {},
  priors: RankingPriors = {},
  k = RRF_K,
): MemoryCandidate[] {
  const fused = fuseByReciprocalRank(lists, k, weights).filter((h) => visible(h.id));
  const factEvents = new Map<string, string[]>();
  for (const c of FACT_CHANNELS) for (const h of lists[c]) if (visible(h.id)) factEvents.set(h.id, h.events ?? []);
  const stale = new Map<string, string[]>();
  for (const c of EVENT_CHANNELS) for (const h of lists[c]) if ((h.supersededBy ?? []).length > 0) stale.set(h.id, h.supersededBy ?? []);
  return foldEventsIntoFacts(fused, factEvents, stale, priors);
}

/**
 * How much a raw turn can say, 0..1, from its text alone: a turn with no content word ("?", "ok",
 * "lol", an emoji) says nothing (`EMPTY_TURN`), a bare question asks rather than tells, and one or
 * two words say little. Search multiplies an event hit's fused score by it, so such turns cannot
 * outrank an informative one through a shared name or a generic word. A leading speaker label
 * (`splitSpeakerLabel`) is not content, and neither are the names the question asks about
 * (`askedNames`, lowercased): "KAT" or "Jamie!!" matches a question about Kat or Jamie by the name
 * alone and says nothing about them, though it is about them (`NAME_ONLY_TURN`, above an empty
 * turn, so a bare "Jamie: ?" cannot rank by its speaker's name over it either).
 */
export function eventInformation(content: string, actor: string | null, askedNames: ReadonlySet<string> = NO_NAMES): number {
  // Neither the speaker's label nor the name the turn addresses ("Kat!! how did it go") is content.
  const text = withoutVocative(splitSpeakerLabel(content, actor).body);
  const said = (
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? []
  ).filter((w) => !STOP_WORDS.has(w) && !LOW_INFORMATION.has(w));
  if (said.length === 0) return EMPTY_TURN;
  const words = said.filter((w) => !askedNames.has(w.replace(/'s$/, '')));
  if (words.length === 0) return NAME_ONLY_TURN;
  const question = asks(text) && !/[.!]\s/.test(text);
  const byWords = words.length === 1 ? 0.6 : words.length === 2 ? 0.8 : 1;
  return byWords * (question ? 0.7 : 1);
}

const NO_NAMES: ReadonlySet<string> = new Set();

/** `eventInformation` of a turn with no content word. */
export const EMPTY_TURN = 0.1;
/** `eventInformation` of a turn whose only content words are names the question asks about. */
export const NAME_ONLY_TURN = 0.25;

/**
 * The names a question asks about, lowercased: its capitalised words after the first ("What
 * weekend did Jamie propose?", "Where will they celebrate Kat's new job?" → jamie, kat), without
 * "I" and a possessive "'s". A question written in lower case names none this way.
 */
export function askedNames(question: string): Set<string> {
  const words = question.normalize('NFKC').match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu) ?? [];
  const names = new Set<string>();
  words.slice(1).forEach((w) => {
    if (/^\p{Lu}/u.test(w) && w !== 'I' && !/^I['’]/.test(w)) names.add(w.toLowerCase().replace(/['’]s$/, ''));
  });
  return names;
}

/**
 * How a fact fits a question by its polarity: a negated fact ("The user does not like country
 * music") answers a question about what someone does not do, likes or has; asked what they do
 * like ("What music does the user like?"), it names something else than what was asked, so it is
 * weighed at NEGATED_FACT_FACTOR: the positive fact ranks first and the negated one stays among
 * the hits. A question that itself negates, or asks about avoiding, stopping or disliking, weighs
 * both alike, and so does a yes-or-no question ("Does the user like country music?"), which the
 * negated fact answers as well as a positive one would.
 */
export function factPolarity(fact: { isNegation: boolean }, query: string): number {
  return fact.isNegation && !NEGATIVE_QUESTION.test(query) && !asksYesOrNo(query) ? NEGATED_FACT_FACTOR : 1;
}

export const NEGATED_FACT_FACTOR = 0.5;

const NEGATIVE_QUESTION =
  /\b(?:not|no|never|n't|dislikes?|disliked|hates?|hated|avoids?|avoided|allergic|allerg(?:y|ies)|intoleran\w*|can'?t|cannot|won'?t|stand|stop(?:s|ped)?|quit|gave up|give up|no longer|any ?more|used to|anymore|refuses?|against)\b|n't\b/i;

/** Chat words that carry nothing (beside English stop words). */
const LOW_INFORMATION: ReadonlySet<string> = new Set(
  'ok okay k kk yes yeah ya yep yup no nope nah lol lmao haha hahaha hehe hmm hm wow oh ah cool nice great thanks thx ty sure right'.split(' '),
);

/** Lucene's reserved characters (the classic query parser), escaped with a backslash. */
const LUCENE_SPECIAL = /[+\-&|!(){}[\]^"~*?:\\/]/g;

export function escapeLucene(term: string): string {
  return term.replace(LUCENE_SPECIAL, (c) => `\\${c}`);
}

/** Words that carry no topic ("what", "did", "the", …): a keyword query is better off without them (docs/search.md). */
const STOP_WORDS: ReadonlySet<string> = new Set(ENGLISH_STOP_WORDS);

/**
 * The generic subjects of this memory's own statements: every fact from a user's message reads
 * "The user …", so "user" in a question would match (and rank) all of them, and name the "user"
 * entity in the graph channel. Left out of keyword queries like stop words; the question's other
 * words decide.
 */
const ROLE_WORDS: ReadonlySet<string> = new Set(['user', "user's", 'users', 'assistant', "assistant's"]);

/**
 * The question with the names the user or the assistant go by ("I'm Maya btw" made "Maya" an alias
 * of the user) put back as the role its statements use: "What is Maya's cat called?" asks about
 * "the user's cat", which is how every fact from her messages reads. Left as a name, it matched
 * by word and by meaning only what happened to mention it ("The user's name is Maya", the
 * assistant's "Hi Maya"), ahead of what answers. `names` maps a lowercased name to its role ("the
 * user", "the assistant"); whole words only, a possessive kept.
 */
export function withRoleNames(query: string, names: ReadonlyMap<string, string>): string {
  if (names.size === 0) return query;
  const alternatives = [...names.keys()].sort((a, b) => b.length - a.length).map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const re = new RegExp(`(?<![\\p{L}\\p{N}])(${alternatives.join('|')})(?![\\p{L}\\p{N}])`, 'giu');
  return query.replace(re, (m: string) => names.get(m.toLowerCase()) ?? m);
}

/**
 * A safe Lucene query for free text: its words (letters and digits, lowercased so AND/OR/NOT are
 * never operators) without English stop words, escaped, de-duplicated, at most `maxTerms`, ORed.
 * The analyzers keep most question words ("what", "did"), which then match half the log; a query
 * made only of stop words ("who are you?") keeps them all. Null when no word is left.
 */
export function toLuceneQuery(text: string, maxTerms = 32): string | null {
  const words = [
    ...new Set(
      text
        .normalize('NFKC')
        .toLowerCase()
        .match(/[\p{L}\p{N}_]+/gu) ?? [],
    ),
  ];
  // One letter left of a contraction ("user's", "don't") is no topic either.
  const topical = words.filter((w) => !STOP_WORDS.has(w) && !ROLE_WORDS.has(w) && !/^\p{L}$/u.test(w));
  const terms = (topical.length > 0 ? topical : words).slice(0, maxTerms).map(escapeLucene);
  return terms.length > 0 ? terms.join(' ') : null;
}

export type MemoryHitKindName = 'FACT' | 'EVENT';

export interface SearchFilterInput {
  /** Which kinds of hit to search for; default both. */
  kinds?: readonly MemoryHitKindName[] | null;
  factTypes?: readonly string[] | null;
  entityId?: string | null;
  minImportance?: number | null;
  includeSuperseded?: boolean | null;
}

/**
 * The same filter search applies in Cypher, on a Postgres row: hits are re-checked against the
 * current Silver state, which may be ahead of the projection. Visibility (current, asOf,
 * includeSuperseded) is the shared rule of src/silver/visibility.ts.
 */
export function matchesSearchFilter(f: Fact, namespace: string, filter: SearchFilterInput, asOf: Date | null): boolean {
  if (f.namespace !== namespace) return false;
  if (filter.factTypes && filter.factTypes.length > 0 && !filter.factTypes.includes(f.factType)) return false;
  if (filter.entityId && f.subjectEntityId !== filter.entityId && f.objectEntityId !== filter.entityId) return false;
  if (filter.minImportance !== null && filter.minImportance !== undefined && !(f.importance >= filter.minImportance)) return false;
  return isVisible(f, { asOf, includeRetired: filter.includeSuperseded ?? false });
}
