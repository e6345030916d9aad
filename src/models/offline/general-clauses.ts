import nlp from 'compromise';
import type { FactType } from '../../silver/ontology';
import { Parties, mentionsSpeaker, rewritePersons } from './speaker';
import { ResolvedTime, resolveTimes, writeOutTimes } from './time-phrase';

/**
 * General clause shapes for statements the specific rules (patterns.ts) do not cover, read off
 * compromise's part-of-speech tags:
 *
 * A. a first-person subject and its verb phrase ("I went to X", "I've been VERB-ing", "I'm
 *    planning to", "I love/hate X", "I have two kids", "we adopted a dog", "I just finished a
 *    painting"): the subject becomes the speaker's name and the first verb agrees with it;
 *    "you" as the subject is the addressee, when known ("You found a great spot" → "Gina found
 *    a great spot"), but not with a modal or future ("you'll be a great mom" is a wish);
 * B. another subject in a clause about the speaker ("Pottery is a huge part of my life", "My
 *    kids loved the beach", "The support group made me feel accepted").
 *
 * C. a clause about something else, with content nouns on both sides of its verb, is the
 *    speaker's view: "Family support is huge" → "Caroline said family support is huge".
 *
 * In all, first and second person become the parties' names and relative times are written
 * out against the event's time. A clause gives nothing when it carries no content of its own:
 * its complement names no thing (only pronouns, adjectives, times: "I love it", "I'm so tired
 * today", "I'll check back later"), its verb is a reaction or a thought ("I think", "I agree",
 * "I can't wait"), its subject is a pronoun of unknown reference, or it says "you" with no
 * known addressee.
 */
export interface GeneralFact {
  /** Whom the fact is about: the speaker, or the addressee ("You found the perfect spot"). */
  about: 'speaker' | 'addressee';
  /** The speaker's view of something else ("Caroline said family support is huge"). */
  opinion?: boolean;
  factType: FactType;
  predicate: string;
  object: string;
  statement: string;
  isNegation: boolean;
  /** validFrom: the first past or present time of the clause (plans: none). */
  time: ResolvedTime | null;
}

interface Term {
  text: string;
  tags: ReadonlySet<string>;
  start: number;
  end: number;
}

const ADVERBS =
  'really|also|just|finally|actually|recently|already|still|always|usually|often|sometimes|never|even|totally|definitely|absolutely|honestly|truly|seriously|literally|kinda|kind of|pretty much|basically|officially|happily|currently|now|only|all|both|then|once|super|so|certainly|probably|mostly|generally|lately';
const AUX =
  "'m|'re|'ve|'d|'ll|\\s+(?:am|are|was|were|have|has|had|do|does|did|will|shall|would|could|should|can|might|must|may|don't|doesn't|didn't|won't|can't|cannot|couldn't|wouldn't|shouldn't|haven't|hadn't|wasn't|weren't|aren't|ain't|gotta|gonna|wanna|used to)";
const FIRST = new RegExp(`^(?<subj>I|[Ww]e|[Yy]ou)(?<aux>${AUX})?(?<neg>\\s+(?:not|never))?(?<adv>(?:\\s+(?:${ADVERBS}))*)\\s+(?<rest>\\S.*)$`);

const AUX_OUT: Record<string, string> = {
  "'m": 'is',
  am: 'is',
  "'re": 'is',
  are: 'is',
  was: 'was',
  were: 'was',
  "'ve": 'has',
  have: 'has',
  has: 'has',
  had: 'had',
  do: 'does',
  does: 'does',
  did: 'did',
  "'ll": 'will',
  will: 'will',
  shall: 'will',
  "don't": 'does not',
  "doesn't": 'does not',
  "didn't": 'did not',
  "won't": 'will not',
  "can't": 'cannot',
  cannot: 'cannot',
  "couldn't": 'could not',
  "wouldn't": 'would not',
  "shouldn't": 'should not',
  "haven't": 'has not',
  "hadn't": 'had not',
  "wasn't": 'was not',
  "weren't": 'was not',
  "aren't": 'is not',
  "ain't": 'is not',
  gotta: 'has to',
  gonna: 'is going to',
  wanna: 'wants to',
  'used to': 'used to',
};
const NEGATED = /\b(?:not|never)\b/;

