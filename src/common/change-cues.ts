/**
 * Words that say a belief changed or was corrected, in a statement or the sentence it was read
 * from: "I quit coffee", "we are twelve people now", "actually it's on Wednesday", "I started
 * going again", "new number: …" (lower-case "new" only: "New York" is a name). The offline judge
 * reads them to supersede; search reads them to tell an update from a mention.
 */
export const CHANGE_CUES =
  /\b(?:switch(?:ed|ing)?|mov(?:ed|ing)|migrat(?:ed|ing)|replac(?:ed|ing)|no longer|any ?more|instead|now|these days|nowadays|stopp(?:ed|ing)|gave up|giving up|quit(?:ting)?|left|sold|chang(?:ed|ing)|actually|correction|corrected|again|started|took up|taken up|became|become|went|turned|updated?)\b/i;
export const NEW_CUE = /(?:^|[^\p{L}])new(?:[^\p{L}]|$)/u;

/** Whether a text says something changed (`CHANGE_CUES`, or lower-case "new"). */
export function saysAChange(text: string): boolean {
  return CHANGE_CUES.test(text) || NEW_CUE.test(text);
}
