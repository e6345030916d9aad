import type { FactType } from '../../silver/ontology';
import { NEG_VERBS, REL_WORDS, relationPredicate } from './pattern-words';

/**
 * Clause-level rules of the offline extractor. Each rule is a regular expression over one clause
 * (quotes normalised, an implied "I " prefixed where a clause carries its subject over) and yields
 * drafts: a predicate, an object phrase with its offsets, and how to phrase the statement. The
 * extractor resolves subjects, objects, entities, times and confidence from the drafts.
 */

export interface Range {
  text: string;
  start: number;
  end: number;
}

export type ObjectKind = 'tech' | 'place' | 'organization' | 'project' | 'person' | 'free' | 'phrase';

export interface Draft {
  factType: FactType;
  predicate: string;
  object: Range;
  /** 'speaker' for first-person clauses, else the subject noun phrase as written. */
  subject: 'speaker' | Range;
  isNegation: boolean;
  hedged: boolean;
  /** Raw phrase of the value this fact replaces ("switched from vim to ..."). */
  replaces: Range | null;
  /** "{S}" is the subject, "{O}" the object, "{R}" the replaced value. */
  template: string;
  /** 'free': split lists and pick gazetteer names; 'phrase': keep the phrase (plans, events). */
  objectKind: ObjectKind;
  /** The value in the statement is the object as resolved; a change that needs a look-back for what it replaced. */
  isChange: boolean;
  /** Plans keep validFrom null: the plan is true now; its target time stays in the statement. */
  timed: boolean;
}

type Make = (g: Groups, text: string) => Draft[];
interface Groups {
  get(name: string): Range | null;
}
interface Rule {
  name: string;
  re: RegExp;
  make: Make;
  /** Later rules are skipped for the clause when this one matched. */
  exclusive?: boolean;
}

const ADV =
  '(?:(?:really|also|mostly|mainly|usually|sometimes|still|now|primarily|actually|just|always|generally|definitely|honestly|totally|absolutely|only|even|currently|typically|normally|personally|all|both|then|finally|recently|already|kinda|kind of|pretty much|basically|officially|happily)\\s+)*';
const I = '\\b(?<subj>I|we)\\b';
const BE = "(?:'m|\\s+am|'re|\\s+are)";
const HAVE = "(?:'ve|\\s+have)?";
export const OBJ = '(?<obj>.+)';
/** Capitalised words that follow "I'm" and are not a name: where someone is from, a faith, a diet. */
const NOT_A_NAME =
  '(?:American|Canadian|Mexican|Brazilian|Argentinian|British|English|Scottish|Welsh|Irish|French|German|Dutch|Swiss|Swedish|Norwegian|Danish|Finnish|Polish|Russian|Ukrainian|Italian|Spanish|Portuguese|Greek|Turkish|Israeli|Chinese|Japanese|Korean|Indian|Pakistani|Filipino|Vietnamese|Thai|Australian|African|Asian|European|Latino|Latina|Catholic|Protestant|Jewish|Muslim|Hindu|Buddhist|Mormon|Vegan|Vegetarian|Sorry|Fine|Good|Great|Ok|Okay|Back|Done|Here|Home|Not|So|Just|Still|Also|Really|Very|Glad|Happy|Sure|Tired|Busy)';

export const re = (src: string): RegExp => new RegExp(src, 'id');
/** Case-sensitive, for rules that rely on capitalised names. */
export const reCs = (src: string): RegExp => new RegExp(src, 'd');

export function base(partial: Partial<Draft> & Pick<Draft, 'factType' | 'predicate' | 'object' | 'template'>): Draft {
  return {
    subject: 'speaker',
    isNegation: false,
    hedged: false,
    replaces: null,
    objectKind: 'free',
    isChange: false,
    timed: true,
    ...partial,
  };
}

const pref =
  (predicate: string, template: string, extra: Partial<Draft> = {}): Make =>
  (g) => {
    const object = g.get('obj');
    return object ? [base({ factType: 'preference', predicate, object, template, ...extra })] : [];
  };
const attr =
  (predicate: string, template: string, objectKind: ObjectKind, extra: Partial<Draft> = {}): Make =>
  (g) => {
    const object = g.get('obj');
    return object ? [base({ factType: 'attribute', predicate, object, template, objectKind, ...extra })] : [];
  };