const LEAD =
  /^(?:(?:oh|ah|aw|aww|yeah|yes|yep|yup|no|nope|well|so|and|but|also|plus|actually|honestly|anyway|anyways|btw|um|hmm|haha|hah|lol|wow|whoa|ok|okay|sure|totally|right|then|now|omg|fyi|hey|hi|hello|thanks|thank you|cool|great|nice|awesome|sweet|true|exactly|absolutely|definitely|by the way|guess what|you know what|oh man|man|gosh|wait|alright|of course|speaking of which)\b[\s,!.:-]*)+/i;
// "this/that" as a pronoun ("That's great"), not as a determiner ("This necklace is special to me").
const DEMONSTRATIVE =
  /^(?:this|that|these|those)(?:'s|'ll|\s+(?:is|was|are|were|has|had|will|would|can|could|must|might|may|looks?|sounds?|seems?|means?|makes?|made|really|so|just|one|one's|kind|sort|sucks?|rocks?|works?|helps?|feels?|brings?|reminds?|got)\b|[\s,.!]*$)/i;
const PRONOUN_SUBJECT =
  /^(?:it|it's|its|that's|there|there's|they|they're|he|he's|she|she's|you|you're|you've|you'll|you'd|your|what|which|who|everyone|everybody|everything|someone|somebody|something|anyone|anything|nothing|nobody|here|here's|each|all|both|some|many|most|such)\b/i;
// Thoughts and reactions: what follows is an opinion or a courtesy, not a fact about the speaker.
const NO_FACT_VERBS = new Set(
  'think guess suppose believe wonder mean bet agree understand hear know wish appreciate imagine thank hope wait admire promise say tell get see reckon doubt admit'.split(
    ' ',
  ),
);
const PREFERENCE_VERBS = new Set(['love', 'like', 'enjoy', 'adore', 'prefer', 'hate', 'dislike', 'detest', 'loathe']);
const LIGHT_NOUNS = new Set(
  'thing things stuff lot lots bit one ones kind sort time times way day days moment idea deal sense point fun pic photo picture pics photos luck best something anything everything nothing lot blast right wrong point'.split(
    ' ',
  ),
);
// A full stop ends the phrase, except after an abbreviation ("Dr. Miller").
const CUT =
  /\s+(?:because|cause|'cause|so that|when|while|though|although|if|unless|whereas|until|but|which|since(?!\s+(?:19|20)\d\d))\b|\s+[-\u2013\u2014]+\s+|,\s*(?:which|who|and|but|so|though|as|plus|it|that|this|I|we)\b|\s+and\s+(?=(?:it|that|this|they|he|she|you|there|it's|that's)\b)|\s*[!?;]|(?<!\b(?:Dr|Mr|Mrs|Ms|Mx|Prof|St|Jr|Sr|Mt|vs|etc|approx|Inc|Ltd|Co))\s*\.\s|\s*\.$|\s+\(/i;
const MAX_WORDS = 24;
const BARE_PRONOUN = /^(?:them|it|her|him|this|that|these|those)$/i;
const REASON = /^\s+(?:because|cause|'cause|so that)$/i;
const SENTENCE_END = /\s*[!?;]|(?<!\b(?:Dr|Mr|Mrs|Ms|Mx|Prof|St|Jr|Sr|Mt|vs|etc|approx|Inc|Ltd|Co))\s*\.(?:\s|$)/;
const DROPPED_PAST =
  /^(?:(?:just|even|also|finally|recently|actually)\s+)?(?:[a-z]+ed|made|took|went|got|saw|bought|found|met|ran|won|began|left|built|wrote|tried|gave|sent|spent|taught|drove|flew|lost|started|finished)\s+\w/i;
const ADJECTIVAL =
  /^(?:agreed|excited|surprised|amazed|thrilled|pleased|impressed|interested|tired|bored|scared|stressed|obsessed|blessed|relieved|inspired|touched|moved|stoked|hooked|need|indeed|speed|red)\b/i;
// "it's/it was <adjective> <to …|how …|…-ing …>": an evaluation of what follows (extraposed()).
const EXTRAPOSED =
  /^(?<lead>it's|it is|it was|it's been|it has been|it's not|it is not|it was not|it wasn't|it isn't)\s+(?:(?:so|really|very|truly|just|extra|super|always|definitely|incredibly|pretty|quite|absolutely|totally|also|such an?)\s+)*(?<adj>[a-z][a-z-]*)\s+(?<rest>\S.*)$/di;
// Verbs of meeting and talking: "It's great to see you", "it's nice to chat" say nothing to keep.
const SOCIAL_VERBS = new Set('meet talk chat catch hear see read know help be hang visit share reconnect connect'.split(' '));
const SOCIAL_GERUNDS = /^(?:talking|chatting|hearing|seeing|meeting|catching|knowing|having|being)$/i;
const INDEFINITE = /^(?:someone|somebody|everyone|everybody|anyone|anybody|no one|nobody|others?|each|people|here|there|today|tonight|again|back|together)$/i;
const THOUGHT_VERBS = new Set('believe think imagine say tell guess wonder admit doubt explain describe'.split(' '));
const OBJECT_PRONOUN = /^(?:me|us|him|her|them|you)$/;
// Verbs that say little without an object ("I went", "I did"); others can stand alone in the past ("I graduated").
export const LIGHT_VERBS: ReadonlySet<string> = new Set('be have do go get make come take give put try say feel keep let see look happen mean'.split(' '));

/**
 * compromise's tags for the words of `text` from offset `from` on (offsets relative to `from`);
 * the extractor passes the tags of the whole event (one parse, words tagged in context).
 */
export type Tagger = (from: number) => Term[];
/** The name "he" or "she" at the start of the clause refers to (the batch's coreference), or null. */
export type Resolver = (pronoun: string) => string | null;

/** The general fact a clause states, or null. `text` is the clause (quotes normalised). */
export function generalClause(text: string, parties: Parties, ref: Date, tagged?: Tagger, resolve?: Resolver): GeneralFact | null {
  if (/[[\]]/.test(text)) return null; // a bracketed annotation ("[image: ...]") is not what the speaker said
  const lead = LEAD.exec(text)?.[0].length ?? 0;
  let body = text.slice(lead);
  // "Gonna check out ...", "Love the blue vase": the dropped subject is the speaker.
  const dropped = /^(?:gonna|love|loving|enjoying)\s+(?!it\b|that\b|this\b|you\b|is\b|was\b|and\b)/i.exec(body)?.[0];
  if (dropped) body = (/^gonna/i.test(dropped) ? "I'm going to " : /^lov/i.test(dropped) ? 'I love ' : "I'm enjoying ") + body.slice(dropped.length);
  // "Just signed up for a class", "Even made a tattoo": a past verb with no subject is the speaker's.
  const droppedPast = !dropped && DROPPED_PAST.test(body) && !ADJECTIVAL.test(body);
  if (droppedPast) body = `I ${body.charAt(0).toLowerCase()}${body.slice(1)}`;
  // "Researching adoption agencies — it's been a dream …": a gerund with no verb after it is what
  // the speaker is doing ("Hiking to the top was awesome" has one: the gerund is its subject).
  const droppedGerund = !dropped && !droppedPast && doingWithoutSubject(body);
  if (droppedGerund) body = `I'm ${body.charAt(0).toLowerCase()}${body.slice(1)}`;
  body = stripVocative(body, parties);
  const leadTime = leadingTime(body, ref);
  if (leadTime) body = body.slice(leadTime.end).replace(/^[\s,]+/, '');
  if (body.length === 0) return null;
  // Every step above only drops words on the left, so the body is a suffix of the text.
  const tag = (): Term[] => (tagged && !dropped && !droppedPast && !droppedGerund ? tagged(text.length - body.length) : terms(body));
  const first = FIRST.exec(body);
  // "He was such an important part of our family": he/she as named earlier in the batch.
  const person = /^(?:he|she)(?=\s|'s\b)/i.exec(body);
  const named = person && resolve ? resolve(person[0]) : null;
  const fact = first
    ? firstPerson(first, parties, ref, tag)
    : named
      ? otherSubject(body, parties, ref, tag, named)
      : (extraposed(body, parties, ref, tag) ?? otherSubject(body, parties, ref, tag));
  if (!fact) return null;
  const time = fact.time ?? leadTime;
  if (leadTime?.phrase && !fact.statement.includes(leadTime.phrase)) fact.statement = `${fact.statement} ${leadTime.phrase}`;
  const isPlan = fact.factType === 'plan' || (time !== null && time.date.getTime() > ref.getTime() + 86_400_000);
  return { ...fact, factType: isPlan ? 'plan' : fact.factType, time: isPlan ? null : time, statement: capitalise(fact.statement) };
}

/** Words in -ing that mostly name a thing: "meeting w/ legal" is a note, not what the speaker is doing. */
const NOUN_IN_ING =
  /^(?:meeting|wedding|morning|evening|building|ceiling|clothing|housing|parking|feeling|ending|beginning|offering|outing|gathering|setting|sibling|pudding|earring|spring|string|ring|king|thing|something|nothing|anything|everything)\b/i;

/** A clause that opens with a gerund and has no finite verb up to its cut (see droppedGerund). */
function doingWithoutSubject(body: string): boolean {
  if (!/^[A-Za-z]+ing\s+\w/.test(body) || NOUN_IN_ING.test(body)) return false;
  const phrase = cut(body);
  if (!phrase) return false;
  const ts = terms(phrase);
  if (!ts[0]?.tags.has('Gerund')) return false;
  return !ts
    .slice(1)
    .some(
      (t) =>
        t.tags.has('Copula') ||
        t.tags.has('Modal') ||
        t.tags.has('Auxiliary') ||
        ((t.tags.has('PastTense') || t.tags.has('PresentTense')) && !t.tags.has('Gerund')),
    );
}

function firstPerson(m: RegExpExecArray, parties: Parties, ref: Date, tag: () => Term[]): GeneralFact | null {
  const g = m.groups as Record<string, string | undefined>;
  const auxRaw = (g['aux'] ?? '').trim().toLowerCase();
  const addressed = /^you$/i.test(g['subj'] ?? '');
  if (
    addressed &&
    (!parties.addressee || /^(?:'ll|'d|will|would|could|should|can|might|must|may|gonna|won't|can't|cannot|couldn't|wouldn't|shouldn't|gotta)$/.test(auxRaw))
  )
    return null;
  const name = addressed ? (parties.addressee as string) : parties.speaker;
  const adv = (g['adv'] ?? '').trim();
  const neg = (g['neg'] ?? '').trim().toLowerCase();
  let rest = g['rest'] as string;
  // Tag the whole clause (tags depend on the subject), then read the tail after the subject.
  const restAt = m.input.length - rest.length;
  const all = tag();
  let restTerms = shift(all, restAt);
  let head: string;
  let verb: string; // infinitive of the content verb
  let past: boolean;
  if (auxRaw) {
    const a = auxRaw === "'d" ? (/^(?:been|had|\w+ed)\b/i.test(rest) ? 'had' : 'would') : (AUX_OUT[auxRaw] ?? auxRaw);
    head = [a, neg, adv].filter(Boolean).join(' ');
    const v = restTerms[0];
    verb =
      v && (v.tags.has('Verb') || PREFERENCE_VERBS.has(v.text.toLowerCase()))
        ? infinitive(v.text)
        : a.startsWith('is') || a.startsWith('was')
          ? 'be'
          : a.startsWith('has') || a === 'had'
            ? 'have'
            : infinitive(a.split(' ')[0] as string);
    past =
      a === 'used to' ||
      a.startsWith('was') ||
      a.startsWith('did') ||
      a === 'had' ||
      (a.startsWith('has') && v !== undefined && v.tags.has('PastTense') && v.text !== 'been');
  } else {
    const v = restTerms[0];
    if (!v || !(v.tags.has('Verb') || PREFERENCE_VERBS.has(v.text.toLowerCase()))) return null;
    // compromise leaves some irregular pasts untagged ("Just got back from a road trip").
    past = v.tags.has('PastTense') || isIrregularPast(v.text);
    verb = infinitive(v.text);
    const conjugated = past ? v.text : presentThird(v.text);
    head = [neg, adv, conjugated].filter(Boolean).join(' ');
    if (neg) head = [`does not`, adv, verb].filter(Boolean).join(' ');
    const skip = rest.length - rest.slice(v.end).trimStart().length;
    rest = rest.slice(skip);
    restTerms = shift(restTerms, skip);
  }
  if (NO_FACT_VERBS.has(verb) && !(past && (verb === 'get' || verb === 'see' || verb === 'hear'))) return null;
  const object = dropVocative(cut(rest.trim()) ?? (rest.trim() === '' ? '' : null), parties);
  if (object === null) return null;
  const objTerms = restTerms.filter((t) => t.start < object.length);
  const planLike =
    /^(?:going to|planning (?:to|on)|about to|hoping to|aiming to|trying to|looking forward to|excited to)\b/i.test(object) ||
    /^(?:will|would|is going to|wants to)\b/.test(head);
  // "I've been hiking", and "I've gone camping a few times": an activity named by its gerund.
  const progressive =
    objTerms[0]?.tags.has('Gerund') === true ||
    ((objTerms[0]?.text === 'been' || (auxRaw !== '' && objTerms[0]?.tags.has('Participle') === true)) && objTerms[1]?.tags.has('Gerund') === true);
  const standsAlone = past && !auxRaw && !LIGHT_VERBS.has(verb);
  if (!standsAlone && !hasContent(objTerms, PREFERENCE_VERBS.has(verb) || progressive || (planLike && /\bto\s+\w+/i.test(object)))) return null;
  const times = resolveTimes(object, ref, planLike ? 'any' : 'past');
  const written = rewritePersons(writeOutTimes(object, times), parties);
  if (written === null) return null;
  // A habit ("I usually run 5k every morning") is a standing preference for the activity.
  const habit = !auxRaw && !past && /^(?:usually|always|often|regularly|normally|typically|generally)$/i.test(adv.split(/\s+/)[0] ?? '');
  const preference = (PREFERENCE_VERBS.has(verb) || habit) && !planLike;
  const attribute =
    !past && !planLike && (verb === 'be' || verb === 'have') && /^(?:a|an|\d+|one|two|three|four|five|six|from|married|single|divorced)\b/i.test(object);
  const factType: FactType = planLike || /^will\b/.test(head) ? 'plan' : preference ? 'preference' : past ? 'event' : attribute ? 'attribute' : 'other';
  return {
    factType,
    predicate: verb,
    object: habit ? `${verb} ${written}` : written,
    isNegation: NEGATED.test(head) || /^(?:hate|dislike|detest|loathe)$/.test(verb),
    about: addressed ? 'addressee' : 'speaker',
    statement: `${name} ${head} ${written}`
      .replace(/\s+/g, ' ')
      .trim()
      .replace(/[\s,]+$/, ''),
    time: times.find((t) => t.date.getTime() <= ref.getTime() + 86_400_000) ?? (planLike ? null : (times[0] ?? null)),
  };
}

function otherSubject(body: string, parties: Parties, ref: Date, tag: () => Term[], named?: string): GeneralFact | null {
  if (!named && (PRONOUN_SUBJECT.test(body) || DEMONSTRATIVE.test(body))) return null;
  // A clause about something else, not about the speaker, is the speaker's view of it.
  const opinion = !named && !mentionsSpeaker(body);
  const text = cut(body);
  if (!text) return null;
  const ts = nounBeforeCopula(verbsBeforeObjects(tag().filter((t) => t.start < text.length)));
  // A gerund may head the subject ("Running for office was my chance"): the verb is the first finite one after it.
  const gerund = ts[0]?.tags.has('Gerund') === true;
  const v = ts.findIndex(
    (t, i) =>
      t.tags.has('Verb') &&
      (!gerund ||
        (i > 0 && (t.tags.has('Copula') || t.tags.has('PastTense') || t.tags.has('PresentTense')) && !t.tags.has('Gerund') && !t.tags.has('Infinitive'))),
  );
  if (v <= 0 || v > (gerund ? 9 : 6)) return null;
  const subject = ts.slice(0, v);
  if (!named && !subject.some((t) => (t.tags.has('Noun') || t.tags.has('Gerund')) && !t.tags.has('Pronoun'))) return null;
  if (!named && subject.some((t) => t.tags.has('Pronoun') && !/^(?:my|our|I)$/i.test(t.text))) return null;
  // An amount or a clock time says as much as a noun ("rent here is $2,100", "standup is at 10:00").
  const content = ts.filter(
    (t) =>
      (t.tags.has('Noun') && !t.tags.has('Pronoun') && !t.tags.has('Possessive') && !t.tags.has('Date') && !LIGHT_NOUNS.has(t.text.toLowerCase())) ||
      t.tags.has('Money') ||
      (t.tags.has('Time') && /\d/.test(t.text)),
  );
  // One content word is enough for a clause about the speaker that leaves no pronoun unresolved.
  const needed = opinion ? 2 : named ? 1 : /\b(?:it|they|them|he|she|him|her|this|that)\b/i.test(text.slice((ts[v] as Term).start)) ? 2 : 1;
  if (content.length < needed || (opinion && !content.some((t) => t.start > (ts[v] as Term).start))) return null;
  const verbTerm = ts[v] as Term;
  if (/^(?:what|how|why|who|where|when)\b/i.test(text.slice(verbTerm.end).trim())) return null; // "X is what sold me": a reaction
  const past = verbTerm.tags.has('PastTense') || ts.slice(v, v + 3).some((t) => t.tags.has('PastTense') && t.tags.has('Verb'));
  // "My husband and I went": the speaker first, then the rest of the subject.
  const spelled = (named ? text.replace(/^(?:he|she)(?:'s\b)?/i, (p) => (p.endsWith("'s") ? `${named} is` : named)) : text)
    .replace(/^(.+?)\s+and\s+I\b/, (_m, np: string) => `I and ${np}`)
    .replace(/^([A-Za-z][\w-]*)'s(?=\s+(?:a|an|the|so|really|very|such|my|our|been)\b)/, '$1 is');
  // Found in the text they are written into (a name for "she" moves every offset after it). A
  // clause that is not in the past keeps a future weekday ("She wants the report by Friday").
  const times = resolveTimes(spelled, ref, past ? 'past' : 'any');
  const written = rewritePersons(writeOutTimes(spelled, times), parties);
  if (written === null) return null;
  const favourite = /\b(?:favou?rite)\b/i.test(text);
  const proper = ts[0]?.tags.has('ProperNoun') === true || /^[A-Z]{2,}\b/.test(written);
  const statement = opinion ? `${parties.speaker} said ${proper ? written : written.charAt(0).toLowerCase() + written.slice(1)}` : written;
  return {
    about: 'speaker',
    opinion,
    factType: favourite && !opinion ? 'preference' : past ? 'event' : 'other',
    predicate: opinion ? 'said' : verbTerm.text ? infinitive(verbTerm.text) : 'be',
    object: written,
    isNegation: NEGATED.test(text.slice(verbTerm.start)),
    statement,
    time: times[0] ?? null,
  };
}

/**
 * D. An evaluation with "it" standing for what follows ("It's important to support each other",
 * "It's so sweet to see your love for your family", "It's amazing how art can show things that
 * are hard to put into words", "It was inspiring seeing everyone come together for a shared
 * cause") is the speaker's view of that: "Maria said it is great to see community power in
 * action". What follows must name something (a content noun, or a verb that is neither light nor
 * social): "It's great to see you", "It's nice to meet you", "It's amazing how far you've come"
 * and "It's so good to be back" are courtesies and state nothing.
 */
function extraposed(body: string, parties: Parties, ref: Date, tag: () => Term[]): GeneralFact | null {
  const m = EXTRAPOSED.exec(body);
  if (!m?.groups) return null;
  const text = cut(body);
  if (!text) return null;
  const ts = tag();
  const adjAt = m.indices?.groups?.['adj']?.[0];
  const restAt = m.indices?.groups?.['rest']?.[0] ?? body.length;
  const adj = ts.find((t) => t.start === adjAt);
  // The evaluation: an adjective ("important", "amazing"), or a participle used as one ("inspiring").
  if (!adj || !(adj.tags.has('Adjective') || /ing$/i.test(adj.text))) return null;
  const rest = ts.filter((t) => t.start >= restAt && t.start < text.length);
  const head = rest[0];
  if (!head || !/^(?:to|how|\w+ing)$/i.test(head.text)) return null;
  // "It's hard to believe it's May already", "It's good to know": a thought, not a view of a thing.
  const firstVerb = rest.find((t, i) => i > 0 && t.tags.has('Verb'));
  if (head.text.toLowerCase() === 'to' && firstVerb && THOUGHT_VERBS.has(infinitive(firstVerb.text))) return null;
  const names = rest.some((t) => {
    const w = t.text.toLowerCase();
    if (SOCIAL_GERUNDS.test(w) || LIGHT_NOUNS.has(w) || INDEFINITE.test(w)) return false;
    if (t.tags.has('Noun') && !t.tags.has('Pronoun') && !t.tags.has('Possessive') && !t.tags.has('Date')) return true;
    const v = infinitive(t.text);
    return t.tags.has('Verb') && !t.tags.has('Auxiliary') && !t.tags.has('Copula') && !SOCIAL_VERBS.has(v) && !LIGHT_VERBS.has(v) && !NO_FACT_VERBS.has(v);
  });
  if (!names) return null;
  const clause = text
    .replace(/^it's been\b/i, 'it has been')
    .replace(/^it(?:'s|\s+is)\b/i, 'it is')
    .replace(/^It\b/, 'it');
  const times = resolveTimes(clause, ref, 'past'); // in the text they are written into
  const written = rewritePersons(writeOutTimes(clause, times), parties);
  if (written === null) return null;
  return {
    about: 'speaker',
    opinion: true,
    factType: 'other',
    predicate: 'said',
    object: written,
    isNegation: NEGATED.test(m.groups['lead'] ?? ''),
    statement: `${parties.speaker} said ${written}`,
    time: null,
  };
}

/**
 * compromise tags a present verb as a plural noun where it cannot tell ("Family time matters to
 * me", "Painting helps me explore my identity"); a word that conjugates as a verb's present and is
 * followed by an object pronoun (or "to me") is the verb.
 */
function verbsBeforeObjects(ts: readonly Term[]): Term[] {
  return ts.map((t, i) => {
    if (i === 0 || !t.tags.has('Plural') || t.tags.has('Verb')) return t;
    const next = ts[i + 1]?.text.toLowerCase();
    const after = ts[i + 2]?.text.toLowerCase();
    const objectFollows = (next && OBJECT_PRONOUN.test(next)) || (next === 'to' && after && OBJECT_PRONOUN.test(after));
    if (!objectFollows || presentThird(infinitive(t.text)).toLowerCase() !== t.text.toLowerCase() || infinitive(t.text) === t.text.toLowerCase()) return t;
    return { ...t, tags: new Set([...t.tags].filter((x) => x !== 'Noun' && x !== 'Plural').concat(['Verb', 'PresentTense'])) };
  });
}

/**
 * compromise reads a clause's first word as an imperative where it cannot tell ("rent here is
 * $2,100", "work is crazy" it gets right): a first word tagged a bare verb with a copula one or
 * two words after it is the subject's noun.
 */
function nounBeforeCopula(ts: readonly Term[]): Term[] {
  const first = ts[0];
  if (!first || !first.tags.has('Imperative') || !ts.slice(1, 3).some((t) => t.tags.has('Copula'))) return [...ts];
  return [{ ...first, tags: new Set(['Noun', 'Singular']) }, ...ts.slice(1)];
}

/** The leading time expression of a clause ("Last week I went ..."), when it starts the clause. */
function leadingTime(body: string, ref: Date): ResolvedTime | null {
  if (!/^(?:yesterday|today|tonight|tomorrow|last|next|this|on|a|an|two|three|few|earlier|over|in|recently|\w+day)\b/i.test(body)) return null;
  const hit = resolveTimes(body, ref, 'any').find((t) => t.start === 0);
  return hit && /^[\s,]*(?:I|we)\b/i.test(body.slice(hit.end)) ? hit : null;
}

const ROLE_NAME = /^the\s+(?:user|assistant)$/i;

function stripVocative(body: string, parties: Parties): string {
  for (const name of [parties.addressee, parties.speaker]) {
    // A role ("the user", "the assistant") is nobody's name: its "the" starts "the meeting is at 3pm".
    if (!name || ROLE_NAME.test(name)) continue;
    const first = name.split(/\s+/)[0] as string;
    const m = new RegExp(`^(?:${escape(name)}|${escape(first)}|${escape(first.slice(0, 3))})\\b[,!.]*\\s+`).exec(body);
    if (m) return body.slice(m[0].length).replace(LEAD, '');
  }
  return body;
}

/** "..., Caroline" at the end of a phrase addresses someone; it is no part of the fact. */
function dropVocative(phrase: string | null, parties: Parties): string | null {
  if (!phrase) return phrase;
  const names = [parties.addressee, parties.speaker]
    .filter((n): n is string => !!n && !ROLE_NAME.test(n))
    .flatMap((n) => [n, n.split(/\s+/)[0] as string])
    .map(escape);
  return names.length > 0 ? phrase.replace(new RegExp(`,?\\s+(?:${names.join('|')})$`), '') : phrase;
}

/**
 * The phrase up to the first connector or sentence break; null when too long to be one fact. An
 * object that is only a pronoun ("I chose them 'cause they help LGBTQ+ folks with adoption") says
 * nothing on its own, so a reason that follows it stays, up to the sentence break.
 */
function cut(phrase: string): string | null {
  const m = CUT.exec(phrase);
  let end = m && m.index > 0 ? m.index : phrase.length;
  if (m && BARE_PRONOUN.test(phrase.slice(0, m.index)) && REASON.test(m[0])) {
    const rest = phrase.slice(m.index + m[0].length);
    const stop = SENTENCE_END.exec(rest);
    end = m.index + m[0].length + (stop ? stop.index : rest.length);
  }
  const s = phrase
    .slice(0, end)
    .replace(/[\s,;:.!'"]+$/, '')
    .replace(/(?:\s+(?:for|from|on|in|at|of|to|with|by))?\s+(?:the|a|an|my|our|your)$/i, '')
    .trim();
  const words = s.split(/\s+/).filter(Boolean);
  if (words.length === 0 || words.length > MAX_WORDS) return null;
  return s;
}

function hasContent(ts: readonly Term[], verbsCount: boolean): boolean {
  return ts.some((t) => {
    const w = t.text.toLowerCase();
    if (
      t.tags.has('Noun') &&
      !t.tags.has('Pronoun') &&
      !t.tags.has('Possessive') &&
      !t.tags.has('Date') &&
      !t.tags.has('Duration') &&
      !LIGHT_NOUNS.has(w) &&
      w !== 'ya'
    )
      return true;
    return verbsCount && t.tags.has('Verb') && !t.tags.has('Auxiliary') && !t.tags.has('Copula');
  });
}

const shift = (ts: readonly Term[], by: number): Term[] => ts.filter((t) => t.start >= by).map((t) => ({ ...t, start: t.start - by, end: t.end - by }));

function terms(text: string): Term[] {
  const json = nlp(text).json({ offset: true }) as Array<{ terms: Array<{ text: string; tags: string[]; offset: { start: number; length: number } }> }>;
  return json.flatMap((s) => s.terms.map((t) => ({ text: t.text, tags: new Set(t.tags), start: t.offset.start, end: t.offset.start + t.offset.length })));
}

const conjugations = new Map<string, { Infinitive?: string; PresentTense?: string; PastTense?: string }>();
function conjugate(word: string): { Infinitive?: string; PresentTense?: string; PastTense?: string } {
  const key = word.toLowerCase();
  let c = conjugations.get(key);
  if (!c) {
    c = (nlp(`we ${key}`).verbs().conjugate()[0] as { Infinitive?: string; PresentTense?: string; PastTense?: string } | undefined) ?? {};
    if (conjugations.size < 5000) conjugations.set(key, c);
  }
  return c;
}
/** A simple past compromise did not tag ("got", "took"): the verb's own past form, not its infinitive. */
const isIrregularPast = (word: string): boolean => {
  const w = word.toLowerCase();
  const c = conjugate(w);
  return c.PastTense === w && c.Infinitive !== w;
};
const infinitive = (word: string): string => conjugate(word).Infinitive ?? word.toLowerCase();
const presentThird = (word: string): string => conjugate(word).PresentTense ?? word;
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
