import type { FactType } from '../../silver/ontology';
import { REL_WORDS } from './pattern-words';
import { base, Draft, OBJ, ObjectKind, Range, re } from './patterns';

/** Third-person rules: "<NP> depends on X", "<NP> is written in X", "<NP> works at X". */
export interface ThirdPersonDraft extends Draft {
  subject: Range;
}

const LEAD_IN = '^(?:(?:and|but|also|so|yes|yeah|well|ok|okay|plus|then)\\b,?\\s+)*';
const NP = '(?<np>(?:(?:my|our|the|their|his|her)\\s+)?[\\w.+#-]+(?:\\s+[\\w.+#-]+){0,3}?|it|they|he|she)';
const REL_NP = `(?:(?:my|our)\\s+(?<rel>${REL_WORDS})\\s+(?<relname>[A-Z][a-z]+))`;

const THIRD: ReadonlyArray<{ name: string; re: RegExp; predicate: string; factType: FactType; template: string; kind: ObjectKind }> = [
  {
    name: 'depends-on',
    re: re(`${LEAD_IN}${NP}(?:'s|\\s+is|\\s+are)?\\s+(?:also\\s+)?(?:depends?|relies|rely|built)\\s+on\\s+${OBJ}`),
    predicate: 'depends_on',
    factType: 'relationship',
    template: '{S} depends on {O}',
    kind: 'tech',
  },
  {
    name: 'written-in',
    re: re(`${LEAD_IN}${NP}(?:'s|\\s+is|\\s+are|\\s+was)\\s+(?:written|built|implemented|made|developed|powered)\\s+(?:in|with|on|using|by)\\s+${OBJ}`),
    predicate: 'uses',
    factType: 'relationship',
    template: '{S} is built with {O}',
    kind: 'tech',
  },
  {
    name: 'runs-on',
    re: re(`${LEAD_IN}${NP}\\s+(?:runs|run|is running|are running|is hosted|is deployed|lives)\\s+on\\s+${OBJ}`),
    predicate: 'runs_on',
    factType: 'relationship',
    template: '{S} runs on {O}',
    kind: 'tech',
  },
  {
    name: 'uses',
    re: re(`${LEAD_IN}${NP}\\s+(?:also\\s+)?(?:uses|use)\\s+${OBJ}`),
    predicate: 'uses',
    factType: 'relationship',
    template: '{S} uses {O}',
    kind: 'tech',
  },
  {
    name: 'works-at',
    re: re(`${LEAD_IN}(?:${REL_NP}|${NP})\\s+(?:works|worked)\\s+(?:at|for)\\s+${OBJ}`),
    predicate: 'works_at',
    factType: 'attribute',
    template: '{S} works at {O}',
    kind: 'organization',
  },
  {
    name: 'based-in',
    re: re(`${LEAD_IN}(?:${REL_NP}|${NP})(?:'s|\\s+is|\\s+are)\\s+(?:based|located)\\s+in\\s+${OBJ}`),
    predicate: 'located_in',
    factType: 'attribute',
    template: '{S} is based in {O}',
    kind: 'place',
  },
  {
    name: 'lives-in',
    re: re(`${LEAD_IN}(?:${REL_NP}|${NP})\\s+lives\\s+in\\s+${OBJ}`),
    predicate: 'lives_in',
    factType: 'attribute',
    template: '{S} lives in {O}',
    kind: 'place',
  },
  {
    name: 'is-a',
    re: re(`${LEAD_IN}(?:${REL_NP}|${NP})(?:'s|\\s+is)\\s+(?:a|an)\\s+${OBJ}`),
    predicate: 'is_a',
    factType: 'attribute',
    template: '{S} is a {O}',
    kind: 'phrase',
  },
];

export interface ThirdPersonMatch {
  rule: string;
  draft: ThirdPersonDraft;
  /** "my wife Anna": the relation word and the name, for a relationship fact about the speaker. */
  relative: { word: string; name: Range } | null;
}

export function applyThirdPerson(text: string): ThirdPersonMatch | null {
  for (const rule of THIRD) {
    const m = rule.re.exec(text);
    if (!m) continue;
    const span = (name: string): Range | null => {
      const s = m.indices?.groups?.[name];
      const v = m.groups?.[name];
      return s && v !== undefined ? { text: v, start: s[0], end: s[1] } : null;
    };
    const object = span('obj');
    const relName = span('relname');
    if (relName && !/^[A-Z]/.test(relName.text)) continue; // the rule is case-insensitive; names are not
    const subject = relName ?? span('np');
    if (!object || !subject) continue;
    if (/^(?:I|we|you|there|here|this|that|what|which|who)$/i.test(subject.text)) continue;
    const draft = base({ factType: rule.factType, predicate: rule.predicate, object, template: rule.template, objectKind: rule.kind });
    const rel = span('rel');
    return { rule: rule.name, draft: { ...draft, subject }, relative: rel && relName ? { word: rel.text, name: relName } : null };
  }
  return null;
}
