import { OFFLINE_RULES_MODEL } from './rule-set';
import nlp from 'compromise';
import { asks } from '../../common/chat-question';
import type { ExtractedFact, ExtractionContext, ExtractionEvent, ExtractionResult, Extractor, ModelProvenance, Span } from '../../silver/model-ports';
import { ENTITY_TYPES, FACT_TYPES, RELATIONSHIP_TYPES, type EntityType } from '../../silver/ontology';
import { EntityRegistry, WorkingEntity } from './entity-registry';
import { CONFIDENCE, confidenceOf, FactCollector, NewFact } from './fact-collector';
import { findTech, lookupTech } from '../../silver/vocabulary/gazetteer';
import { relationPredicate } from './pattern-words';
import { applyRules, Draft, HEDGES, Range } from './patterns';
import { applyThirdPerson } from './third-person-patterns';
import { Clause, findTime, normaliseQuotes, parse, Parsed, splitClauses, timeRanges, Token } from './segments';
import { cleanObject, splitItems } from './object-phrases';
import { generalClause, GeneralFact } from './general-clauses';
import { addresseeOf, bodyStart, Parties, possessive, rewritePersons, speakerOf, speaksToAssistant } from './speaker';
import { relativePhrase, resolveTimes, writeOutTimes } from './time-phrase';

/** An assistant sentence that reports an action or a finding: "I've booked …", "I set a reminder …", "I recommend …", "You agreed to …". */
const ASSISTANT_REPORT =
  /^(?:\W*(?:done|ok(?:ay)?|sure|great|all set)\b[\s,:!.-]*)?(?:i(?:'ve| have)?\s+(?:just\s+|also\s+)?(?:booked|reserved|ordered|set|scheduled|added|created|sent|saved|cancell?ed|moved|paid|bought|found|noted|updated|recommend(?:ed)?|suggest(?:ed)?)|you(?:'ve| have)?\s+(?:agreed|decided|chose|chosen|picked|booked|ordered|asked|said|told)|we\s+(?:agreed|decided))\b/i;

/**
 * "[also|and|btw …] [When/If you …[,]] [please|pls] [always|never|don't] <verb> …": an instruction
 * to the assistant ("also pls answer in bullet points", "and when you give me code use plain
 * JavaScript", "just write normally").
 */
const INSTRUCTION = new RegExp(
  String.raw`^(?:(?:oh|ok|okay|so|and|also|plus|btw|by the way|one more thing|just|actually|honestly)\b[\s,:-]*)*` +
    String.raw`(?:(?<cond>(?:when|whenever|if)\s+you\b[^,]{1,80}?)(?:,\s*|\s+(?=(?:please|pls|plz|always|never|don't|do not|keep|use|write|reply|answer|respond|give|format|stop|start)\b)))?` +
    String.raw`(?:(?:please|pls|plz)\s+)?(?<act>(?:(?:always|never|don't|do not)\s+)?(?:keep|use|pick|choose|write|reply|answer|respond|call|address|book|send|give|avoid|remember|make|format|include|add|mention|stop|start|speak|talk|show|list|sort|round|switch|stick|be)\b.{2,160})$`,
  'i',
);

/**
 * A request asked as a question that sets how to answer from now on ("can you switch to metric for
 * me?", "could you stop with the bullet lists btw?"); a one-off request ("can you give me a
 * recipe?") is not a preference, so only verbs that change a way of answering count.
 */
const STANDING_REQUEST =
  /^(?:(?:oh|ok|okay|so|and|also|btw|running question|quick one|one more thing)\b[\s,:-]*)*(?:can|could|would|will)\s+you\s+(?:please\s+|pls\s+)?(?<act>(?:switch|stop|start|keep|always|never|stick)\b.{2,160}?)[\s?!.]*$/i;

/**
 * An assistant's confirmation of a standing instruction: "Got it, I'll write all code examples in
 * TypeScript from now on", "Sure, I'll use metric from now on: kilometers for distance, …", "Got it,
 * short paragraphs from now on, no bullet lists", "Going forward I'll call the app Stockpot". What it
 * agrees to do is how the user wants to be served, even when the user's own words were a question
 * or a remark the rules could not read. A plain promise without the standing marker ("I'll send it
 * tomorrow") is not one.
 */
const STANDING_ACK_LEAD = String.raw`^(?:[-*•]\s+)?(?:(?:got it|gotcha|sure(?: thing)?|ok(?:ay)?|noted|understood|will do|of course|absolutely|no problem|alright|all right|done|perfect|great|you got it|sounds good|makes sense)\b[\s,.!:;-]*)*`;
const STANDING_MARK = String.raw`(?:from now on|going forward|from here on(?: out)?|in (?:the )?future|for future (?:answers|replies|messages))`;
const WILL = String.raw`(?:i'll|i will|i'm going to|i am going to|i'm gonna|will)\s+(?:(?:also|now|only|always)\s+)*`;
const STANDING_ACK = [
  // "<ack>, I'll <act> from now on[, <detail>]" and "<ack>, <what> from now on[, <detail>]"
  new RegExp(
    `${STANDING_ACK_LEAD}(?:${WILL}(?<act>(?!be\\b).{2,120}?)|(?<what>(?!(?:i|you|we|it|this|that|there|they)\\b)[^,.!?]{2,80}?))\\s+${STANDING_MARK}(?<rest>\\s*[,:;]\\s*.{2,100}?)?[\\s.!]*$`,
    'i',
  ),
  // "<ack>, from now on I'll <act>"
  new RegExp(`${STANDING_ACK_LEAD}${STANDING_MARK}[\\s,]+${WILL}(?<act>(?!be\\b).{2,160}?)[\\s.!]*$`, 'i'),
];

/**
 * "I'm vegetarian, any recipe ideas?": a first-person statement, a comma, then the question; also
 * after a short lead that names the topic ("different topic, my sister Anjali is visiting from
 * Denver next month, good day trips near the bay?", "random q, I'm allergic to shellfish, …").
 */