const plan =
  (template: string, extra: Partial<Draft> = {}): Make =>
  (g) => {
    const object = g.get('obj');
    return object ? [base({ factType: 'plan', predicate: 'plans_to', object, template, objectKind: 'phrase', timed: false, ...extra })] : [];
  };

const negVerb: Make = (g) => {
  const object = g.get('obj');
  const verb = g.get('verb')?.text.toLowerCase() ?? 'use';
  const [predicate, bare] = NEG_VERBS[verb] ?? ['uses', verb];
  // "I don't want future generations to go through that": a wish about others, not a thing not wanted.
  if ((verb === 'want' || verb === 'need') && object && /\bto\s+[a-z]/i.test(object.text)) return [];
  return object ? [base({ factType: 'preference', predicate, object, template: `{S} does not ${bare} {O}`, isNegation: true })] : [];
};

const ROLE_HEADS =
  'engineer|developer|dev|designer|manager|scientist|analyst|student|teacher|doctor|nurse|lawyer|architect|consultant|founder|co-founder|cto|ceo|cfo|vp|lead|researcher|writer|administrator|admin|sre|programmer|intern|freelancer|contractor|professor|tester|director|officer|specialist|product owner|owner|accountant|journalist|artist|musician|photographer|chef|pilot|mechanic|electrician|technician|maintainer|contributor|hacker|coder|mathematician|physicist|biologist|chemist|economist|editor|translator|recruiter|marketer|salesperson|entrepreneur|phd student|postdoc|dentist|pharmacist|therapist|veterinarian|vet';

const PAST_IRREGULAR =
  'gave|had|met|went|wrote|built|ran|made|took|did|got|saw|began|found|left|bought|sold|broke|spoke|taught|drove|flew|won|lost|sent|spent|held|led|rewrote|set up|shipped|upgraded';

/** A short lead before "here's …" ("oh and here's …", "btw, here is …"). */
const SHOW_LEAD = '^(?:(?:oh|and|so|also|btw|by the way|look|anyway|plus|ok|okay)\\b[\\s,!:-]*)*';
const SHOWN = '(?<kind>pic|pics|photo|photos|picture|pictures|snap|snaps|shot|video|videos|selfie|screenshot)';

