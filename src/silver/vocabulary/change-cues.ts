import { wordKey } from '../../common/word-forms';

/**
 * Words that say a belief changed or was corrected, in a fact's statement or in the sentence it
 * was read from: "I quit coffee", "we are twelve people now", "actually it's on Wednesday", "I
 * started going again", "new number: …". The offline judge reads them: a change statement replaces
 * the older fact of its topic (models/offline/rule-judge.ts). Lower-case "new" only ("New York" is
 * a name).
 */
export const CHANGE_CUES =
  /\b(?:switch(?:ed|ing)?|mov(?:ed|ing)|migrat(?:ed|ing)|replac(?:ed|ing)|no longer|any ?more|instead|now|these days|nowadays|stopp(?:ed|ing)|gave up|giving up|quit(?:ting)?|left|sold|chang(?:ed|ing)|actually|correction|corrected|again|started|took up|taken up|became|become|went|turned|updated?)\b/i;
export const NEW_CUE = /(?:^|[^\p{L}])new(?:[^\p{L}]|$)/u;

/** The text says something changed or was corrected (a change cue, or "new"). */
export function saysChange(text: string): boolean {
  return CHANGE_CUES.test(text) || NEW_CUE.test(text);
}

/**
 * Words that name no topic: a change shares a topic with an older statement by some other word.
 * The subject roles, pronouns, common verbs, time words and the change cues themselves.
 */
export const GENERIC_WORDS: ReadonlySet<string> = new Set(
  (
    'user assistant speaker i me my mine we our us you your he she they them his her their it its this that these those there here ' +
    'be is are was were been being am have has had having do does did done get got go went going goes make made use used uses ' +
    'say said tell told know think want like really just also very much many more most some any all every each one two ' +
    'now then today yesterday tomorrow day days week weeks weekend month months year years time times ago last next ' +
    'again still already ever never always often actually anymore longer new old instead only ' +
    'switch switched move moved start started stop stopped quit left sold change changed took take up went become became turned ' +
    'a an the of to in on at for with about from by as and or but not no so if than too since until till before after during'
  ).split(' '),
);

const GENERIC_KEYS: ReadonlySet<string> = new Set([...GENERIC_WORDS].map(wordKey));

/**
 * The topic of a text: its content words' keys (common/word-forms.ts, so "coffees" meets "coffee"
 * and "allergies" meets "allergic"), without the generic words above; numbers kept as written.
 */
export function topicKeys(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? [])
    .map((w) => w.replace(/'s$/, ''))
    .filter((w) => !GENERIC_WORDS.has(w) && (w.length > 2 || /\d/.test(w)))
    .map((w) => (/\d/.test(w) ? w : wordKey(w)))
    .filter((k) => !GENERIC_KEYS.has(k));
}