const STATEMENT_BEFORE_QUESTION =
  /^\s*(?:(?:different|other|another|new|unrelated|random|quick|side|off)(?:\s+[a-z]+){0,2}\s*[,:-]\s*)?(?<head>(?:(?:ok|okay|so|and|also|btw|hey|hi)\b[\s,]*)*(?!i (?:have|had|got) a (?:quick |small )?question|i(?: was|'m| am) (?:wondering|curious)|i need (?:some )?(?:help|advice)|i wanted to ask)(?:i|i'm|i've|i'd|my|we|we're|we've|our)\b[^,?]{6,}?),\s+[^,?]+\?[\s?!]*$/i;

/**
 * A statement, a dash, then a question about it: "FYI, I finished another pottery project - want to
 * see a pic?", "I started my own online clothing store not so long ago - pretty cool, huh?".
 */
const QUESTION_AFTER_DASH = /^\s*(?<head>[^?]{12,}?)\s+[-\u2013\u2014]+\s+[^?\u2013\u2014]*\?[\s?!]*$/;

/** What ends an instruction without being part of it: "…, I read these on my phone", "… please", "… btw", "for me". */
const INSTRUCTION_TAIL =
  /(?:,\s+(?:i|i'm|i've|we|we're|it's|the|my|our|since|because|cause|as|so)\b.*|(?:[\s,]+(?:please|pls|plz|btw|thanks|thx|lol|for me))+)[\s.!?]*$/i;

/** A subordinate clause about the speaker or theirs: "… when my son got into an accident", "… since I started transitioning". */
const SUBORDINATE = /\s(?:when|since|because|'cause|after|before|once|until|while)\s+(?=(?:I|we|my|our)\s)/i;

/** The clause after SUBORDINATE in `clause`, or null. */
function subordinate(clause: Clause): Clause | null {
  const text = normaliseQuotes(clause.text);
  const m = SUBORDINATE.exec(text);
  if (!m) return null;
  const at = m.index + m[0].length;
  return { text: clause.text.slice(at), start: clause.start + at, end: clause.end, sentence: clause.sentence, prefix: '' };
}

/** A head count in words or digits (teamSize). */
const HEAD_COUNT =
  '(?<n>\\d{1,4}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?|thirty|forty|fifty)';
/** Words that count people after a number ("seven people", "12 of us", "eight engineers"). */
const PEOPLE = '(?:people|persons|folks|of us|devs|developers|engineers|members)';
/** What a count must not be followed by to count people: "we're 30 years in", "we're 2 weeks out", "we're 5 minutes away". */
const NOT_PEOPLE = String.raw`(?!\s*(?:years?|yrs?|months?|weeks?|days?|hours?|hrs?|minutes?|mins?|seconds?|%|percent|dollars|bucks|k\b|am\b|pm\b|[:.,]\d|miles?|km|points?|games?|sprints?|tickets?|bugs?|issues?|items?|steps?|times?|x\b))`;
/** "we're eleven on the team", "we are 12 people now", "our team is nine now", "my team has eight engineers", "there are 8 of us on the team". */
const TEAM_SIZE = new RegExp(
  String.raw`\b(?:we(?:'re|\s+are)|(?:my|our|the)\s+team(?:'s|\s+is|\s+has(?=\s+\S+\s+${PEOPLE}\b))|there(?:'re|\s+are)(?=\s+(?:now\s+)?\S+\s+(?:of us|people)))\s+(?:now\s+|officially\s+|up to\s+|down to\s+)*${HEAD_COUNT}${NOT_PEOPLE}(?:\s+${PEOPLE})?(?:\s+(?:on|in)\s+(?:the|our|my)\s+team)?(?:\s+now)?(?![\w-])`,
  'i',
);
/** The answer to "How big is the team?": "seven people total incl me", "12 of us". */
const TEAM_SIZE_ANSWER = new RegExp(String.raw`^(?:(?:oh|ok|so|just|only|about|around)\s+)*${HEAD_COUNT}\s+${PEOPLE}\b`, 'i');
const TEAM_SIZE_ASKED = /\bhow\s+(?:big|large|many(?:\s+people)?)\b[^?]*\b(?:team|are you|of you)\b|\bteam\s+size\b|\bhow\s+many\s+people\b/i;
/** A turn that talks of its team or of people joining or leaving ("two contractors started monday so we're nine now"). */
const TEAM_CONTEXT =
  /\b(?:team|teammates?|colleagues?|coworkers?|co-workers?|contractors?|hires?|hired|hiring|joined|joining|left|quit|laid off|headcount|engineers|devs|staff|employees|interns?)\b/i;

/** A question without its question mark ("what is the weather like") states nothing either. */
const QUESTION_START = /^(?:what|how|why|where|when|who|whom|whose|which|do|does|did|is|are|was|were|can|could|would|should|will|shall|may|might|have|has)\b/i;

/**
 * A sentence with a person or a pronoun in it is about the speaker, the addressee or something just
 * mentioned: the general clauses read these, and where they chose to state nothing ("I totally
 * agree", "Hmm, I think I get it", "Before that it was mostly PHP") the sentence is chit-chat or
 * needs its context, not a statement to keep.
 */
const PERSONAL =
  /\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|our|us|you|you're|your|yours|he|she|him|her|his|hers|it|it's|its|they|they're|them|their|that|that's|this|these|those|there|let's)\b/i;

/** Words that do not make a sentence informative on their own. */
const SAID_STOP = new Set(
  'i me my we you it its this that the a an is are was be to of and or but so just really very too lol haha ok okay yes no yeah thanks thank please im good great nice cool fine sure well oh wow what how'.split(
    ' ',
  ),
);

const KIND_TYPE: Partial<Record<string, EntityType>> = { place: 'place', organization: 'organization', project: 'project', person: 'person' };

interface EventCtx {
  ev: ExtractionEvent;
  index: number;
  speaker: () => WorkingEntity;
  speakerName: string;
  parties: Parties;
  /** The turn speaks to the assistant (speaksToAssistant): only then is an imperative an instruction. */
  toAssistant: boolean;
  /** compromise's tags for the spoken text, offsets into the event's content. */
  tokens: Token[];
  /** Index of the event's first fact in the batch's facts. */
  firstFact: number;
  /** The conversation's turn before this one (in the batch, else among the earlier turns), for what it asked. */
  previous: ExtractionEvent | null;
}

/** The offline default extractor: deterministic rules over compromise, chrono-node and a gazetteer. */
export class RuleExtractor implements Extractor {
  readonly model = OFFLINE_RULES_MODEL;
  readonly provenance: ModelProvenance = { adapter: 'offline-rules', promptVersion: null };

  async extract(events: ExtractionEvent[], ctx: ExtractionContext): Promise<ExtractionResult> {
    return new BatchExtraction(ctx).run(events, ctx.earlier ?? []);
  }

  /**
   * compromise and chrono build their lexicons and patterns on first use: the first extraction
   * of a process took about 200 ms more than the next (an idle machine; over a second under load),
   * all of it on the event loop. A short chat read once at start pays it there.
   */
  async warmUp(): Promise<void> {
    const at = new Date(Date.UTC(2026, 0, 1, 9));
    const turn = (id: string, content: string, role: string): ExtractionEvent => ({
      id,
      content,
      kind: 'message',
      role,
      actor: null,
      occurredAt: at,
      conversationId: 'warm-up',
      sequenceNum: Number(id.slice(1)),
    });
    await this.extract(
      [
        turn('w1', "Hi, I'm Sam. I switched to neovim last week and my sister Ana lives in Berlin.", 'user'),
        turn('w2', "I've booked a table for two at Nopa on Friday at 8; she loves it, doesn't she?", 'assistant'),
      ],
      { namespace: 'warm-up', entityTypes: ENTITY_TYPES, relationshipTypes: RELATIONSHIP_TYPES, factTypes: FACT_TYPES },
    );
  }
}

class BatchExtraction {
  private readonly registry = new EntityRegistry();
  private readonly out = new FactCollector();
  private readonly fragments = new Map<string, { text: string; start: number }>();

  constructor(private readonly ctx: ExtractionContext) {}

  run(events: readonly ExtractionEvent[], earlier: readonly ExtractionEvent[] = []): ExtractionResult {
    this.read(events, earlier);
    this.continueFragments(events, earlier);
    this.joinFragments(events);
    const allowedFacts = new Set(this.ctx.factTypes);
    const allowedRels = new Set(this.ctx.relationshipTypes);
    return {
      entities: this.registry.toExtracted(),
      facts: this.out.facts.filter((f) => allowedFacts.size === 0 || allowedFacts.has(f.factType)),
      relationships: this.out.relationships.filter((r) => allowedRels.size === 0 || allowedRels.has(r.type)),
    };
  }

  /** Reads the turns, in order: their entities, facts and fragments. */
  private read(events: readonly ExtractionEvent[], earlier: readonly ExtractionEvent[] = []): void {
    // The last turn read so far per conversation: the earlier turns first, then the batch's.
    const last = new Map(earlier.map((e) => [e.conversationId, e]));
    events.forEach((ev, index) => {
      this.event(ev, index, addresseeOf(events, index), speaksToAssistant(events, index), last.get(ev.conversationId) ?? null);
      last.set(ev.conversationId, ev);
    });
  }

  /**
   * A note typed as fragments that began before the batch (see joinFragments): where a
   * conversation's first turns in the batch are fragments that follow its earlier turns as
   * joinFragments would have joined them, the note as read from the earlier turns is continued:
   * "Meeting w/ legal, thurs 2pm, room 4b", resting on every turn of it. The earlier turns are read
   * apart (their own registry), for this only; the judge then updates the note derived before.
   * A chat that arrives a message at a time is derived a message at a time, so without this a
   * fragment was joined only when the note's turns came in one batch.
   */
  private continueFragments(events: readonly ExtractionEvent[], earlier: readonly ExtractionEvent[]): void {
    for (const conversation of new Set(events.map((e) => e.conversationId))) {
      const turns = events.filter((e) => e.conversationId === conversation);
      const before = earlier.filter((e) => e.conversationId === conversation);
      const last = before[before.length - 1];
      const first = turns[0];
      if (!last || !first || !this.fragments.has(first.id) || this.out.facts.some((f) => f.sources.some((s) => s.eventId === first.id))) continue;
      const reading = new BatchExtraction(this.ctx);
      reading.read(before);
      reading.joinFragments(before);
      const notes = reading.out.facts.filter((f) => f.sources.some((s) => s.eventId === last.id));
      const note = notes[0];
      if (notes.length !== 1 || !note || note.predicate !== 'said') continue;
      const added = this.fragmentsAfter(last, turns);
      if (added.length === 0) continue;
      const statement = joinNote(note.statement, added);
      const count = this.out.facts.length;
      this.valueFact({
        statement,
        factType: note.factType,
        subject: this.registry.upsert(speakerOf(first), 'person', null, null, events.indexOf(first)),
        predicate: note.predicate,
        value: statement,
        confidence: note.confidence,
        validFrom: note.validFrom,
        source: note.sources[0] as Span,
      });
      const fact = this.out.facts[count];
      if (fact) fact.sources.push(...note.sources.slice(1), ...added.map(spanOf));
    }
  }

  /**
   * Notes typed as fragments, one per message ("meeting w/ legal", "thurs 2pm", "room 4b"): a
   * fragment (FRAGMENT_WORDS words or fewer, no verb, not a question, a content word) that follows,
   * from the same speaker within FRAGMENT_GAP_MS, a turn whose only fact was kept as said, adds to
   * that fact: "Meeting w/ legal, thurs 2pm, room 4b", resting on all three turns. Alone, "room 4b"
   * gave no fact, and "which room is the meeting with legal in?" found the meeting without its room.
   */
  private joinFragments(events: readonly ExtractionEvent[]): void {
    for (let i = 0; i < events.length; i++) {
      const head = events[i] as ExtractionEvent;
      const facts = this.out.facts.filter((f) => f.sources.some((s) => s.eventId === head.id));
      const fact = facts[0];
      if (facts.length !== 1 || !fact || fact.predicate !== 'said' || fact.sources.length !== 1) continue;
      const more = this.fragmentsAfter(head, events.slice(i + 1));
      if (more.length === 0) continue;
      fact.statement = joinNote(fact.statement, more);
      fact.objectValue = fact.statement;
      fact.sources.push(...more.map(spanOf));
      i += more.length;
    }
  }

  /**
   * The fragments that continue a note whose last line is `last`: the turns of `next`, in order,
   * of the same conversation and speaker, each within FRAGMENT_GAP_MS of the one before, each a
   * fragment with no fact of its own.
   */
  private fragmentsAfter(last: ExtractionEvent, next: readonly ExtractionEvent[]): NoteLine[] {
    const lines: NoteLine[] = [];
    let prev = last;
    for (const turn of next) {
      if (turn.conversationId !== last.conversationId || turn.role !== last.role || speakerOf(turn) !== speakerOf(last)) break;
      if (turn.occurredAt.getTime() - prev.occurredAt.getTime() > FRAGMENT_GAP_MS) break;
      const fragment = this.fragments.get(turn.id);
      if (!fragment || this.out.facts.some((f) => f.sources.some((s) => s.eventId === turn.id))) break;
      lines.push({ eventId: turn.id, start: fragment.start, end: fragment.start + fragment.text.length, text: fragment.text });
      prev = turn;
    }
    return lines;
  }

  private event(ev: ExtractionEvent, index: number, addressee: string | null, toAssistant: boolean, previous: ExtractionEvent | null): void {
    const speakerName = speakerOf(ev);
    let speaker: WorkingEntity | null = null;
    // "Melanie: I went ..." (the actor's name as a prefix): the rules read what follows it.
    const from = bodyStart(ev.content, ev.actor);
    const parsed = parse(ev.content.slice(from));
    const ectx: EventCtx = {
      ev,
      index,
      speakerName,
      parties: { speaker: speakerName, addressee },
      toAssistant,
      speaker: () => (speaker ??= this.registry.upsert(speakerName, 'person', null, null, index)),
      tokens: parsed.tokens.map((t) => ({ ...t, start: t.start + from, end: t.end + from })),
      firstFact: this.out.facts.length,
      previous,
    };
    this.mentions(ev, index, parsed, from);
    this.noteFragment(ev, parsed, from);
    if (ev.role === 'tool' || ev.role === 'system') return;
    for (const s of parsed.sentences) this.sentence({ text: s.text, start: s.start + from, end: s.end + from }, ev, ectx);
  }

  private sentence(sentence: { text: string; start: number; end: number }, ev: ExtractionEvent, ectx: EventCtx): void {
    if (asks(sentence.text)) {
      // Questions state nothing ("Marco did u ever get the bike" too), but "can you switch to
      // metric?" sets how to answer, and "I'm vegetarian, any recipe ideas?" states before it asks.
      if (ev.role === 'user') this.instruction(sentence, ectx, STANDING_REQUEST);
      const stated = STATEMENT_BEFORE_QUESTION.exec(sentence.text) ?? QUESTION_AFTER_DASH.exec(sentence.text);
      if (stated?.groups?.head && !asks(stated.groups.head)) {
        const at = sentence.text.indexOf(stated.groups.head);
        this.sentence({ text: stated.groups.head, start: sentence.start + at, end: sentence.start + at + stated.groups.head.length }, ev, ectx);
      }
      return;
    }
    // A size said in passing leaves the rest of the sentence to read; an answer to "how big?" is all it says.
    const size = this.teamSize(sentence, ectx);
    if (size === 'answer') return;
    if (size) {
      // …but no other fact of the sentence repeats the count ("… so the user and others are nine
      // now"): it would stay current when the team_size fact is superseded by the next size.
      const count = size.count;
      const added = this.out.facts.length;
      this.readSentence(sentence, ev, ectx);
      this.out.remove(this.out.facts.slice(added).filter((f) => new RegExp(`\\b${count}\\b`, 'i').test(f.statement)));
      return;
    }
    this.readSentence(sentence, ev, ectx);
  }

  /** A statement sentence (not a question, not a team size alone): instructions, acknowledgements, rules, general shapes. */
  private readSentence(sentence: { text: string; start: number; end: number }, ev: ExtractionEvent, ectx: EventCtx): void {
    if (ev.role === 'user' && this.instruction(sentence, ectx, INSTRUCTION)) return;
    if (ev.role === 'assistant' && this.acknowledged(sentence, ectx)) return;
    // General shapes fill sentences the specific rules say nothing about; where a rule spoke,
    // its reading of the sentence stands alone.
    let produced = 0;
    const pending: Array<[GeneralFact, Clause]> = [];
    const silent: Clause[] = [];
    const firstFact = this.out.facts.length;
    for (const whole of splitClauses(sentence)) {
      let clause = whole;
      let r = this.clause(clause, ectx);
      // "We were all freaked when my son got into an accident": where the main clause says nothing
      // to keep, the clause after "when", "since", "because" … may ("Melanie's son got into an accident").
      // Only what happened: "… when I come home" is no fact of its own.
      const sub = r.produced === 0 && !r.general ? subordinate(whole) : null;
      const happened = sub !== null && ectx.tokens.some((t) => t.start >= sub.start && t.end <= sub.end && t.tags.has('PastTense'));
      if (sub && happened) {
        const s2 = this.clause(sub, ectx);
        if (s2.produced > 0 || s2.general) [clause, r] = [sub, s2];
      }
      produced += r.produced;
      if (r.general) pending.push([r.general, clause]);
      if (r.produced === 0) silent.push(clause);
    }
    if (produced > 0) for (const clause of silent) this.whatRemains(clause, this.out.facts.slice(firstFact), ectx);
    if (produced === 0) for (const [g, clause] of pending) this.general(g, clause, ectx, HEDGES.test(sentence.text));
    if (produced === 0 && pending.length === 0 && ev.role === 'user') this.saidStatement(sentence, ectx);
    for (const clause of silent) this.newValue(clause, ectx);
  }

  /** A turn that is a fragment of a note (see joinFragments): its text and where it starts, kept for the join. */
  private noteFragment(ev: ExtractionEvent, parsed: Parsed, from: number): void {
    const body = ev.content.slice(from);
    const text = body.trim().replace(/[.!\s]+$/, '');
    const words = text.split(/\s+/).filter(Boolean);
    if (words.length === 0 || words.length > FRAGMENT_WORDS || /[?[\]]/.test(text) || asks(text)) return;
    if (parsed.tokens.some((t) => t.tags.has('Verb'))) return;
    const content = (text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'/-]*/gu) ?? []).filter((w) => !SAID_STOP.has(w));
    if (content.length === 0) return;
    this.fragments.set(ev.id, { text, start: from + body.indexOf(text) });
  }

  /** Free-text mentions: gazetteer names and compromise's people, organisations and places. */
  private mentions(ev: ExtractionEvent, index: number, parsed: Parsed, from: number): void {
    const span = (start: number, end: number): Span => ({ eventId: ev.id, start: start + from, end: end + from });
    const content = ev.content.slice(from);
    for (const hit of findTech(content)) this.registry.upsert(hit.entry.name, hit.entry.type, hit.entry.category, span(hit.start, hit.end), index, hit.text);
    const doc = parsed.doc;
    const groups: Array<[EntityType, unknown]> = [
      ['person', doc.people().json({ offset: true })],
      ['organization', doc.organizations().json({ offset: true })],
      ['place', doc.places().json({ offset: true })],
    ];
    for (const [type, json] of groups) {
      for (const item of json as Array<{ text: string; offset?: { start: number; length: number } }>) {
        if (!item.offset) continue;
        const cleaned = cleanProperName(content, item.offset.start, item.offset.start + item.offset.length);
        if (!cleaned || lookupTech(cleaned.text) || (type === 'person' && ev.actor && cleaned.text === ev.actor && false)) continue;
        this.registry.upsert(cleaned.text, type, null, span(cleaned.start, cleaned.end), index);
      }
    }
  }

  /** Facts of one clause by the rules; a general-shape fact comes back pending (see event()). */
  private clause(clause: Clause, e: EventCtx): { produced: number; general: GeneralFact | null } {
    const text = clause.prefix + normaliseQuotes(clause.text);
    const abs = (i: number): number => clause.start + Math.max(0, Math.min(i - clause.prefix.length, clause.text.length));
    const hedged = HEDGES.test(clause.sentence.text);
    const matches = applyRules(text);
    let produced = 0;
    for (const match of matches) {
      let draft = match.draft;
      if ((match.rule === 'will' || match.rule === 'progressive') && !this.futureTime(text, e.ev.occurredAt)) {
        const ongoing = match.rule === 'progressive' ? ongoingPlan(draft, text, e.parties) : null;
        if (!ongoing) continue;
        draft = ongoing;
      }
      produced += this.draft(draft, clause, text, abs, e, hedged || draft.hedged, null);
    }
    if (produced > 0) return { produced, general: null };
    // An assistant's turn states facts about the user's world only where it reports what it did or
    // found ("I've reserved a table at Nopa", "I recommend the Hornet", "You agreed to launch on
    // June 3"); its other sentences (offers, pleasantries) are not memory.
    if (e.ev.role === 'assistant') return { produced, general: ASSISTANT_REPORT.test(text) ? this.generalOf(clause, text, e) : null };
    if (e.ev.role !== 'user') return { produced, general: null };
    const third = applyThirdPerson(text);
    const before = this.out.facts.length;
    if (third) this.thirdPerson(third, clause, text, abs, e, hedged);
    produced += this.out.facts.length - before;
    if (produced > 0) return { produced, general: null };
    const resolve = (pronoun: string): string | null => this.registry.resolve(pronoun, e.index, clause.start, e.speaker())?.name ?? null;
    return { produced, general: this.generalOf(clause, text, e, resolve) };
  }

  /**
   * An instruction to the assistant ("Please keep replies in Spanish", "When you book flights for
   * me, always pick an aisle seat", "Use metric units") is a preference of the user's about how to
   * be answered or served: "The user wants the assistant to always pick an aisle seat when …".
   */
  private instruction(sentence: { text: string; start: number; end: number }, e: EventCtx, shape: RegExp): boolean {
    if (!e.toAssistant) return false;
    const m = shape.exec(sentence.text.trim());
    if (!m?.groups) return false;
    const { cond } = m.groups as { cond?: string };
    const act = (m.groups.act ?? '').replace(INSTRUCTION_TAIL, '');
    if (act.split(/\s+/).length < 2) return false;
    const parties = { ...e.parties, addressee: e.parties.addressee ?? 'the assistant' };
    const what = rewritePersons(`${act.replace(/[.!\s]+$/, '')}${cond ? ` ${cond.trim().charAt(0).toLowerCase()}${cond.trim().slice(1)}` : ''}`, parties);
    if (!what) return false;
    const subject = e.speaker();
    const source: Span = { eventId: e.ev.id, start: sentence.start, end: sentence.end };
    this.registry.sight(subject, source, e.index);
    const action = what.charAt(0).toLowerCase() + what.slice(1);
    this.want(subject, `${capitalise(e.speakerName)} wants ${parties.addressee} to ${action}`, action, source);
    return true;
  }

  /**
   * How many people the speaker's team is, said in passing ("now that we're eleven on the team
   * standups are getting long", "two contractors started monday so we're nine now", "our team is 12
   * people now") or as the answer to "How big is the team?" ("seven people total incl me"): "The
   * user's team is eleven people", predicate `team_size`, which holds one value, so the judge
   * supersedes the older size. Before, none of these gave a fact, or only "Seven people total incl
   * the user" as said, and "how many people are on the team now?" found the first size first.
   */
  private teamSize(sentence: { text: string; start: number; end: number }, e: EventCtx): 'answer' | { count: string } | null {
    // The assistant repeating a size back ("With eleven people, …") is no new size.
    if (e.ev.role !== 'user') return null;
    const text = normaliseQuotes(sentence.text);
    const asked = e.previous !== null && TEAM_SIZE_ASKED.test(e.previous.content);
    const passing = TEAM_SIZE.exec(text);
    const m = passing ?? (asked ? TEAM_SIZE_ANSWER.exec(text.trim()) : null);
    if (!m?.groups?.n) return null;
    // "we're nine now" counts people where the turn talks of a team or of people joining or leaving.
    const aboutTeam = /\bteam\b|\bof us\b|\bpeople\b/i.test(m[0]) || asked || TEAM_CONTEXT.test(e.ev.content);
    if (!aboutTeam) return null;
    const n = m.groups.n.toLowerCase();
    const subject = e.speaker();
    const source: Span = { eventId: e.ev.id, start: sentence.start, end: sentence.end };
    this.registry.sight(subject, source, e.index);
    this.valueFact({
      statement: `${capitalise(e.speakerName)}'s team is ${n} people`,
      factType: 'attribute',
      subject,
      predicate: 'team_size',
      value: `${n} people`,
      source,
    });
    // "our team is 12 people now" says nothing else: the general clauses would say it again.
    const rest = passing ? `${text.slice(0, passing.index)} ${text.slice(passing.index + passing[0].length)}` : '';
    return (rest.match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !SAID_STOP.has(w.toLowerCase())).length > 1 ? { count: n } : 'answer';
  }

  /** A fact whose object is a value, not an entity, stated positively, replacing nothing named (confidence: general by default). */
  private valueFact(
    f: Pick<NewFact, 'statement' | 'factType' | 'subject' | 'predicate' | 'value' | 'source'> & Partial<Pick<NewFact, 'confidence' | 'validFrom'>>,
  ): void {
    this.out.add({
      ...f,
      objectEntity: null,
      isNegation: false,
      confidence: f.confidence ?? CONFIDENCE.general,
      validFrom: f.validFrom ?? null,
      replaces: null,
    });
  }

  /** A way the user wants to be served (`wants`, many values: instruction, acknowledged). */
  private want(subject: WorkingEntity, statement: string, value: string, source: Span): void {
    this.valueFact({
      statement,
      factType: 'preference',
      subject,
      predicate: 'wants',
      value,
      source,
    });
  }

  /**
   * The assistant agrees to serve the user a way from now on (STANDING_ACK): a preference of the
   * user's, as if the user had given the instruction: "The user wants the assistant to write all
   * code examples in TypeScript, with types", "The user wants short paragraphs, no bullet lists".
   */
  private acknowledged(sentence: { text: string; start: number; end: number }, e: EventCtx): boolean {
    const text = normaliseQuotes(sentence.text).trim();
    const m = STANDING_ACK.map((re) => re.exec(text)).find((x) => x?.groups);
    if (!m?.groups) return false;
    const { act, what, rest } = m.groups as { act?: string; what?: string; rest?: string };
    const detail = rest ? `, ${rest.replace(/^\s*[,:;]\s*/, '').replace(/[.!\s]+$/, '')}` : '';
    const phrase = rewritePersons(`${(act ?? what ?? '').trim()}${detail}`, e.parties);
    const user = e.parties.addressee;
    if (!phrase || !user || (act && phrase.split(/\s+/).length < 2)) return false;
    const value = phrase.charAt(0).toLowerCase() + phrase.slice(1);
    const subject = this.registry.upsert(user, 'person', null, null, e.index);
    const source: Span = { eventId: e.ev.id, start: sentence.start, end: sentence.end };
    this.registry.sight(subject, source, e.index);
    this.want(subject, act ? `${capitalise(user)} wants ${e.speakerName} to ${value}` : `${capitalise(user)} wants ${value}`, value, source);
    return true;
  }

  /**
   * What is left after a stop: "I quit coffee last month, only green tea now", "stopped using
   * Windows, just Linux these days", "I quit coffee, it's green tea in the morning now". The clause
   * has no verb of its own; it takes the stopped fact's predicate, positively, for the same
   * subject: "The user now uses only green tea". Without
   * it the new belief had no fact, and the question "what does the user drink now?" found only
   * what was given up.
   */
  private whatRemains(clause: Clause, siblings: readonly ExtractedFact[], e: EventCtx): void {
    const m = REMAINS.exec(normaliseQuotes(clause.text).trim());
    const stopped = siblings.find((f) => f.isNegation && f.predicate && f.subjectRef !== null);
    if (!m?.groups || !stopped?.predicate) return;
    const what = rewritePersons(m.groups.obj.trim(), e.parties);
    if (!what || what.length > 80) return;
    const subject = e.speaker();
    if (subject.ref !== stopped.subjectRef) return;
    const source: Span = { eventId: e.ev.id, start: clause.start, end: clause.start + clause.text.length };
    this.registry.sight(subject, source, e.index);
    const verb = stopped.predicate.replace(/_/g, ' ');
    this.valueFact({
      statement: `${capitalise(e.speakerName)} now ${verb}${m.groups.only ? ' only' : ''} ${what}`,
      factType: stopped.factType,
      subject,
      predicate: stopped.predicate,
      value: what,
      validFrom: stopped.validFrom,
      source,
    });
  }

  /**
   * The new value after a change said in an earlier sentence of the turn: "marketing renamed the
   * app lol. it's Stockpot now", "I changed my number, it's 555-0199 now" → "The app is now
   * Stockpot", "The user's number is now 555-0199". Without it the change had no value: the fact
   * said only that something was renamed, and the question "what is the app called?" found the
   * old name first.
   */
  private newValue(clause: Clause, e: EventCtx): void {
    // The value is said first ("it's Stockpot now, the old name was taken …").
    const m = NEW_VALUE.exec((normaliseQuotes(clause.text).split(/[,;]/)[0] ?? '').trim());
    const before = this.out.facts.slice(e.firstFact).filter((f) => f.sources.every((s) => s.start < clause.start));
    if (!m?.groups?.value || before.length === 0) return;
    const change = [...before].reverse().find((f) => !f.isNegation && CHANGED_THING.test(f.statement));
    const thing = change ? CHANGED_THING.exec(change.statement)?.groups?.thing : undefined;
    const value = rewritePersons(m.groups.value.trim(), e.parties);
    if (!change || !thing || !value || value.length > 60) return;
    const subject = e.speaker();
    const source: Span = { eventId: e.ev.id, start: clause.start, end: clause.start + clause.text.length };
    this.registry.sight(subject, source, e.index);
    this.valueFact({
      statement: `${capitalise(thing)} ${/[^s]s$/.test(thing) ? 'are' : 'is'} now ${value}`,
      factType: 'attribute',
      subject,
      predicate: 'is',
      value,
      validFrom: change.validFrom,
      source,
    });
  }

  /**
   * The last resort for an informative sentence no rule read ("The grant proposal is due on
   * December 15", "the flight is actually on Wednesday", "new number: 555-0199"): the sentence
   * itself, persons rewritten ("my" → "the user's") and relative times written out, as a fact of
   * the speaker's at a confidence below promotion's. Without it such a turn had no fact, so it
   * could neither supersede an older belief nor rank as one.
   */
  private saidStatement(sentence: { text: string; start: number; end: number }, e: EventCtx): void {
    const text = sentence.text.trim().replace(/[.!\s]+$/, '');
    const body = text.replace(/^(?:(?:ok(?:ay)?|so|well|oh|sorry|btw|fyi|anyway|also|and|but|wait|hey|hi|yeah|yes|no)\b[\s,:!-]*)+/i, '');
    const words = (body.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? []).filter((w) => !SAID_STOP.has(w));
    if (words.length < 2 || /[[\]]/.test(body) || body.length > 240 || QUESTION_START.test(body) || PERSONAL.test(body)) return;
    if (/!\s*$/.test(sentence.text)) return; // an exclamation is a reaction
    // A request ("order more printer paper", "remind me about the dentist") asks; it does not state.
    const first = e.tokens.find((t) => t.start >= sentence.start + (sentence.text.length - sentence.text.trimStart().length) + (text.length - body.length));
    // "rent here is $2,100" is no request: a verb that is followed by "is" names a thing.
    const namesAThing = /^\S+(?:\s+\S+){0,2}?\s+(?:is|are|was|were)\b/i.test(body);
    if (first && !namesAThing && (first.tags.has('Imperative') || (first.tags.has('Infinitive') && !first.tags.has('Noun')))) return;
    // A statement has a verb ("The grant proposal is due …"), or is a label and its value ("new number: 555-0199").
    const inSentence = e.tokens.filter((t) => t.start >= sentence.start && t.end <= sentence.end);
    // A bare infinitive is no verb of a statement: compromise tags unknown words so ("Mostly fzf and fugitive").
    if (!inSentence.some((t) => t.tags.has('Verb') && !t.tags.has('Infinitive')) && !/^[^:]{2,40}:\s*\S*[\p{Lu}\p{N}]/u.test(body)) return;
    const written = rewritePersons(writeOutTimes(body, resolveTimes(body, e.ev.occurredAt, 'any')), e.parties);
    if (!written) return;
    const subject = e.speaker();
    const source: Span = { eventId: e.ev.id, start: sentence.start, end: sentence.end };
    this.registry.sight(subject, source, e.index);
    const statement = capitalise(written);
    this.valueFact({
      statement,
      factType: 'other',
      subject,
      predicate: 'said',
      value: statement,
      confidence: CONFIDENCE.said,
      source,
    });
  }

  /** The general-shape fact of a clause (general-clauses.ts), read with the event's own tagging. */
  private generalOf(clause: Clause, text: string, e: EventCtx, resolve?: (pronoun: string) => string | null): GeneralFact | null {
    const abs = (i: number): number => clause.start + Math.max(0, Math.min(i - clause.prefix.length, clause.text.length));
    // Words of the clause text from offset `from` on, as tagged in the whole event.
    const tagged = (from: number) => {
      const at = abs(from);
      return e.tokens.filter((t) => t.start >= at && t.start < clause.end).map((t) => ({ ...t, start: t.start - at, end: t.end - at }));
    };
    return generalClause(text, e.parties, e.ev.occurredAt, clause.prefix ? undefined : tagged, resolve);
  }

  private general(g: GeneralFact, clause: Clause, e: EventCtx, hedged: boolean): void {
    const addressee = g.about === 'addressee' ? e.parties.addressee : null;
    const subject = addressee ? this.registry.upsert(addressee, 'person', null, null, e.index) : e.speaker();
    const source: Span = { eventId: e.ev.id, start: clause.start, end: clause.end };
    this.registry.sight(subject, source, e.index);
    let confidence: number = hedged ? Math.min(CONFIDENCE.general, CONFIDENCE.hedgedCap - 0.1) : CONFIDENCE.general;
    if (addressee || g.opinion) confidence -= CONFIDENCE.corefPenalty; // said about the other party, or a view
    confidence = Math.round(confidence * 100) / 100;
    this.out.add({
      statement: g.statement,
      factType: g.factType,
      subject,
      predicate: g.predicate,
      value: g.object,
      objectEntity: null,
      isNegation: g.isNegation,
      confidence,
      validFrom: g.time?.date.toISOString() ?? null,
      replaces: null,
      source,
    });
  }

  private futureTime(text: string, ref: Date): boolean {
    const t = findTime(text, ref, 'any');
    return t !== null && new Date(t.iso).getTime() >= ref.getTime() - 60_000;
  }

  private thirdPerson(
    match: NonNullable<ReturnType<typeof applyThirdPerson>>,
    clause: Clause,
    text: string,
    abs: (i: number) => number,
    e: EventCtx,
    hedged: boolean,
  ): void {
    const np = match.draft.subject;
    let subject: WorkingEntity | null;
    let coref = false;
    if (match.relative) {
      subject = this.registry.upsert(
        match.relative.name.text,
        'person',
        null,
        { eventId: e.ev.id, start: abs(match.relative.name.start), end: abs(match.relative.name.end) },
        e.index,
      );
      const pred = relationPredicate(match.relative.word);
      const rel: Draft = {
        ...match.draft,
        factType: 'relationship',
        predicate: pred,
        object: match.relative.name,
        subject: 'speaker',
        template: `{S}'s ${match.relative.word.toLowerCase()} is {O}`,
        objectKind: 'person',
      };
      this.draft(rel, clause, text, abs, e, hedged, null);
    } else {
      const resolved = this.registry.resolve(np.text, e.index, abs(np.start), e.speaker());
      if (!resolved && /^(?:it|they|he|she)$/i.test(np.text)) return; // an unresolved pronoun names no subject
      coref = resolved !== null && /^(?:it|they|he|she|the |our |my )/i.test(np.text);
      subject = resolved ?? this.subjectEntity(np.text, match.draft, e, abs(np.start), abs(np.end));
    }
    if (!subject) return;
    this.registry.noteSubject(subject, e.index);
    // "<X> is written in Go and depends on Kafka": the second verb phrase shares the subject.
    const obj = match.draft.object;
    const cont = /\s+and\s+(?=(?:also\s+)?(?:depends|relies|runs|uses|is|was)\b)/.exec(obj.text);
    const first: Draft = cont
      ? { ...match.draft, object: { text: obj.text.slice(0, cont.index), start: obj.start, end: obj.start + cont.index } }
      : match.draft;
    // "the repo is a pnpm monorepo": an is-a naming technologies is a usage.
    // An ordinary word matched only case-insensitively ("a way to express ...") names no technology.
    const hits = first.predicate === 'is_a' ? findTech(first.object.text, true).filter((h) => !h.entry.ambiguous || h.text === h.entry.name) : [];
    const adjusted: Draft = hits.length > 0 ? { ...first, factType: 'relationship', predicate: 'uses', template: '{S} uses {O}', objectKind: 'tech' } : first;
    if (adjusted.predicate === 'is_a' && !coref && subject.type !== 'person' && subject.type !== 'project') return;
    this.draft(adjusted, clause, text, abs, e, hedged, { entity: subject, coref });
    if (cont) {
      const restStart = obj.start + cont.index + cont[0].length;
      const synthetic = `it ${text.slice(restStart)}`;
      const again = applyThirdPerson(synthetic);
      if (!again) return;
      const shift = restStart - 3;
      const mapped: Draft = { ...again.draft, object: { ...again.draft.object, start: again.draft.object.start + shift, end: again.draft.object.end + shift } };
      this.draft(mapped, clause, text, abs, e, hedged, { entity: subject, coref });
    }
  }

  private subjectEntity(np: string, draft: Draft, e: EventCtx, start: number, end: number): WorkingEntity | null {
    const mention: Span = { eventId: e.ev.id, start, end };
    const tech = lookupTech(np);
    if (tech) return this.registry.upsert(tech.name, tech.type, tech.category, mention, e.index, np);
    const known = this.registry.findByName(np);
    if (known) {
      this.registry.sight(known, mention, e.index);
      return known;
    }
    const desc = /^(?:the|our|my|their)\s+(.+)$/i.exec(np);
    if (desc) return this.registry.upsert(`${possessive(e.speakerName)} ${desc[1] as string}`, 'project', null, mention, e.index, np);
    if (!/^[A-Z]/.test(np)) return null;
    const type: EntityType = draft.objectKind === 'organization' || draft.objectKind === 'place' || draft.predicate === 'is_a' ? 'person' : 'project';
    return this.registry.upsert(np, type, null, mention, e.index);
  }

  /** Turns one draft into facts (one per object item); returns how many it produced. */
  private draft(
    draft: Draft,
    clause: Clause,
    text: string,
    abs: (i: number) => number,
    e: EventCtx,
    hedged: boolean,
    third: { entity: WorkingEntity; coref: boolean } | null,
  ): number {
    const subject = third ? third.entity : e.speaker();
    const subjectName = third ? third.entity.name : e.speakerName;
    const times = draft.predicate === 'birthday' ? [] : timeRanges(text, e.ev.occurredAt);
    const time = draft.timed ? findTime(text, e.ev.occurredAt) : null;
    const items = splitItems(draft, text, times);
    let n = 0;
    for (const item of items) {
      let coref = third?.coref ?? false;
      let objectEntity: WorkingEntity | null = null;
      let value = item.text;
      const resolved = /^(?:it|them|him|her|they|the\s+\w+|our\s+\w+|my\s+\w+)$/i.test(item.text)
        ? this.registry.resolve(item.text, e.index, abs(item.start), e.speaker())
        : null;
      const mention: Span = { eventId: e.ev.id, start: abs(item.start), end: abs(item.end) };
      if (resolved) {
        objectEntity = resolved;
        value = resolved.name;
        coref = true;
        this.registry.sight(resolved, mention, e.index);
      } else if (/^(?:it|them|him|her|they|this|that)$/i.test(item.text) && draft.objectKind !== 'phrase') {
        continue; // an unresolved pronoun is no fact
      } else if (draft.objectKind === 'phrase') {
        // Pronouns inside a plan or event ("visit him", "open-source it") take their referent's name.
        const phrase = this.resolveInPhrase(item.text, e, abs(item.start));
        if (/^(?:\w+\s+)?(?:it|that|this|them|him|her|so)$/i.test(phrase.text)) continue; // "do that": names nothing
        // A time cut off the end ("some people for the next month") leaves no dangling "for the".
        value = phrase.text.replace(DANGLING, '');
        coref = coref || phrase.coref;
      } else {
        objectEntity = this.objectEntity(item.text, draft, mention, e);
        if (objectEntity) value = objectEntity.name;
      }
      let predicate = draft.predicate;
      let factType = draft.factType;
      let template = draft.template;
      if (draft.isChange && objectEntity?.type === 'place') {
        predicate = 'lives_in';
        factType = 'attribute';
        template = '{S} moved to {O}';
      }
      if (predicate === 'name' && !third) {
        this.registry.addAlias(subject, value);
        objectEntity = null;
      }
      const replaces = this.replaced(draft, text, times, subject, objectEntity, predicate);
      // First and second person in the object are written out as the parties' names.
      const rewritten = rewritePersons(value, e.parties);
      if (rewritten === null && draft.objectKind === 'phrase') continue; // "you" with no known addressee: not self-contained
      const spoken = rewritten ?? value;
      if (draft.objectKind === 'phrase') value = spoken;
      let statement = capitalise(
        template
          .replace('{S}', subjectName)
          .replace('{O}', spoken)
          .replace('{R}', replaces ?? ''),
      );
      const when = draft.factType === 'plan' ? times.map(([a, b]) => text.slice(a, b)).find((t) => !/^(?:now|currently|again|instead)$/i.test(t)) : undefined;
      const said = when ? whenPhrase(when, e.ev.occurredAt) : time ? timePhrase(text.slice(time.start, time.end), time.iso, e.ev.occurredAt) : null;
      if (said && !statement.includes(said)) statement = `${statement} ${said}`;
      const confidence = confidenceOf(draft, hedged, coref, third !== null, e.ev.role);
      const source: Span = { eventId: e.ev.id, start: clause.start, end: clause.end };
      if (!third) this.registry.sight(subject, source, e.index);
      this.out.add({
        statement,
        factType,
        subject,
        predicate,
        value,
        objectEntity,
        isNegation: draft.isNegation,
        confidence,
        validFrom: time?.iso ?? null,
        replaces,
        source,
      });
      n++;
    }
    return n;
  }

  private resolveInPhrase(phrase: string, e: EventCtx, at: number): { text: string; coref: boolean } {
    let coref = false;
    const text = phrase.replace(/\b(?:it|him|her|them)\b/gi, (word, offset: number) => {
      const hit = this.registry.resolve(word, e.index, at + offset, e.speaker());
      if (!hit) return word;
      coref = true;
      return hit.name;
    });
    return { text, coref };
  }

  private objectEntity(phrase: string, draft: Draft, mention: Span, e: EventCtx): WorkingEntity | null {
    const tech = lookupTech(phrase);
    if (tech) return this.registry.upsert(tech.name, tech.type, tech.category, mention, e.index, phrase);
    const known = this.registry.findByName(phrase);
    if (known && draft.objectKind !== 'phrase') {
      this.registry.sight(known, mention, e.index);
      return known;
    }
    if (draft.isChange && /^[A-Z]/.test(phrase) && nlp(phrase).places().found) return this.registry.upsert(phrase, 'place', null, mention, e.index);
    const type = KIND_TYPE[draft.objectKind];
    if (!type) return null;
    if (type !== 'project' && !/^[A-Z]/.test(phrase)) return null;
    return this.registry.upsert(phrase, type, null, mention, e.index);
  }

  /** The value a change replaces: named in the text, else the latest same-category value of this subject in the batch. */
  private replaced(
    draft: Draft,
    text: string,
    times: Array<[number, number]>,
    subject: WorkingEntity,
    object: WorkingEntity | null,
    predicate: string,
  ): string | null {
    if (draft.replaces) {
      const from = cleanObject(draft.replaces, text, times, 'free');
      return from ? (lookupTech(from.text)?.name ?? from.text) : null;
    }
    if (!draft.isChange) return null;
    return this.out.previousValue(subject, object, predicate);
  }
}

function cleanProperName(content: string, start: number, end: number): Range | null {
  let s = start;
  let e = end;
  while (e > s && /[\s.,!?;:'"]/.test(content[e - 1] as string)) e--;
  if (content.slice(e - 2, e) === "'s") e -= 2;
  // "brother Jake" → "Jake": drop leading lowercase words.
  for (let m = /^[a-z][\w-]*\s+/.exec(content.slice(s, e)); m; m = /^[a-z][\w-]*\s+/.exec(content.slice(s, e))) s += m[0].length;
  const text = content.slice(s, e);
  return text.length >= 2 && /^[A-Z]/.test(text) ? { text, start: s, end: e } : null;
}

const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
/**
 * A present progressive of getting, making or giving something ("I'm getting a scarf", "For Mom
 * I'm getting a scarf", "we're baking a cake for Sam") is a plan under way, also without a time:
 * "The user is getting a scarf for Mom". Other progressives without a time ("I'm feeling great",
 * "I'm watching a show") stay unread, as before. A leading "for …" goes after the object.
 */
function ongoingPlan(draft: Draft, text: string, parties: Parties): Draft | null {
  const verb = /^(\w+ing)\s+\S/.exec(draft.object.text)?.[1]?.toLowerCase();
  if (!verb || !ONGOING_PLANS.has(verb)) return null;
  const lead = /^(?:so\s+|and\s+)?for\s+([^,]{1,40}?),?\s+(?=(?:I|we)\b)/i.exec(text)?.[1];
  const forWhom = lead ? rewritePersons(lead, parties) : null;
  return { ...draft, template: forWhom ? `${draft.template} for ${forWhom}` : draft.template };
}

const ONGOING_PLANS: ReadonlySet<string> = new Set(
  'getting buying bringing making baking cooking building writing ordering booking renting hosting throwing organizing organising giving sending knitting sewing painting preparing planting renovating'.split(
    ' ',
  ),
);

/** A verbless remainder after a stop: "only green tea now", "just Linux these days", "mostly tea instead". */
const REMAINS =
  /^(?:and\s+|but\s+|so\s+)?(?:(?<only>only|just|mostly|mainly)|it's|it is|its)\s+(?<obj>(?!(?:so|too|very|really|fine|ok|okay|better|worse|hard|easier|harder|over|done|gone)\b)[^,;:]+?)\s+(?:now|nowadays|these days|instead|from now on)[.!]?$/i;
/** A fragment of a note is this short (joinFragments)… */
/** A fragment that continues a note, and its span. */
type NoteLine = Span & { text: string };

const spanOf = ({ eventId, start, end }: NoteLine): Span => ({ eventId, start, end });

/** "Meeting w/ legal" + "thurs 2pm", "room 4b" → "Meeting w/ legal, thurs 2pm, room 4b". */
const joinNote = (statement: string, lines: readonly NoteLine[]): string => [statement.replace(/[.!\s]+$/, ''), ...lines.map((l) => l.text)].join(', ');

const FRAGMENT_WORDS = 3;
/** …and follows the turn before it within this time. */
const FRAGMENT_GAP_MS = 10 * 60_000;

/** "it's Stockpot now", "it's called Stockpot now": a new value, not a remark ("it's so much better now"). */
const NEW_VALUE =
  /^(?:and\s+|so\s+)?(?:it's|it is|its)\s+(?:(?:called|named)\s+)?(?<value>(?!(?:so|too|very|really|much|fine|ok|okay|better|worse|hard|easier|harder|over|done|gone|great|good|bad|nice|awesome|official|a lot|all|not|just|about)\b)[^,;]{1,60}?)\s+(?:now|nowadays|these days|instead)[.!]?$/i;
/** A fact that changed something, and the thing: "Marketing renamed the app", "The user changed the user's number". */
const CHANGED_THING =
  /\b(?:renamed|rebranded|changed|switched|replaced|updated|moved)\s+(?<thing>(?:the|[A-Z][\w-]*'s|the user's)\s+(?:[\w-]+\s+)?[\w-]+)(?=\s*(?:$|lol|again|too|,|\.|!)|\s+(?:in|on|last|this|over)\s)/;
const DANGLING = /(?:\s+(?:for|from|on|in|at|of|to|with|by|during|until|over|through|throughout))?\s+(?:the|a|an|my|our|your)$|\s+(?:over|during|throughout)$/i;

/** A relative time of a past or present fact, written out ("yesterday" → "on 7 May 2023"); null when absolute. */
const timePhrase = (text: string, iso: string, ref: Date): string | null => relativePhrase(text, new Date(iso), ref);

/** The target time of a plan: written out when relative ("next month" → "in June 2023"), else as said. */
function whenPhrase(when: string, ref: Date): string {
  const hit = resolveTimes(when, ref, 'any')[0];
  const phrase = hit ? relativePhrase(hit.text, hit.date, ref) : null;
  return phrase ?? `${when.charAt(0).toLowerCase()}${when.slice(1)}`;
}