/** Rules in priority order. */
export const RULES: readonly Rule[] = [
  // --- something the speaker shows ("here's a pic of my family camping at the beach", "here's
  // my latest painting"): what it shows is the speaker's, and chat shares pictures of what happened ---
  {
    name: 'shared-picture',
    exclusive: true,
    re: re(
      `${SHOW_LEAD}(?:here(?:'s|\\s+is|\\s+are)|this\\s+is|these\\s+are)\\s+(?<det>(?:a|an|the|my|our|one|some)\\s+(?:(?:of\\s+(?:my|our|the)\\s+)?(?:\\w+\\s+){0,2}?))?${SHOWN}\\s+(?<prep>of|from)\\s+${OBJ}`,
    ),
    make: (g) => {
      const object = g.get('obj');
      const kind = g.get('kind')?.text.toLowerCase() ?? 'photo';
      const det = (g.get('det')?.text ?? 'a ')
        .toLowerCase()
        .replace(/\bmy\b/g, 'their')
        .replace(/\bour\b/g, 'their');
      const prep = g.get('prep')?.text.toLowerCase() ?? 'of';
      return object ? [base({ factType: 'event', predicate: 'shared', object, template: `{S} shared ${det}${kind} ${prep} {O}`, objectKind: 'phrase' })] : [];
    },
  },
  {
    name: 'shared-own',
    exclusive: true,
    re: re(`${SHOW_LEAD}here(?:'s|\\s+is|\\s+are)\\s+(?<obj>(?:(?:one|some|a few|two|three)\\s+of\\s+)?(?:my|our)\\s+\\w.*)`),
    make: (g) => {
      const object = g.get('obj');
      return object ? [base({ factType: 'event', predicate: 'shared', object, template: '{S} shared {O}', objectKind: 'phrase' })] : [];
    },
  },
  // --- plans (before changes: "we're going to replace RabbitMQ with Kafka" is a plan) ---
  {
    name: 'plan-going-to',
    exclusive: true,
    re: re(`${I}${BE}\\s+${ADV}(?:going to|gonna|planning to|planning on|about to|hoping to|aiming to|intending to)\\s+${OBJ}`),
    make: plan('{S} plans to {O}'),
  },
  {
    name: 'plan-verb',
    exclusive: true,
    re: re(`${I}\\s+${ADV}(?:plan|intend|aim|hope|'d like|would like|want)\\s+to\\s+${OBJ}`),
    make: plan('{S} plans to {O}'),
  },
  {
    name: 'plan-thinking',
    exclusive: true,
    re: re(`${I}${BE}\\s+${ADV}(?:thinking about|thinking of|considering|looking into)\\s+${OBJ}`),
    make: plan('{S} is thinking about {O}', { hedged: true }),
  },
  {
    name: 'plan-goal',
    exclusive: true,
    re: re(`^(?:yeah,?\\s+|so\\s+)?(?<obj>[\\w .+#-]+?)\\s+(?:is|are)\\s+(?:my|our)\\s+(?:main\\s+)?(?:goal|plan|aim|next step)\\b`),
    make: plan('{S} plans {O}'),
  },
  // --- changes ---
  {
    name: 'switch-from-to',
    exclusive: true,
    re: re(
      `${I}${HAVE}\\s+${ADV}(?:switched|moved|migrated|changed|transitioned|converted|went)(?:\\s+(?:over|back|all))?\\s+from\\s+(?<from>.+?)\\s+(?:over\\s+)?to\\s+${OBJ}`,
    ),
    make: (g) => change(g, g.get('from')),
  },
  {
    name: 'replace-with',
    exclusive: true,
    re: re(`${I}${HAVE}\\s+${ADV}(?:replaced|swapped)\\s+(?<from>.+?)\\s+(?:with|for)\\s+${OBJ}`),
    make: (g) => change(g, g.get('from')),
  },
  {
    name: 'switch-to',
    exclusive: true,
    re: re(`${I}${HAVE}\\s+${ADV}(?:switched|moved|migrated|changed|transitioned|converted|relocated)(?:\\s+(?:over|back|all))?\\s+to\\s+${OBJ}`),
    make: (g) => change(g, null),
  },
  {
    name: 'instead',
    exclusive: true,
    re: re(`${I}\\s+${ADV}(?:picked|chose|went with|settled on|opted for|adopted)\\s+(?<obj>.+?)\\s+instead(?:\\s+of\\s+(?<from>.+))?$`),
    make: (g) => change(g, g.get('from')),
  },
  // --- negations and stops ---
  { name: 'no-longer', exclusive: true, re: re(`${I}\\s+${ADV}no longer\\s+(?<verb>\\w+?)s?\\s+${OBJ}`), make: negVerb },
  {
    name: 'stopped',
    exclusive: true,
    re: re(`${I}${HAVE}\\s+${ADV}(?:stopped|quit|ditched|dropped|abandoned)\\s+(?:using\\s+)?${OBJ}`),
    make: pref('uses', '{S} no longer uses {O}', { isNegation: true }),
  },
  {
    name: 'gave-up',
    exclusive: true,
    re: re(`${I}${HAVE}\\s+${ADV}(?:gave|given)\\s+up\\s+(?:on\\s+)?${OBJ}`),
    make: pref('uses', '{S} gave up on {O}', { isNegation: true }),
  },
  {
    name: 'used-to-not-anymore',
    exclusive: true,
    re: re(`${I}\\s+used\\s+to\\s+(?<verb>use|like|love|enjoy)\\s+(?<obj>.+?),?\\s+but\\s+(?:not|no)\\s+(?:any ?more|longer)`),
    make: negVerb,
  },
  {
    name: 'not-a-fan',
    exclusive: true,
    re: re(`${I}${BE}\\s+${ADV}not\\s+(?:a|the)\\s+(?:big\\s+|huge\\s+)?fan\\s+of\\s+${OBJ}`),
    make: pref('likes', '{S} does not like {O}', { isNegation: true }),
  },
  {
    name: 'dont-verb',
    exclusive: true,
    re: re(
      `${I}\\s+${ADV}(?:don't|do not|never|rarely|won't|will never)\\s+${ADV}(?<verb>use|like|love|enjoy|eat|drink|want|need|trust|play|watch|own|write|touch|care for)\\s+${OBJ}`,
    ),
    make: negVerb,
  },
  {
    name: 'hate',
    exclusive: true,
    re: re(`${I}\\s+${ADV}(?:hate|dislike|can't stand|cannot stand|detest|loathe|avoid)\\s+${OBJ}`),
    make: pref('likes', '{S} does not like {O}', { isNegation: true }),
  },
  // --- preferences ---
  { name: 'fan-of', exclusive: true, re: re(`${I}${BE}\\s+${ADV}(?:a|the)\\s+(?:big\\s+|huge\\s+)?fan\\s+of\\s+${OBJ}`), make: pref('likes', '{S} likes {O}') },
  {
    name: 'prefer',
    exclusive: true,
    re: re(`${I}\\s+${ADV}prefer\\s+(?<obj>.+?)(?:\\s+(?:over|to|rather than|instead of)\\s+(?<other>.+))?$`),
    make: pref('prefers', '{S} prefers {O}'),
  },
  {
    name: 'favourite',
    exclusive: true,
    re: re(`\\b(?:my|our)\\s+(?:favou?rite|preferred|go-to)\\s+(?<what>[\\w .+#-]+?)\\s+(?:is|are|has to be)\\s+${OBJ}`),
    make: (g, t) => favourite(g, t),
  },
  { name: 'like', exclusive: true, re: re(`${I}\\s+${ADV}(?:love|like|enjoy|adore)\\s+(?!to\\b)${OBJ}`), make: pref('likes', '{S} likes {O}') },
  {
    name: 'my-tool-is',
    exclusive: true,
    re: re(
      `\\bmy\\s+(?:main\\s+|daily\\s+|current\\s+)?(?<what>shell|editor|ide|os|operating system|terminal|browser|language|database|db|laptop|distro|daily driver|stack|window manager|package manager)\\s+(?:is|are)\\s+${OBJ}`,
    ),
    make: pref('uses', '{S} uses {O}'),
  },
  {
    name: 'use',
    re: re(
      `${I}${HAVE}\\s+${ADV}(?:(?:been|am|'m|are|'re)\\s+)?(?:use|uses|using|used|write|writing|code in|coding in|program in|work with|working with|rely on|run|running)\\s+(?!to\\b)${OBJ}`,
    ),
    make: pref('uses', '{S} uses {O}', { objectKind: 'tech' }),
  },
  {
    name: 'on-tech',
    re: re(`${I}${BE}\\s+${ADV}(?:been\\s+)?(?:on|stuck on|still on|running on|all in on)\\s+${OBJ}`),
    make: pref('uses', '{S} uses {O}', { objectKind: 'tech' }),
  },
  { name: 'been-on', re: re(`${I}'ve\\s+${ADV}been\\s+(?:on|using|stuck on)\\s+${OBJ}`), make: pref('uses', '{S} uses {O}', { objectKind: 'tech' }) },
  // --- attributes ---
  {
    name: 'name',
    exclusive: true,
    re: reCs(`\\b(?:[Mm]y name is|[Mm]y name's|[Cc]all me|I'm called|I am called)\\s+(?<obj>[A-Z][\\w'-]*(?:\\s+[A-Z][\\w'-]*)?)`),
    make: attr('name', "{S}'s name is {O}", 'person'),
  },
  {
    name: 'im-name',
    re: reCs(
      `^(?:[Hh]i,?\\s+|[Hh]ello,?\\s+|[Hh]ey,?\\s+)?(?:I'm|I am)\\s+(?!${NOT_A_NAME}\\b)(?<obj>[A-Z][a-z]+)(?=\\s*(?:,|$|\\.|!|\\s+and\\b|\\s+here\\b|\\s+(?:btw|by the way|fyi)\\b))`,
    ),
    make: attr('name', "{S}'s name is {O}", 'person'),
  },
  {
    name: 'live',
    re: re(
      `${I}\\s+${ADV}(?:live|reside|am based|'m based|are based|'re based|am located|'m located|'m living|am living|'ve been living|have been living)\\s+in\\s+${OBJ}`,
    ),
    make: attr('lives_in', '{S} lives in {O}', 'place'),
  },
  { name: 'from', re: re(`${I}${BE}\\s+${ADV}(?:originally\\s+)?from\\s+${OBJ}`), make: attr('from', '{S} is from {O}', 'place') },
  { name: 'grew-up', re: re(`${I}\\s+${ADV}(?:grew up|was born|was raised)\\s+in\\s+${OBJ}`), make: attr('grew_up_in', '{S} grew up in {O}', 'place') },
  {
    name: 'work-at',
    re: re(`${I}\\s+${ADV}(?:(?:am|'m)\\s+)?(?:work|working|worked)\\s+(?:at|for)\\s+${OBJ}`),
    make: attr('works_at', '{S} works at {O}', 'organization'),
  },
  {
    name: 'work-on',
    re: re(`${I}\\s+${ADV}(?:(?:am|'m|are|'re)\\s+)?(?:work|working)\\s+on\\s+${OBJ}`),
    make: attr('works_on', '{S} works on {O}', 'project'),
  },
  {
    name: 'lead-team',
    re: re(`${I}\\s+${ADV}(?:lead|manage|run)\\s+(?:the\\s+|a\\s+)?(?<team>[\\w -]+?\\s+team)(?:\\s+at\\s+(?<org>.+))?$`),
    make: (g) => leadTeam(g),
  },
  {
    name: 'role',
    re: re(
      `${I}${BE}\\s+${ADV}(?:a|an)\\s+(?<obj>(?:[\\w+#-]+\\s+){0,3}?(?:${ROLE_HEADS}))(?:\\s+(?:at|for|with)\\s+(?<org>.+?))?(?:\\s+(?:in|from)\\s+(?<place>.+))?$`,
    ),
    make: (g) => role(g),
  },
  {
    name: 'diet',
    re: re(
      `${I}${BE}\\s+${ADV}(?:a\\s+)?(?<obj>vegetarian|vegan|pescatarian|teetotal|left-handed|right-handed|colou?r-?blind|introvert|extrovert|night owl|early bird|morning person)\\b`,
    ),
    make: attr('is_a', '{S} is {O}', 'phrase'),
  },
  { name: 'allergic', re: re(`${I}${BE}\\s+${ADV}allergic\\s+to\\s+${OBJ}`), make: attr('allergic_to', '{S} is allergic to {O}', 'free') },
  { name: 'speak', re: re(`${I}\\s+${ADV}speak\\s+${OBJ}`), make: attr('speaks', '{S} speaks {O}', 'free') },
  {
    name: 'know',
    re: re(`${I}\\s+${ADV}know\\s+(?!(?:what|that|how|why|when|where|who|if|whether|it|you)\\b)${OBJ}`),
    make: attr('knows', '{S} knows {O}', 'free'),
  },
  { name: 'learning', re: re(`${I}${BE}\\s+${ADV}(?:learning|studying)\\s+${OBJ}`), make: attr('learning', '{S} is learning {O}', 'free') },
  {
    name: 'pet',
    re: re(
      `${I}\\s+${ADV}(?:have|own)\\s+(?:a|an|one|two|three)\\s+(?<kind>dog|cat|puppy|kitten|parrot|rabbit|hamster|horse|turtle|fish)\\s+(?:named|called)\\s+${OBJ}`,
    ),
    make: attr('has_pet', '{S} has a pet named {O}', 'phrase'),
  },
  { name: 'birthday', re: re(`\\bmy\\s+birthday\\s+is\\s+(?:on\\s+)?${OBJ}`), make: attr('birthday', "{S}'s birthday is {O}", 'phrase', { timed: false }) },
  {
    name: 'project-called',
    re: re(`\\b(?:our|my)\\s+(?:main\\s+|current\\s+)?(?:project|product|app|service|tool|startup|company)\\s+is\\s+(?:called|named)\\s+${OBJ}`),
    make: attr('works_on', '{S} works on {O}', 'project'),
  },
  {
    name: 'relative-is',
    re: reCs(`\\b(?:[Mm]y|[Oo]ur)\\s+(?<rel>${REL_WORDS})\\s+is\\s+(?<obj>[A-Z][a-z]+(?:\\s+[A-Z][a-z]+)?)\\s*$`),
    make: (g) => relative(g),
  },
  // --- future with an explicit time ("next week I'm flying to Tokyo"), checked by the extractor ---
  { name: 'will', re: re(`${I}(?:'ll|\\s+will|\\s+shall)\\s+${ADV}${OBJ}`), make: plan('{S} will {O}', { predicate: 'plans_to' }) },
  {
    name: 'progressive',
    re: re(`${I}${BE}\\s+${ADV}(?<obj>(?!going\\b|thinking\\b|planning\\b|learning\\b|working\\b|using\\b|living\\b|based\\b)\\w+ing\\b.*)`),
    make: plan('{S} is {O}'),
  },
  // --- past events ---
  {
    name: 'event',
    re: re(
      `${I}\\s+${ADV}(?<verb>(?!(?:used|liked|loved|preferred|switched|moved|stopped|replaced|need|wanted|tried|started|learned|decided|needed)\\b)(?:\\w+ed|${PAST_IRREGULAR}))(?!\\s+to\\b)\\s+${OBJ}`,
    ),
    make: (g) => event(g),
  },
];

