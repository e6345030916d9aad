import { findTech } from '../../silver/vocabulary/gazetteer';
import type { Draft, ObjectKind, Range } from './patterns';

/** A few words the object of a rule may be replaced by; resolved by coreference, kept as written. */
export const REFERRING =
  /^(?:it|them|him|her|they|(?:the|our|my)\s+(?:database|databases|db|datastore|warehouse|editor|ide|shell|terminal|browser|os|distro|cache|queue|broker|language|framework|library|service|app|application|project|product|platform|tool|api|system|repo|repository|codebase|backend|frontend|site|website|pipeline|company|employer|city))$/i;

const CONNECTOR = /\s+(?:because|so that|so|when|while|which|who|that|though|although|if|unless|whereas|until|but|since(?!\s+(?:19|20)\d\d))\b/i;
const PHRASE_CONNECTOR = /\s+(?:because|so that|when|while|though|although|if|unless|whereas|until|but)\b/i;
const NAME_CUT = /\s*[,(]|\s+(?:with|for|where|and|who|which|on|at|as)\s+/i;
const TRAILING =
  /\s+(?:for\s+.+|at work|a lot|in general|every\s+\w+|btw|by the way|too|as well|daily|internally|locally|over\s+.+|on\s+(?:my|our|the|a)\s+.+|all the time|most of the time|exclusively|only|personally|anyway|though|,?\s*if I had to pick)$/i;
const LEADING =
  /^(?:the|a|an|some|mostly|mainly|primarily|especially|particularly|notably|specifically|including|such as|in particular|above all|our|my|their|his|her|all|any|also|only|just|both|either|really|even|quite|very)\s+/i;
const PARTICLE_ONLY = /^(?:back|up|out|off|in|on|over|away|down|around|along|through|again|already|yet|here|there)$/i;
const MAX_WORDS: Record<ObjectKind, number> = { tech: 4, free: 6, place: 5, organization: 6, project: 5, person: 3, phrase: 14 };

/** Trims an object phrase to the value it names: cut at connectors and times, drop qualifiers. */
export function cleanObject(range: Range, text: string, times: ReadonlyArray<[number, number]>, kind: ObjectKind): Range | null {
  let start = range.start;
  let end = range.end;
  const cut = (re: RegExp) => {
    const m = re.exec(text.slice(start, end));
    if (m && m.index > 0) end = start + m.index;
  };
  cut(kind === 'phrase' ? PHRASE_CONNECTOR : CONNECTOR);
  if (kind === 'phrase') cut(/\s+by\s+/i);
  if (kind === 'place' || kind === 'organization' || kind === 'project' || kind === 'person') cut(NAME_CUT);
  if (kind === 'organization') cut(/\s+in\s+/i);
  for (const [a, b] of [...times].sort((x, y) => x[0] - y[0])) {
    if (b <= start || a >= end) continue;
    if (a <= start) start = Math.min(end, b);
    else end = a;
  }
  let s = text.slice(start, end);
  // Leading and trailing noise, repeated until stable.
  for (;;) {
    const before = s;
    const lead = kind === 'phrase' ? null : LEADING.exec(s);
    if (lead && !REFERRING.test(s)) {
      start += lead[0].length;
      s = s.slice(lead[0].length);
    }
    const trail = kind === 'phrase' ? /[\s,;:.!]+$/.exec(s) : (TRAILING.exec(s) ?? /[\s,;:.!'"]+$/.exec(s));
    if (trail && trail.index > 0) {
      s = s.slice(0, trail.index);
      end = start + s.length;
    }
    if (s === before) break;
  }
  const lead = /^[\s,;:'"]+/.exec(s);
  if (lead) {
    start += lead[0].length;
    s = s.slice(lead[0].length);
  }
  let words = s.split(/\s+/).filter(Boolean).length;
  // A plan or event too long to be one value loses its trailing relative clause first ("build a
  // home for kids who haven't had one before" → "build a home for kids"), not the whole fact.
  // Then a clause joined after a comma or a dash ("starting a community project regarding
  // infrastructure, so maybe we can work together …" → "starting a community project regarding
  // infrastructure"), then whatever follows a comma ("one of my trophies from a dance contest, nice
  // reminder of …").
  for (const tail of [RELATIVE_TAIL, CLAUSE_TAIL, /,\s+/]) {
    const m = kind === 'phrase' && words > MAX_WORDS[kind] ? tail.exec(s) : null;
    if (!m || m.index === 0) continue;
    s = s.slice(0, m.index).replace(/[\s,;:]+$/, '');
    end = start + s.length;
    words = s.split(/\s+/).filter(Boolean).length;
  }
  if (words === 0 || words > MAX_WORDS[kind]) return null;
  // "the guidebook I bought back in march": a particle left alone is the verb's, not a thing.
  if (PARTICLE_ONLY.test(s)) return null;
  return { text: s, start, end: start + s.length };
}

const RELATIVE_TAIL = /,?\s+(?:who|whom|which|where)\s/i;
const CLAUSE_TAIL = /,\s+(?:so|and|but|plus|as|because|since)\s|\s+[-\u2013\u2014]+\s+|\s*;\s*/i;

/** What opens a clause rather than a list item: a conjunction or connector (not "so much", an amount). */
const ITEM_CLAUSE =
  /^(?:so(?!\s+(?:much|many|few|little|far|long)\b)|but|because|cause|cuz|when|while|which|who|that|though|although|if|unless|whereas|until|since|then|now)\b/i;

const LIST_SEP = /\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&|as well as|plus)\s+/gi;

/** The values a draft's object names: one phrase, or list items and gazetteer names. */
export function splitItems(draft: Draft, text: string, times: ReadonlyArray<[number, number]>): Range[] {
  const kind = draft.objectKind;
  const whole = cleanObject(draft.object, text, times, kind === 'tech' || kind === 'free' ? 'phrase' : kind);
  if (!whole) return [];
  if (kind !== 'tech' && kind !== 'free') return [whole];
  const parts: Range[] = [];
  let from = 0;
  LIST_SEP.lastIndex = 0;
  for (let m = LIST_SEP.exec(whole.text); m; m = LIST_SEP.exec(whole.text)) {
    parts.push({ text: whole.text.slice(from, m.index), start: whole.start + from, end: whole.start + m.index });
    from = m.index + m[0].length;
  }
  parts.push({ text: whole.text.slice(from), start: whole.start + from, end: whole.end });
  const items: Range[] = [];
  for (const part of parts) {
    if (part.text.trim().length === 0) continue;
    // "peanuts, so be careful with recipes": a clause after the list ends it; it is no item.
    if (ITEM_CLAUSE.test(part.text.trim())) break;
    const hits = findTech(part.text, true);
    if (hits.length > 0) {
      for (const h of hits) items.push({ text: h.text, start: part.start + h.start, end: part.start + h.end });
      continue;
    }
    const cleaned = cleanObject(part, text, times, kind);
    if (!cleaned) continue;
    if (kind === 'tech' && !REFERRING.test(cleaned.text) && !/^[A-Z]/.test(cleaned.text)) continue;
    items.push(cleaned);
  }
  return items;
}