function change(g: Groups, from: Range | null): Draft[] {
  const object = g.get('obj');
  if (!object) return [];
  return [
    base({
      factType: 'preference',
      predicate: 'uses',
      object,
      template: from ? '{S} switched from {R} to {O}' : '{S} switched to {O}',
      replaces: from,
      isChange: true,
    }),
  ];
}

function favourite(g: Groups, _text: string): Draft[] {
  const object = g.get('obj');
  const what = g.get('what')?.text ?? 'thing';
  return object ? [base({ factType: 'preference', predicate: 'prefers', object, template: `{S}'s favourite ${what} is {O}` })] : [];
}

function leadTeam(g: Groups): Draft[] {
  const team = g.get('team');
  const org = g.get('org');
  const out: Draft[] = [];
  if (team) out.push(base({ factType: 'attribute', predicate: 'role', object: team, template: '{S} leads the {O}', objectKind: 'phrase' }));
  if (org) out.push(base({ factType: 'attribute', predicate: 'works_at', object: org, template: '{S} works at {O}', objectKind: 'organization' }));
  return out;
}

function role(g: Groups): Draft[] {
  const object = g.get('obj');
  const org = g.get('org');
  const place = g.get('place');
  const out: Draft[] = [];
  if (object) out.push(base({ factType: 'attribute', predicate: 'role', object, template: '{S} is a {O}', objectKind: 'phrase' }));
  if (org) out.push(base({ factType: 'attribute', predicate: 'works_at', object: org, template: '{S} works at {O}', objectKind: 'organization' }));
  if (place) out.push(base({ factType: 'attribute', predicate: 'lives_in', object: place, template: '{S} lives in {O}', objectKind: 'place' }));
  return out;
}

function relative(g: Groups): Draft[] {
  const object = g.get('obj');
  const rel = g.get('rel')?.text.toLowerCase() ?? 'friend';
  return object ? [base({ factType: 'relationship', predicate: relationPredicate(rel), object, template: `{S}'s ${rel} is {O}`, objectKind: 'person' })] : [];
}

function event(g: Groups): Draft[] {
  const object = g.get('obj');
  const verb = g.get('verb');
  if (!object || !verb) return [];
  return [base({ factType: 'event', predicate: verb.text.toLowerCase(), object, template: `{S} ${verb.text.toLowerCase()} {O}`, objectKind: 'phrase' })];
}

/** Runs the rules over one clause's text; returns the drafts and the names of the rules that fired. */
export function applyRules(text: string): Array<{ rule: string; draft: Draft }> {
  const out: Array<{ rule: string; draft: Draft }> = [];
  for (const rule of RULES) {
    const m = rule.re.exec(text);
    if (!m) continue;
    const groups: Groups = {
      get(name) {
        const span = m.indices?.groups?.[name];
        const value = m.groups?.[name];
        if (!span || value === undefined) return null;
        return { text: value, start: span[0], end: span[1] };
      },
    };
    const drafts = rule.make(groups, text);
    const subj = m.groups?.['subj']?.toLowerCase();
    for (const d of drafts) out.push({ rule: rule.name, draft: subj === 'we' ? { ...d, template: d.template } : d });
    if (drafts.length > 0 && rule.exclusive) break;
  }
  return out;
}

export const HEDGES =
  /\b(?:I think|I guess|I believe|I suppose|probably|maybe|perhaps|might|I'm not sure|not sure|kind of|sort of|sometimes|I'd say|if I had to pick)\b/i;
